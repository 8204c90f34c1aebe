import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import type { Clock } from '../core/clock.js';
import type { Entry, Labels } from '../core/entry.js';
import { fanOut, type LogsReceiver } from '../core/receiver.js';
import { TextLineSplitter } from '../lib/text-lines.js';

const BATCH_SIZE = 256;

/**
 * Reads a stream line by line and sends the lines as entries: every complete line of a chunk as
 * soon as the chunk arrives (in batches of at most 256), so an interactive writer sees its lines
 * forwarded at once. The next chunk is read only after every receiver acknowledged the previous
 * lines, so a slow pipeline slows the reading instead of growing memory.
 *
 * A line longer than a chunk is joined once, at its end, so time stays linear in its length.
 * At the end of the stream the last line is sent even without a newline. When `signal` aborts,
 * reading stops, and the lines already read (an unfinished one included, since a stream cannot be
 * read again) are still sent before the returned promise resolves with the number of lines sent.
 */
export async function pumpLines(
  stream: Readable,
  labels: Labels,
  clock: Clock,
  receivers: () => readonly LogsReceiver[],
  signal: AbortSignal,
  /** Told of each batch taken over: its lines and their bytes (newlines included). */
  onSent?: (lines: number, bytes: number) => void,
): Promise<number> {
  const decoder = new StringDecoder('utf8');
  const splitter = new TextLineSplitter(false);
  let sent = 0;
  const send = async (lines: readonly string[]) => {
    for (let i = 0; i < lines.length; i += BATCH_SIZE) {
      const entries: Entry[] = lines
        .slice(i, i + BATCH_SIZE)
        .map((line) => ({ labels: { ...labels }, line, timestamp: clock.nowNs(), structuredMetadata: [], extracted: {} }));
      await fanOut(receivers(), entries);
      sent += entries.length;
      if (onSent)
        onSent(
          entries.length,
          entries.reduce((n, e) => n + Buffer.byteLength(e.line) + 1, 0),
        );
    }
  };
  for (;;) {
    const chunk = await nextChunk(stream, signal);
    if (chunk === null) break;
    const lines: string[] = [];
    splitter.push(typeof chunk === 'string' ? chunk : decoder.write(chunk), lines);
    await send(lines);
  }
  const lines: string[] = [];
  splitter.push(decoder.end(), lines);
  const rest = splitter.end();
  if (rest !== undefined) lines.push(rest);
  await send(lines);
  return sent;
}

/** The next chunk of a paused stream; null at its end or once `signal` aborts. */
function nextChunk(stream: Readable, signal: AbortSignal): Promise<Buffer | string | null> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(null);
    const chunk = stream.read() as Buffer | string | null;
    if (chunk !== null) return resolve(chunk);
    if (stream.readableEnded || stream.destroyed) return resolve(null);
    const done = (value: Buffer | string | null, err?: Error) => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('close', onEnd);
      stream.off('error', onError);
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(value);
    };
    const onReadable = () => {
      const next = stream.read() as Buffer | string | null;
      if (next !== null) done(next);
      else if (stream.readableEnded) done(null);
    };
    const onEnd = () => done(null);
    const onError = (err: Error) => done(null, err);
    const onAbort = () => done(null);
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('close', onEnd);
    stream.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
