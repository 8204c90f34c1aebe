/**
 * The write-ahead log of logs.write across reloads, in one process on the real clock:
 * logs.source.api → logs.write (wal on) → a fake Loki that takes a while to answer. A reload that
 * changes the endpoint hands its log to a new queue; nothing acknowledged may be lost and nothing
 * delivered may be sent again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WireStream } from '../../lib/loki/wire.js';
import { eventually, metricValue } from '../receivers/loki/harness.js';
import { startFakeLoki } from '../sinks/loki/fake-loki.js';
import { pushWithRetry, startInProcess } from './support.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function configText(lokiUrl: string, walDir: string, batchWait: string): string {
  return `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  forward_to = [logs.write.out.receiver]
}

logs.write "out" {
  endpoint {
    name = "loki"
    url = ${JSON.stringify(lokiUrl)}
    batch_wait = ${JSON.stringify(batchWait)}
    batch_size = "4KiB"
    min_backoff_period = "20ms"
    max_backoff_period = "100ms"
    max_backoff_retries = 0
  }
  wal {
    enabled = true
    dir = ${JSON.stringify(walDir)}
    fsync = "never"
  }
}
`;
}

function streamOf(from: number, count: number): WireStream {
  return {
    labels: '{app="reload"}',
    entries: Array.from({ length: count }, (_, k) => ({ timestampNs: BigInt(from + k + 1), line: `e${from + k}`, structuredMetadata: [] })),
  };
}

describe('logs.write wal across reloads', () => {
  it('repeats and loses nothing over 100 reloads that change the endpoint while entries flow', { timeout: 60_000 }, async () => {
    const loki = await startFakeLoki();
    cleanups.push(() => loki.close());
    // Slow answers, so a request is under way at most reloads.
    loki.answerAll({ status: 204, delayMs: 15 });
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-reload-wal-'));
    const run = await startInProcess(configText(loki.url, dir, '20ms'), 'a.alloy');
    cleanups.push(() => run.stop());
    const url = run.apiUrl('logs.source.api.in');
    let pushing = true;
    let acknowledged = 0;
    const client = (async () => {
      for (let from = 0; pushing; from += 10) {
        const outcome = await pushWithRetry(url, [streamOf(from, 10)], { retryMs: 10, deadline: Date.now() + 20_000 });
        expect(outcome.status).toBe(204);
        acknowledged += 10;
      }
    })();
    const reloads = 100;
    for (let i = 0; i < reloads; i++) {
      await new Promise((r) => setTimeout(r, 15));
      expect(await run.graph.reload(configText(loki.url, dir, i % 2 === 0 ? '25ms' : '20ms'), 'a.alloy')).toEqual([]);
    }
    pushing = false;
    await client;
    await eventually(() => loki.lines().length >= acknowledged, 20_000, 'every acknowledged entry');
    const lines = loki.lines();
    const repeats = lines.length - new Set(lines).size;
    expect({ acknowledged: lines.length, repeats }).toEqual({ acknowledged, repeats: 0 });
    expect(lines).toEqual(Array.from({ length: acknowledged }, (_, i) => `e${i}`));
    expect(await metricValue(run.registry, 'logs_write_dropped_entries_total')).toBe(0);
  });
});
