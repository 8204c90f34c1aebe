import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Clock } from '../core/clock';
import type { Entry, Labels } from '../core/entry';
import { fanOut, type LogsReceiver } from '../core/receiver';

const BATCH_SIZE = 256;

/**
 * Reads a stream line by line and sends the lines as entries in batches. The next batch is read
 * only after every receiver acknowledged the previous one, so a slow pipeline slows the reading
 * instead of growing memory.
 */
export async function pumpLines(
  stream: Readable,
  labels: Labels,
  clock: Clock,
  receivers: () => readonly LogsReceiver[],
  signal: AbortSignal,
): Promise<number> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let batch: Entry[] = [];
  let sent = 0;
  const flush = async () => {
    const entries = batch;
    batch = [];
    sent += entries.length;
    await fanOut(receivers(), entries);
  };
  try {
    for await (const line of lines) {
      if (signal.aborted) break;
      batch.push({ labels: { ...labels }, line, timestamp: clock.nowNs(), structuredMetadata: [], extracted: {} });
      if (batch.length >= BATCH_SIZE) await flush();
    }
    if (batch.length > 0) await flush();
  } finally {
    lines.close();
  }
  return sent;
}
