import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue } from '../receivers/loki/harness.js';
import { startFakeLoki, type FakeLoki } from '../sinks/loki/fake-loki.js';
import { forwarderConfig } from './configs.js';
import { criStream, pushWithRetry, spawnRun, startInProcess, type ChildRun } from './support.js';

const BASE_NS = 1_714_557_600_000_000_000n;

/** What the endpoint accepted, as `pod:seq` in arrival order, per stream. */
function receivedByStream(loki: FakeLoki): Map<string, number[]> {
  const streams = new Map<string, number[]>();
  for (const push of loki.accepted) {
    for (const stream of push.streams) {
      const key = JSON.stringify(stream.labels);
      const seqs = streams.get(key) ?? [];
      for (const entry of stream.entries) seqs.push((JSON.parse(entry.line) as { seq: number }).seq);
      streams.set(key, seqs);
    }
  }
  return streams;
}

function receivedIds(loki: FakeLoki): string[] {
  return loki.accepted.flatMap((p) =>
    p.streams.flatMap((s) =>
      s.entries.map((e) => {
        const body = JSON.parse(e.line) as { seq: number; pod: string };
        return `${body.pod}:${body.seq}`;
      }),
    ),
  );
}

function isAscending(values: readonly number[]): boolean {
  return values.every((v, i) => i === 0 || v > values[i - 1]!);
}

/** `workers` clients, each pushing its own pod's entries in order, `perPush` at a time. */
async function pushAll(url: string, options: { workers: number; perWorker: number; perPush: number }): Promise<void> {
  await Promise.all(
    Array.from({ length: options.workers }, async (_, w) => {
      for (let from = 0; from < options.perWorker; from += options.perPush) {
        const outcome = await pushWithRetry(url, [criStream(`pod-${w}`, from, options.perPush, BASE_NS)], {
          retryMs: 50,
          deadline: Date.now() + 60_000,
        });
        expect(outcome.status).toBe(204);
      }
    }),
  );
}

describe('faults between A and B', () => {
  it('keeps everything while B is down, pushing back to the client with 429, and delivers once B is back', {
    timeout: 60_000,
  }, async () => {
    const loki = await startFakeLoki();
    await loki.down();
    const a = await startInProcess(
      forwarderConfig(loki.url, { api: 'max_pending_size = "160KiB"', writeBlocks: 'queue_config {\n      capacity = "32KiB"\n    }' }),
      'a.alloy',
    );
    try {
      // Each push (200 entries, about 28 KiB, about 140 KiB as decoded entries) nearly fills A's
      // bounds on its own.
      const pushing = pushAll(a.apiUrl('logs.source.api.in'), { workers: 3, perWorker: 1000, perPush: 200 });
      await new Promise((r) => setTimeout(r, 1500));
      // While B is down, A holds at most its bounds and refuses the rest.
      expect(await metricValue(a.registry, 'logs_source_api_rejected_requests_total', { reason: 'queue_full' })).toBeGreaterThan(0);
      expect(await metricValue(a.registry, 'logs_write_queued_bytes')).toBeLessThanOrEqual(64 * 1024);
      expect(await metricValue(a.registry, 'logs_write_batch_retries_total')).toBeGreaterThan(0);
      await loki.up();
      await pushing;
    } finally {
      await a.stop();
      await loki.close();
    }
    const ids = receivedIds(loki);
    expect(ids.length).toBe(3000);
    expect(new Set(ids).size).toBe(3000);
    for (const seqs of receivedByStream(loki).values()) expect(isAscending(seqs)).toBe(true);
    expect(await metricValue(a.registry, 'logs_write_dropped_entries_total')).toBe(0);
  });

  it('backs off on 500 and honours Retry-After on 429, losing nothing', { timeout: 30_000 }, async () => {
    const loki = await startFakeLoki();
    loki.script({ status: 500 }, { status: 500 }, { status: 429, headers: { 'Retry-After': '1' } });
    const a = await startInProcess(forwarderConfig(loki.url, { write: { max_backoff_period: '"2s"' } }), 'a.alloy');
    try {
      await pushAll(a.apiUrl('logs.source.api.in'), { workers: 1, perWorker: 100, perPush: 100 });
    } finally {
      await a.stop();
      await loki.close();
    }
    expect(loki.arrivals.map((r) => r.status)).toEqual([500, 500, 429, 204]);
    const gaps = loki.arrivals.slice(1).map((r, i) => r.at - loki.arrivals[i]!.at);
    // 50 ms, then at least 100 ms (doubled), then the 1 s the endpoint asked for.
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
    expect(gaps[2]).toBeGreaterThanOrEqual(990);
    expect(receivedIds(loki).length).toBe(100);
    expect(await metricValue(a.registry, 'logs_write_batch_retries_total')).toBe(3);
  });
});

describe('rivulet run as a child process', () => {
  let loki: FakeLoki;
  let run: ChildRun;

  beforeAll(async () => {
    loki = await startFakeLoki();
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-sigterm-'));
    const config = join(dir, 'a.alloy');
    writeFileSync(
      config,
      forwarderConfig(loki.url, {
        write: { batch_wait: '"300ms"', batch_size: '"64KiB"' },
        extraComponents: 'logs.source.stdin "in" {\n  forward_to = [logs.process.k8s.receiver]\n}\n',
      }),
    );
    run = await spawnRun(config, ['logs.source.api.in']);
  }, 90_000);

  afterAll(async () => {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await loki.close();
  });

  it('forwards standard input to its end and stays healthy', async () => {
    const lines = [0, 1, 2].map((seq) => criStream('stdin', seq, 1, BASE_NS).entries[0]!.line);
    run.child.stdin!.end(lines.join('\n') + '\n');
    const deadline = Date.now() + 10_000;
    while (!receivedIds(loki).includes('stdin:2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(receivedIds(loki).filter((id) => id.startsWith('stdin:'))).toEqual(['stdin:0', 'stdin:1', 'stdin:2']);
    const components = (await (await fetch(`${run.runUrl}/api/v0/components`)).json()) as Array<{ id: string; health: { state: string } }>;
    expect(components.find((c) => c.id === 'logs.source.stdin.in')?.health.state).toBe('healthy');
    expect(run.stderr()).toContain('msg="finished reading stdin" component="logs.source.stdin.in" lines=3');
  });

  it('delivers every acknowledged entry when SIGTERM arrives mid-stream', { timeout: 60_000 }, async () => {
    // B is slow, so A holds queued batches when the signal arrives.
    loki.script(...Array.from({ length: 1000 }, () => ({ status: 204, delayMs: 20 })));
    const url = run.apiUrls.get('logs.source.api.in')!;
    const acknowledged: string[] = [];
    let stop = false;
    const clients = Array.from({ length: 3 }, async (_, w) => {
      for (let from = 0; !stop; from += 100) {
        const stream = criStream(`term-${w}`, from, 100, BASE_NS);
        const outcome = await pushWithRetry(url, [stream], { retry: false });
        if (outcome.status !== 204) return;
        for (let k = 0; k < 100; k++) acknowledged.push(`term-${w}:${from + k}`);
      }
    });
    while (acknowledged.length < 3000) await new Promise((r) => setTimeout(r, 10));
    const receivedAtSignal = receivedIds(loki).length;
    run.child.kill('SIGTERM');
    const code = await run.exited;
    stop = true;
    await Promise.all(clients);
    expect(code).toBe(0);
    const received = new Set(receivedIds(loki));
    const missing = acknowledged.filter((id) => !received.has(id));
    expect(missing).toEqual([]);
    // The drain really carried entries that were still inside A when the signal came.
    expect(received.size).toBeGreaterThan(receivedAtSignal);
    expect(run.stderr()).not.toContain('dropped entries');
    for (const seqs of receivedByStream(loki).values()) expect(isAscending(seqs)).toBe(true);
  });
});
