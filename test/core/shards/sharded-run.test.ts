import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireStream } from '../../../lib/loki/wire.js';
import { forwarderConfig } from '../../e2e/configs.js';
import { criStream } from '../../e2e/support.js';
import { startFakeLoki, type FakeLoki } from '../../sinks/loki/fake-loki.js';
import { push, runConfig, type CommandRun } from './support.js';

const BASE_NS = 1_700_000_000_000_000_000n;
const API = 'logs.source.api.in';

/** What the fake Loki took, stream by stream (labels as sorted JSON), each stream's lines in arrival order. */
function byStream(loki: FakeLoki): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const pushed of loki.accepted) {
    for (const stream of pushed.streams) {
      const labels = stream.labels ?? {};
      const key = JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))));
      (out[key] ??= []).push(...stream.entries.map((e) => `${e.timestampNs}\t${e.line}\t${JSON.stringify(e.structuredMetadata)}`));
    }
  }
  return out;
}

/** The series of /metrics whose names start with one of `prefixes`, sorted. */
async function series(run: CommandRun, prefixes: readonly string[]): Promise<string[]> {
  const text = await (await fetch(`${run.runUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => prefixes.some((p) => line.startsWith(p)))
    .map((line) => line.replace(/host="[^"]*"/, 'host="loki"'))
    .sort();
}

async function waitFor(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Twelve pods, pushed in six sequential pushes of interleaved slices. */
function k8sPushes(): WireStream[][] {
  const pushes: WireStream[][] = [];
  for (let round = 0; round < 6; round++) {
    pushes.push(Array.from({ length: 12 }, (_, pod) => criStream(`pod-${pod}`, round * 25, 25, BASE_NS)));
  }
  return pushes;
}

/** Bodies that are refused, in whole or part, with their headers. */
const BAD_REQUESTS: Array<{ name: string; type: string; body: string; encoding?: string }> = [
  { name: 'broken JSON', type: 'application/json', body: '{"streams": [' },
  { name: 'unknown content type', type: 'text/csv', body: 'a,b' },
  {
    name: 'a stream with invalid labels',
    type: 'application/json',
    body: '{"streams":[{"stream":{"a-b":"x"},"values":[["1","x"]]},{"stream":{"app":"ok"},"values":[["1700000000000000000","fine"]]}]}',
  },
  { name: 'a gzip body that is not gzip', type: 'application/json', body: 'plain', encoding: 'gzip' },
  { name: 'an unknown encoding', type: 'application/json', body: '{}', encoding: 'br' },
];

describe('rivulet run --shards 2, beside the same run in place', () => {
  const runs: Record<'inPlace' | 'sharded', { run: CommandRun; loki: FakeLoki }> = {} as never;

  beforeAll(async () => {
    for (const [mode, flags] of [
      ['inPlace', ['--workers', '1']],
      ['sharded', ['--shards', '2']],
    ] as const) {
      const loki = await startFakeLoki();
      const run = await runConfig(forwarderConfig(loki.url, { write: { batch_wait: '"20ms"' } }), flags, [API]);
      runs[mode] = { run, loki };
    }
  }, 60_000);

  afterAll(async () => {
    for (const { run, loki } of Object.values(runs)) {
      await run.stop();
      await loki.close();
    }
  }, 60_000);

  it('delivers the k8s pipeline’s outputs as in place: every stream’s entries, labels, metadata and order', async () => {
    for (const { run, loki } of Object.values(runs)) {
      for (const streams of k8sPushes()) expect((await push(run.apiUrls.get(API)!, streams)).status).toBe(204);
      await waitFor(() => loki.lines().length === 12 * 150, 'every entry at the fake Loki');
    }
    const inPlace = byStream(runs.inPlace.loki);
    expect(Object.keys(inPlace)).toHaveLength(24);
    expect(byStream(runs.sharded.loki)).toEqual(inPlace);
  }, 60_000);

  it('answers refused pushes with the codes and texts it answers in place', async () => {
    const answers: Record<string, string[]> = { inPlace: [], sharded: [] };
    for (const [mode, { run }] of Object.entries(runs)) {
      for (const bad of BAD_REQUESTS) {
        const res = await fetch(`${run.apiUrls.get(API)}/loki/api/v1/push`, {
          method: 'POST',
          headers: { 'Content-Type': bad.type, ...(bad.encoding ? { 'Content-Encoding': bad.encoding } : {}) },
          body: bad.body,
        });
        answers[mode]!.push(`${bad.name}: ${res.status} ${(await res.text()).trim()}`);
      }
    }
    expect(answers.sharded).toEqual(answers.inPlace);
    expect(answers.inPlace!.map((a) => a.split(': ')[1]!.slice(0, 3))).toEqual(['400', '415', '400', '400', '415']);
  }, 60_000);

  it('serves on /metrics the sums of every shard’s series, equal to the in-place values', async () => {
    const prefixes = [
      'logs_source_api_entries_total',
      'logs_source_api_rejected',
      'logs_source_api_requests_total',
      'logs_write_sent_entries_total',
      'logs_write_sent_bytes_total',
    ];
    await waitFor(() => runs.sharded.loki.lines().length === runs.inPlace.loki.lines().length, 'the same deliveries');
    const inPlace = await series(runs.inPlace.run, prefixes);
    expect(inPlace.some((line) => line.startsWith('logs_source_api_entries_total') && line.endsWith(' 1801'))).toBe(true);
    expect(await series(runs.sharded.run, prefixes)).toEqual(inPlace);
  }, 30_000);
});

const MULTILINE = (pushUrl: string, extra = '') => `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  ${extra}
  forward_to = [logs.process.blocks.receiver]
}

logs.process "blocks" {
  stage.multiline {
    firstline     = "^start"
    max_wait_time = "1h"
  }
  forward_to = [logs.write.out.receiver]
}

logs.write "out" {
  endpoint {
    url = ${JSON.stringify(pushUrl)}
    batch_wait = "20ms"
  }
}
`;

function blockStreams(from: number): WireStream[] {
  return Array.from({ length: 6 }, (_, s) => ({
    labels: `{app="app-${s}"}`,
    entries: [0, 1].flatMap((b) => [
      { timestampNs: BASE_NS + BigInt(from + b * 2), line: `start ${s}.${from + b}`, structuredMetadata: [] },
      { timestampNs: BASE_NS + BigInt(from + b * 2 + 1), line: `  more ${s}.${from + b}`, structuredMetadata: [] },
    ]),
  }));
}

describe('stopping a sharded run', () => {
  it('flushes what every shard’s stages hold, as in place', async () => {
    const delivered: Record<string, Record<string, string[]>> = {};
    for (const [mode, flags] of [
      ['inPlace', ['--workers', '1']],
      ['sharded', ['--shards', '2']],
    ] as const) {
      const loki = await startFakeLoki();
      const run = await runConfig(MULTILINE(loki.url), flags, [API]);
      try {
        for (const from of [0, 10]) expect((await push(run.apiUrls.get(API)!, blockStreams(from))).status).toBe(204);
        // Each stream's last block is still open: only the earlier ones are out.
        await waitFor(() => loki.lines().length === 18, 'the closed blocks');
      } finally {
        expect(await run.stop()).toBe(0);
      }
      expect(loki.lines()).toHaveLength(24);
      delivered[mode] = byStream(loki);
      await loki.close();
    }
    expect(delivered.sharded).toEqual(delivered.inPlace);
    expect(delivered.inPlace!['{"app":"app-0"}']!.map((l) => l.split('\t')[1])).toEqual([
      'start 0.0\n  more 0.0',
      'start 0.1\n  more 0.1',
      'start 0.10\n  more 0.10',
      'start 0.11\n  more 0.11',
    ]);
  }, 90_000);
});

describe('back-pressure in a sharded run', () => {
  it('answers 429 with Retry-After once the pushes waiting on a stalled endpoint fill max_pending_size, as in place', async () => {
    const answers: Record<string, string[]> = {};
    for (const [mode, flags] of [
      ['inPlace', ['--workers', '1']],
      ['sharded', ['--shards', '2']],
    ] as const) {
      const loki = await startFakeLoki();
      // Every push to the endpoint waits: the writer's queue fills, and its senders wait.
      loki.answerAll({ status: 204, delayMs: 60_000 });
      const config = MULTILINE(loki.url, 'max_pending_size = "16KiB"\n  graceful_shutdown_timeout = "1s"').replace(
        'batch_wait = "20ms"',
        'batch_wait = "20ms"\n    queue_config {\n      capacity = "1KiB"\n      drain_timeout = "1s"\n    }',
      );
      const run = await runConfig(config, flags, [API]);
      const seen: string[] = [];
      try {
        const url = run.apiUrls.get(API)!;
        // Pushes in flight together, until one is refused.
        const inFlight: Promise<unknown>[] = [];
        for (let i = 0; i < 40 && !seen.some((s) => s.startsWith('429')); i++) {
          inFlight.push(
            push(
              url,
              blockStreams(i * 10).map((s) => ({ ...s, entries: s.entries.map((e) => ({ ...e, line: `${e.line} ${'x'.repeat(100)}` })) })),
            ).then(
              (r) => {
                if (r.status !== 204) seen.push(`${r.status} ${r.retryAfter} ${r.text.trim()}`);
              },
              () => {},
            ),
          );
          await new Promise((r) => setTimeout(r, 30));
        }
        await waitFor(() => seen.some((s) => s.startsWith('429')), 'a 429');
        loki.answerAll();
      } finally {
        await run.stop();
        await loki.close();
      }
      answers[mode] = [...new Set(seen)];
    }
    expect(answers.sharded).toEqual(['429 1 too many entries waiting to be forwarded, retry after 1s']);
    expect(answers.inPlace).toEqual(answers.sharded);
  }, 120_000);
});

describe('reloading a sharded run', () => {
  it('applies the new config on every shard, each keeping its write-ahead log in <dir>/shard-<i>', async () => {
    const loki = await startFakeLoki();
    const walDir = mkdtempSync(join(tmpdir(), 'rivulet-shards-wal-'));
    const config = (version: string) =>
      forwarderConfig(loki.url, {
        write: { batch_wait: '"20ms"' },
        extraComponents: '',
      })
        .replace(
          'stage.static_labels {\n    values = { cluster = "eu-1" }',
          `stage.static_labels {\n    values = { cluster = "${version}" }`,
        )
        .replace(/logs\.write "out" \{/, `logs.write "out" {\n  wal {\n    enabled = true\n    dir     = ${JSON.stringify(walDir)}\n  }`);
    const run = await runConfig(config('v1'), ['--shards', '2'], [API]);
    const clusters = () => new Set(loki.accepted.flatMap((p) => p.streams.map((s) => s.labels?.cluster)));
    try {
      const url = run.apiUrls.get(API)!;
      const pods = Array.from({ length: 8 }, (_, pod) => criStream(`pod-${pod}`, 0, 5, BASE_NS));
      expect((await push(url, pods)).status).toBe(204);
      await waitFor(() => loki.lines().length === 40, 'the first push at the fake Loki');
      expect(readdirSync(walDir).sort()).toEqual(['shard-0', 'shard-1']);
      writeFileSync(run.file, config('v2'));
      run.signals.emit('SIGHUP');
      await waitFor(() => run.stderr().includes('msg="config reloaded"'), 'the reload');
      expect(
        (
          await push(
            url,
            Array.from({ length: 8 }, (_, pod) => criStream(`pod-${pod}`, 5, 5, BASE_NS)),
          )
        ).status,
      ).toBe(204);
      await waitFor(() => loki.lines().length === 80, 'the second push at the fake Loki');
      expect([...clusters()].sort()).toEqual(['v1', 'v2']);
      expect(
        loki.accepted
          .flatMap((p) => p.streams)
          .filter((s) => s.labels?.cluster === 'v2')
          .flatMap((s) => s.entries),
      ).toHaveLength(40);
    } finally {
      expect(await run.stop()).toBe(0);
      await loki.close();
    }
  }, 90_000);
});

describe('a stage list that cannot be split', () => {
  it('runs on the first shard, which logs why once, and still delivers every entry', async () => {
    const loki = await startFakeLoki();
    const config = MULTILINE(loki.url).replace(
      'stage.multiline {',
      'stage.limit {\n    rate  = 100000\n    burst = 100000\n  }\n  stage.multiline {',
    );
    const run = await runConfig(config, ['--shards', '2'], [API]);
    try {
      for (const from of [0, 10]) expect((await push(run.apiUrls.get(API)!, blockStreams(from))).status).toBe(204);
      await waitFor(() => loki.lines().length === 18, 'the closed blocks');
    } finally {
      expect(await run.stop()).toBe(0);
      await loki.close();
    }
    expect(loki.lines()).toHaveLength(24);
    expect(
      run
        .stderr()
        .split('\n')
        .filter((line) => line.includes('stages run on one thread')),
    ).toEqual([
      'level=info msg="stages run on one thread" component="logs.process.blocks" reason="stage.limit without by_label_name keeps one rate for all entries"',
    ]);
  }, 90_000);
});
