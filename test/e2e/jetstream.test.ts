/**
 * Scale-out over NATS JetStream, end to end with real processes: an ingest instance
 * (logs.source.api → logs.write.jetstream) and a processing tier of `rivulet run` instances
 * (logs.source.jetstream → logs.process with stage.multiline and stage.metrics → logs.write) in
 * one group, writing to a fake Loki, around a nats-server started here.
 *
 * The entry count is JETSTREAM_E2E_ENTRIES: by default the 200,000 lines over 1,000
 * streams (the SIGKILL scenario; the restart scenario takes half), about a minute for the file on
 * two cores. A smaller count (12000) gives a quick run while working on it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import { labelsKey } from '../../core/entry.js';
import { decodeEntryBatch } from '../../lib/jetstream/entry-codec.js';
import { partitionOf } from '../../lib/jetstream/partition.js';
import type { WireStream } from '../../lib/loki/wire.js';
import { startFakeLoki, type FakeLoki } from '../sinks/loki/fake-loki.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { needs } from '../support/system-binaries.js';
import { metricSum, pushWithRetry, scrape, spawnRun, type ChildRun } from './support.js';
import { jetStreamProcessorConfig } from './configs.js';

const ENTRIES = Number(process.env.JETSTREAM_E2E_ENTRIES ?? 200_000);
const TIMEOUT_MS = Number(process.env.JETSTREAM_E2E_TIMEOUT_MS ?? 300_000);
const STREAMS = 1000;
const PARTITIONS = 12;
// Long enough that a loaded CI machine (the suite runs beside it) never lets a lease lapse by accident.
const LEASE_TTL_MS = 6000;
const ACK_DELAY_MS = 1500;
// Short, so a stall on a loaded machine is longer than it: stage.multiline measures it on the input
// time, which stands still while a batch is pushed and while a reader holds messages it has not
// forwarded, so a stall with a block's next lines waiting does not flush the block in two parts.
const MAX_WAIT_TIME = '400ms';
const CLIENTS = 4;
const STREAMS_PER_PUSH = 50;
const BASE_NS = 1_714_557_600_000_000_000n;

const natsServer = needs('nats-server');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-js-e2e-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function ingestConfig(natsUrl: string, maxPending = '4MiB'): string {
  return `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  max_pending_size = "${maxPending}"
  forward_to = [logs.write.jetstream.out.receiver]
}

logs.write.jetstream "out" {
  url = "${natsUrl}"
  name = "ingest"
  stream = "LOGS"
  partitions = ${PARTITIONS}
  publish_timeout = "2s"
}
`;
}

function processConfig(natsUrl: string, lokiUrl: string): string {
  return jetStreamProcessorConfig(natsUrl, lokiUrl, LEASE_TTL_MS, ACK_DELAY_MS, MAX_WAIT_TIME);
}

/** One multiline block: its stream, number within the stream, and lines. */
interface Block {
  readonly stream: number;
  readonly n: number;
  readonly lines: readonly string[];
}

const streamLabels = (s: number) => `{namespace="prod", pod="pod-${s}", container="app"}`;

/** Blocks of 1 to 3 lines per stream, about `entries` lines in all, numbered in stream order. */
function workload(entries: number): Block[][] {
  const byStream: Block[][] = Array.from({ length: STREAMS }, () => []);
  let lines = 0;
  for (let n = 0; lines < entries; n++) {
    for (let s = 0; s < STREAMS && lines < entries; s++) {
      const extra = (s + n) % 3;
      const block = [`B ${s}:${n} request failed`, ...Array.from({ length: extra }, (_, j) => `    at frame ${j} of ${s}:${n}`)];
      byStream[s]!.push({ stream: s, n, lines: block });
      lines += block.length;
    }
  }
  return byStream;
}

/** Pushes `rounds` (a block per stream each) from CLIENTS clients, each owning a set of streams in order. */
async function pushBlocks(
  url: string,
  byStream: Block[][],
  fromRound: number,
  toRound: number,
  onRound?: (r: number) => void,
): Promise<void> {
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const mine = byStream.map((_, s) => s).filter((s) => s % CLIENTS === c);
      for (let r = fromRound; r < toRound; r++) {
        if (c === 0) onRound?.(r);
        for (let i = 0; i < mine.length; i += STREAMS_PER_PUSH) {
          const streams: WireStream[] = [];
          for (const s of mine.slice(i, i + STREAMS_PER_PUSH)) {
            const block = byStream[s]![r];
            if (!block) continue;
            streams.push({
              labels: streamLabels(s),
              entries: block.lines.map((line, j) => ({ timestampNs: BASE_NS + BigInt(block.n * 10 + j), line, structuredMetadata: [] })),
            });
          }
          if (streams.length === 0) continue;
          const outcome = await pushWithRetry(url, streams, { retryMs: 100, deadline: Date.now() + 60_000 });
          statuses.push(outcome.status);
        }
      }
    }),
  );
  expect(statuses.filter((s) => s !== 204)).toEqual([]);
}

function rounds(byStream: Block[][]): number {
  return Math.max(...byStream.map((b) => b.length));
}

/** Output entries (a block's lines joined by \n) with their arrival time at the fake Loki. */
function arrived(loki: FakeLoki): Array<{ text: string; at: number }> {
  expect(loki.arrivals.every((a) => a.status === 204)).toBe(true);
  return loki.accepted.flatMap((push, i) =>
    push.streams.flatMap((s) => s.entries.map((e) => ({ text: e.line, at: loki.arrivals[i]!.at }))),
  );
}

async function owned(run: ChildRun): Promise<number> {
  return metricSum(await scrape(run), 'logs_source_jetstream_owned_partitions');
}

async function health(run: ChildRun, id: string): Promise<{ state: string; message: string }> {
  const res = await fetch(`${run.runUrl}/api/v0/components`);
  const list = (await res.json()) as Array<{ id: string; health: { state: string; message: string } }>;
  return list.find((c) => c.id === id)!.health;
}

async function until(check: () => Promise<boolean> | boolean, ms: number, what: string | (() => string)): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Env {
  readonly nats: NatsServer;
  readonly loki: FakeLoki;
  readonly dir: string;
  readonly ingest: ChildRun;
  readonly pushUrl: string;
  startProcessor(): Promise<ChildRun>;
}

async function environment(): Promise<Env> {
  const nats = await startNatsServer();
  cleanups.push(() => nats.close());
  const loki = await startFakeLoki();
  cleanups.push(() => loki.close());
  const dir = tempDir();
  const ingestFile = join(dir, 'ingest.alloy');
  writeFileSync(ingestFile, ingestConfig(nats.url));
  const processFile = join(dir, 'process.alloy');
  writeFileSync(processFile, processConfig(nats.url, loki.url));
  const ingest = await track(spawnRun(ingestFile, ['logs.source.api.in']));
  return {
    nats,
    loki,
    dir,
    ingest,
    pushUrl: ingest.apiUrls.get('logs.source.api.in')!,
    startProcessor: () => track(spawnRun(processFile, [])),
  };
}

/** Registers the child for a kill after the test, whatever happens. */
async function track(started: Promise<ChildRun>): Promise<ChildRun> {
  const run = await started;
  cleanups.push(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
  return run;
}

async function stopGracefully(run: ChildRun): Promise<void> {
  run.child.kill('SIGTERM');
  await run.exited;
}

/** Maps each block text to its block, and checks every output is a whole block. */
function blockIndex(byStream: Block[][]): Map<string, Block> {
  const index = new Map<string, Block>();
  for (const blocks of byStream) for (const b of blocks) index.set(b.lines.join('\n'), b);
  return index;
}

describe.skipIf(natsServer.skip)(natsServer.title('scale-out over JetStream'), { timeout: TIMEOUT_MS }, () => {
  it('delivers every acknowledged entry in per-stream order across a SIGKILLed processing instance', async () => {
    const env = await environment();
    const processors = [await env.startProcessor(), await env.startProcessor(), await env.startProcessor()];
    await until(async () => (await Promise.all(processors.map(owned))).every((n) => n === 4), 30_000, 'a 4/4/4 split');

    const byStream = workload(ENTRIES);
    const total = rounds(byStream);
    const half = Math.floor(total / 2);
    const index = blockIndex(byStream);
    const linesUpTo = (r: number) => byStream.reduce((sum, blocks) => sum + blocks.slice(0, r).reduce((n, b) => n + b.lines.length, 0), 0);
    const blocksUpTo = (r: number) => byStream.reduce((sum, blocks) => sum + Math.min(blocks.length, r), 0);

    // Phase 1, steady state: the stage.metrics counters of the three instances add up exactly.
    await pushBlocks(env.pushUrl, byStream, 0, half);
    await until(() => arrived(env.loki).length >= blocksUpTo(half), 180_000, 'phase 1 at Loki');
    const scrapes = await Promise.all(processors.map(scrape));
    expect(scrapes.reduce((n, s) => n + metricSum(s, 'logs_process_custom_lines_in'), 0)).toBe(linesUpTo(half));
    expect(scrapes.reduce((n, s) => n + metricSum(s, 'logs_process_custom_blocks_out'), 0)).toBe(blocksUpTo(half));
    expect(arrived(env.loki).length).toBe(blocksUpTo(half));

    // Phase 2: one instance is killed a little way in.
    const victim = processors[0]!;
    const victimPartitions = (await health(victim, 'logs.source.jetstream.in')).message
      .replace(/^.* owns partitions ([0-9, ]+) of .*$/, '$1')
      .split(', ')
      .map(Number);
    expect(victimPartitions).toHaveLength(4);
    let killedAt = 0;
    let takeoverMs = -1;
    const survivors = processors.slice(1);
    const killRound = half + Math.max(1, Math.floor((total - half) / 3));
    // The victim's counters are read just before the kill: what it counts after that read cannot
    // be acknowledged before the kill (ack_delay), so a survivor counts it again.
    let victimLinesIn = 0;
    let killing: Promise<void> | undefined;
    const pushing = pushBlocks(env.pushUrl, byStream, half, total, (r) => {
      if (r !== killRound || killing) return;
      killing = scrape(victim).then((text) => {
        victimLinesIn = metricSum(text, 'logs_process_custom_lines_in');
        victim.child.kill('SIGKILL');
        killedAt = Date.now();
      });
    });
    await until(() => killedAt !== 0, 60_000, 'the kill');
    await until(async () => (await Promise.all(survivors.map(owned))).reduce((a, b) => a + b, 0) === PARTITIONS, 30_000, 'the takeover');
    takeoverMs = Date.now() - killedAt;
    await pushing;

    const allLines = byStream.flat().reduce((n, b) => n + b.lines.length, 0);
    await until(
      () => {
        const seen = new Set(arrived(env.loki).map((o) => o.text));
        return [...index.keys()].every((text) => seen.has(text));
      },
      180_000,
      'every acknowledged block at Loki',
    );

    // Every output is a whole input block: multiline blocks are never split across instances.
    const outputs = arrived(env.loki);
    expect(outputs.filter((o) => !index.has(o.text)).map((o) => o.text)).toEqual([]);
    // Per stream, first arrivals come in block order.
    const firstSeen = new Map<string, number>();
    const orderByStream = new Map<number, number[]>();
    const duplicates: Array<{ block: Block; first: number; again: number }> = [];
    for (const o of outputs) {
      const block = index.get(o.text)!;
      const first = firstSeen.get(o.text);
      if (first !== undefined) {
        duplicates.push({ block, first, again: o.at });
        continue;
      }
      firstSeen.set(o.text, o.at);
      const order = orderByStream.get(block.stream) ?? [];
      order.push(block.n);
      orderByStream.set(block.stream, order);
    }
    const outOfOrder = [...orderByStream].filter(([, ns]) => ns.some((n, i) => i > 0 && n < ns[i - 1]!));
    expect(outOfOrder).toEqual([]);
    // Duplicates only for blocks the killed instance had in flight: its partitions, first
    // delivered before the kill, delivered again after it.
    const partitionOfStream = (s: number) => partitionOf(labelsKey({ namespace: 'prod', pod: `pod-${s}`, container: 'app' }), PARTITIONS);
    expect(duplicates.filter((d) => !victimPartitions.includes(partitionOfStream(d.block.stream)))).toEqual([]);
    expect(duplicates.filter((d) => d.first > killedAt + 1000 || d.again < killedAt)).toEqual([]);
    expect(takeoverMs).toBeLessThanOrEqual(LEASE_TTL_MS + 5000);
    // The stage.metrics counters summed over the instances miss nothing: every input line was
    // counted at least once (lines the victim had in flight are counted again by a survivor).
    const survivorLinesIn = (await Promise.all(survivors.map(scrape))).reduce(
      (n, text) => n + metricSum(text, 'logs_process_custom_lines_in'),
      0,
    );
    expect(survivorLinesIn + victimLinesIn).toBeGreaterThanOrEqual(allLines);
    console.log(
      `jetstream e2e: ${allLines} lines in ${index.size} blocks over ${STREAMS} streams; takeover after SIGKILL in ${takeoverMs} ms; ` +
        `${duplicates.length} blocks delivered twice; lines counted ${survivorLinesIn + victimLinesIn} for ${allLines} input lines`,
    );
  });

  it('resumes from the durable consumers after the whole processing tier restarts, and terminates a malformed message', async () => {
    const env = await environment();
    let processors = [await env.startProcessor(), await env.startProcessor(), await env.startProcessor()];
    await until(async () => (await Promise.all(processors.map(owned))).every((n) => n === 4), 30_000, 'a 4/4/4 split');
    const byStream = workload(Math.floor(ENTRIES / 2));
    const total = rounds(byStream);
    const half = Math.floor(total / 2);
    const countLines = (from: number, to: number) =>
      byStream.reduce((sum, blocks) => sum + blocks.slice(from, to).reduce((n, b) => n + b.lines.length, 0), 0);

    await pushBlocks(env.pushUrl, byStream, 0, half);
    const firstHalfBlocks = byStream.reduce((n, b) => n + Math.min(b.length, half), 0);
    await until(() => arrived(env.loki).length >= firstHalfBlocks, 180_000, 'the first half at Loki');
    await Promise.all(processors.map(stopGracefully));

    // While no processor runs: the second half is stored, and a malformed message joins it.
    await pushBlocks(env.pushUrl, byStream, half, total);
    const nc = await connect({ servers: env.nats.url });
    cleanups.push(() => nc.close());
    const ack = await nc.request('LOGS.5', new TextEncoder().encode('not an entry batch'), { timeout: 5000 });
    expect(JSON.parse(new TextDecoder().decode(ack.data)).stream).toBe('LOGS');

    // Started together, so the backlog is shared out with as few hand-overs as possible.
    processors = await Promise.all([env.startProcessor(), env.startProcessor(), env.startProcessor()]);
    const index = blockIndex(byStream);
    await until(() => new Set(arrived(env.loki).map((o) => o.text)).size >= index.size, 180_000, 'the second half at Loki');
    await new Promise((r) => setTimeout(r, ACK_DELAY_MS + 1000));

    const outputs = arrived(env.loki);
    // Nothing lost, and the new tier started where the old one stopped: no block of the first
    // half came again. (Second-half blocks may come twice only if a busy instance lost a lease
    // while the new tier shared out the backlog: at least once.)
    const firstHalf = new Set(byStream.flatMap((blocks) => blocks.slice(0, half).map((b) => b.lines.join('\n'))));
    // Every output is a whole input block (a failure names the parts, not just a count).
    expect(outputs.filter((o) => !index.has(o.text)).map((o) => o.text)).toEqual([]);
    expect(new Set(outputs.map((o) => o.text)).size).toBe(index.size);
    expect(outputs.filter((o) => firstHalf.has(o.text)).length).toBe(firstHalf.size);
    const scrapes = await Promise.all(processors.map(scrape));
    const secondHalfArrivals = outputs.filter((o) => !firstHalf.has(o.text));
    const changes = (change: string) =>
      scrapes.reduce((n, s) => n + metricSum(s, 'logs_source_jetstream_partition_changes_total', `change="${change}"`), 0);
    console.log(
      `jetstream restart: ${outputs.length - index.size} blocks delivered twice; leases after the restart ` +
        `acquired ${changes('acquired')}, released ${changes('released')}, lost ${changes('lost')}`,
    );
    const linesOf = (text: string) => text.split('\n').length;
    expect(scrapes.reduce((n, s) => n + metricSum(s, 'logs_process_custom_lines_in'), 0)).toBe(
      secondHalfArrivals.reduce((n, o) => n + linesOf(o.text), 0),
    );
    expect(secondHalfArrivals.reduce((n, o) => n + linesOf(o.text), 0)).toBeGreaterThanOrEqual(countLines(half, total));
    expect(scrapes.reduce((n, s) => n + metricSum(s, 'logs_source_jetstream_malformed_messages_total'), 0)).toBe(1);
    expect(processors.map((p) => p.stderr()).join('\n')).toMatch(/terminating a message that does not decode.*partition=5/);
    // Every consumer has acknowledged (or terminated) everything.
    const jsm = await jetstreamManager(nc);
    let lastSeen = '';
    await until(
      async () => {
        // One consumer per partition, of its lease grant: `processors-<partition>-<token>`.
        const infos: Array<{ name: string; num_ack_pending: number; num_pending: number }> = [];
        for await (const info of await jsm.consumers.list('LOGS')) infos.push(info);
        lastSeen = infos.map((i) => `${i.name} (ack pending ${i.num_ack_pending}, pending ${i.num_pending})`).join(', ');
        const partitionsRead = infos.map((i) => Number(/^processors-([0-9]+)-[0-9]+$/.exec(i.name)?.[1])).sort((a, b) => a - b);
        return (
          partitionsRead.join() === Array.from({ length: PARTITIONS }, (_, p) => p).join() &&
          infos.every((i) => i.num_ack_pending === 0 && i.num_pending === 0)
        );
      },
      10_000,
      () => `every message acknowledged; last seen: ${lastSeen}`,
    );
  });

  it('answers 429 at once while NATS is unreachable, with the writer unhealthy, and recovers by itself', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const dir = tempDir();
    const file = join(dir, 'ingest.alloy');
    writeFileSync(file, ingestConfig(nats.url, '64KiB'));
    const ingest = await track(spawnRun(file, ['logs.source.api.in']));
    const url = ingest.apiUrls.get('logs.source.api.in')!;
    const acknowledged: string[] = [];
    let seq = 0;
    const push = async (retry: boolean) => {
      const lines = Array.from({ length: 100 }, () => `line ${seq++} ${'x'.repeat(60)}`);
      const entries = lines.map((line, i) => ({ timestampNs: BASE_NS + BigInt(i), line, structuredMetadata: [] }));
      const outcome = await pushWithRetry(url, [{ labels: '{app="outage"}', entries }], {
        retry,
        retryMs: 200,
        deadline: Date.now() + 60_000,
      });
      if (outcome.status === 204) acknowledged.push(...lines);
      return outcome.status;
    };
    expect(await push(false)).toBe(204);

    await nats.stop();
    await until(async () => (await health(ingest, 'logs.write.jetstream.out')).state === 'unhealthy', 10_000, 'unhealthy');
    expect((await health(ingest, 'logs.write.jetstream.out')).message).toMatch(
      new RegExp(`^NATS at nats://127\\.0\\.0\\.1:${nats.port} is unreachable.*; reconnecting$`),
    );
    // Every push is refused at once with 429 and Retry-After while the stream is unreachable.
    const refusals: number[] = [];
    for (let i = 0; i < 5; i++) refusals.push(await push(false));
    expect(refusals).toEqual([429, 429, 429, 429, 429]);
    await nats.start();
    expect(await push(true)).toBe(204);
    await until(async () => (await health(ingest, 'logs.write.jetstream.out')).state === 'healthy', 10_000, 'healthy again');

    // Every acknowledged line is in the stream.
    const nc = await connect({ servers: nats.url });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    const stored = new Set<string>();
    const last = (await jsm.streams.info('LOGS')).state.last_seq;
    for (let s = 1; s <= last; s++) {
      const msg = await jsm.streams.getMessage('LOGS', { seq: s });
      if (msg) for (const e of decodeEntryBatch(msg.data).entries) stored.add(e.line);
    }
    expect(acknowledged.filter((l) => !stored.has(l))).toEqual([]);
  });
});
