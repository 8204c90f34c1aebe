/**
 * Acknowledged delivery across crashes and stops: `rivulet run` as a child process with
 * logs.source.api → logs.write (write-ahead log on) → a fake Loki that fails for a while. Every
 * entry answered 204 must reach the endpoint at least once, after a SIGKILL and a restart, and
 * after a SIGTERM whose drain ran out during an outage.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WireStream } from '../../lib/loki/wire.js';
import { protoBody } from '../receivers/loki/harness.js';
import { startFakeLoki, type FakeLoki } from '../sinks/loki/fake-loki.js';
import { spawnRun, type ChildRun } from './support.js';

const BASE_NS = 1_714_557_600_000_000_000n;
const WORKERS = 4;
const PER_PUSH = 100;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function configText(lokiUrl: string, walDir: string, endpointExtra = ''): string {
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
    batch_wait = "50ms"
    batch_size = "64KiB"
    min_backoff_period = "50ms"
    max_backoff_period = "200ms"
    max_backoff_retries = 0
    ${endpointExtra}
  }
  wal {
    enabled = true
    dir = ${JSON.stringify(walDir)}
  }
}
`;
}

async function start(config: string): Promise<ChildRun> {
  const run = await spawnRun(config, ['logs.source.api.in']);
  cleanups.push(() => {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  });
  return run;
}

async function fakeLoki(): Promise<FakeLoki> {
  const loki = await startFakeLoki();
  cleanups.push(() => loki.close());
  return loki;
}

function streamOf(worker: number, from: number, count: number): WireStream {
  return {
    labels: `{worker="w${worker}"}`,
    entries: Array.from({ length: count }, (_, k) => ({
      timestampNs: BASE_NS + BigInt(from + k),
      line: `w${worker}:${from + k}`,
      structuredMetadata: [],
    })),
  };
}

/** What the clients pushed and which entries were answered 204. */
interface Pushing {
  readonly acknowledged: Set<string>;
  /** Per worker: the next entry to push. */
  readonly next: number[];
}

/**
 * Each worker pushes its own entries in order, PER_PUSH at a time, up to `perWorker`, retrying a
 * 429 or 503; it stops at the first push that gets no answer (the process is gone) or once `stop`
 * says so.
 */
async function pushFrom(url: string, state: Pushing, perWorker: number, stop: () => boolean): Promise<void> {
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      while (state.next[w]! < perWorker && !stop()) {
        const from = state.next[w]!;
        const count = Math.min(PER_PUSH, perWorker - from);
        let status = -1;
        try {
          const res = await fetch(`${url}/loki/api/v1/push`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-protobuf' },
            body: protoBody([streamOf(w, from, count)]) as Uint8Array<ArrayBuffer>,
          });
          await res.arrayBuffer();
          status = res.status;
        } catch {
          return;
        }
        if (status === 204) {
          for (let k = 0; k < count; k++) state.acknowledged.add(`w${w}:${from + k}`);
          state.next[w] = from + count;
        } else if (status === 429 || status === 503) {
          await new Promise((r) => setTimeout(r, 50));
        } else {
          throw new Error(`push answered ${status}`);
        }
      }
    }),
  );
}

function received(loki: FakeLoki): string[] {
  return loki.accepted.flatMap((p) => p.streams.flatMap((s) => s.entries.map((e) => e.line)));
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('acknowledged delivery with the write-ahead log on', () => {
  it('loses no acknowledged entry when killed with SIGKILL while the endpoint answers 429, then restarted', {
    timeout: 150_000,
  }, async () => {
    const total = 20_000;
    const perWorker = total / WORKERS;
    const loki = await fakeLoki();
    loki.answerAll({ status: 429, headers: { 'Retry-After': '1' } });
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-durable-'));
    const config = join(dir, 'run.alloy');
    writeFileSync(config, configText(loki.url, join(dir, 'wal')));
    const state: Pushing = { acknowledged: new Set(), next: Array.from({ length: WORKERS }, () => 0) };

    const first = await start(config);
    let killed = false;
    const pushing = pushFrom(first.apiUrls.get('logs.source.api.in')!, state, perWorker, () => killed);
    pushing.catch(() => {}); // Awaited below; a failure must not go unhandled meanwhile.
    await waitFor(() => state.acknowledged.size >= total / 2, 60_000, 'half the entries to be acknowledged');
    first.child.kill('SIGKILL');
    killed = true;
    await first.exited;
    await pushing;
    const acknowledgedBeforeKill = state.acknowledged.size;
    // Pushes cut off by the kill got no answer, so the clients push those entries again; the
    // first attempt may have reached the log already.
    const unanswered = new Set(state.next.flatMap((from, w) => Array.from({ length: PER_PUSH }, (_, k) => `w${w}:${from + k}`)));
    expect(received(loki)).toEqual([]);

    const second = await start(config);
    await pushFrom(second.apiUrls.get('logs.source.api.in')!, state, perWorker, () => false);
    expect(state.acknowledged.size).toBe(total);
    loki.answerAll(undefined);
    const arrived = new Set<string>();
    await waitFor(
      () => {
        for (const line of received(loki).slice(arrived.size)) arrived.add(line);
        return [...state.acknowledged].every((id) => arrived.has(id));
      },
      60_000,
      'every acknowledged entry',
    );
    const lines = received(loki);
    const missing = [...state.acknowledged].filter((id) => !arrived.has(id));
    expect(missing).toEqual([]);
    expect(acknowledgedBeforeKill).toBeGreaterThanOrEqual(total / 2);
    // Nothing was delivered before the kill, so the only repeats are the unanswered pushes.
    const seen = new Set<string>();
    const repeated = lines.filter((line) => seen.size === seen.add(line).size);
    expect(repeated.filter((line) => !unanswered.has(line))).toEqual([]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('repeats at most the batch in flight when killed while delivering, and keeps each stream in order', { timeout: 150_000 }, async () => {
    const total = 20_000;
    const perWorker = total / WORKERS;
    const batchBytes = 4096;
    const loki = await fakeLoki();
    loki.answerAll({ status: 204, delayMs: 30 });
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-durable-'));
    const config = join(dir, 'run.alloy');
    writeFileSync(config, configText(loki.url, join(dir, 'wal')).replace('batch_size = "64KiB"', `batch_size = "${batchBytes}B"`));
    const state: Pushing = { acknowledged: new Set(), next: Array.from({ length: WORKERS }, () => 0) };

    const first = await start(config);
    let killed = false;
    const pushing = pushFrom(first.apiUrls.get('logs.source.api.in')!, state, perWorker, () => killed);
    pushing.catch(() => {});
    await waitFor(() => state.acknowledged.size >= total / 2 && received(loki).length > 0, 60_000, 'half the entries, some delivered');
    first.child.kill('SIGKILL');
    killed = true;
    await first.exited;
    await pushing;
    const deliveredBeforeKill = received(loki).length;
    const unanswered = new Set(state.next.flatMap((from, w) => Array.from({ length: PER_PUSH }, (_, k) => `w${w}:${from + k}`)));

    const second = await start(config);
    await pushFrom(second.apiUrls.get('logs.source.api.in')!, state, perWorker, () => false);
    await waitFor(() => new Set(received(loki)).size >= state.acknowledged.size, 60_000, 'every acknowledged entry');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const lines = received(loki);
    const arrived = new Set(lines);
    expect([...state.acknowledged].filter((id) => !arrived.has(id))).toEqual([]);
    expect(deliveredBeforeKill).toBeGreaterThan(0);
    const seen = new Set<string>();
    const repeated = lines.filter((line) => seen.size === seen.add(line).size);
    const fromTheLog = repeated.filter((line) => !unanswered.has(line));
    expect(fromTheLog.reduce((sum, line) => sum + line.length, 0)).toBeLessThanOrEqual(batchBytes);
    for (let w = 0; w < WORKERS; w++) {
      const firsts = [...arrived].filter((line) => line.startsWith(`w${w}:`)).map((line) => Number(line.slice(line.indexOf(':') + 1)));
      expect(firsts.every((seq, i) => i === 0 || seq > firsts[i - 1]!)).toBe(true);
    }
  });

  it('loses no acknowledged entry when SIGTERM comes during a 500 outage and the drain runs out', { timeout: 120_000 }, async () => {
    const total = 8_000;
    const loki = await fakeLoki();
    loki.answerAll({ status: 500 });
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-durable-'));
    const config = join(dir, 'run.alloy');
    writeFileSync(config, configText(loki.url, join(dir, 'wal'), 'queue_config {\n      drain_timeout = "1s"\n    }'));
    const state: Pushing = { acknowledged: new Set(), next: Array.from({ length: WORKERS }, () => 0) };

    const first = await start(config);
    await pushFrom(first.apiUrls.get('logs.source.api.in')!, state, total / WORKERS, () => false);
    expect(state.acknowledged.size).toBe(total);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.stderr()).toContain('entries not delivered before drain_timeout stay in the write-ahead log for the next start');
    expect(first.stderr()).not.toContain('dropped entries');
    expect(received(loki)).toEqual([]);

    loki.answerAll(undefined);
    const second = await start(config);
    await waitFor(() => received(loki).length >= total, 60_000, 'the replay');
    const lines = received(loki);
    expect(new Set(lines)).toEqual(state.acknowledged);
    expect(lines.length).toBe(total);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
