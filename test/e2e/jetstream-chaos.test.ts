/**
 * The processing tier over JetStream under chaos, small and bounded, at the smallest lease_ttl
 * logs.source.jetstream accepts: processing instances run from the sources (`rivulet run` under
 * tsx, no build needed) as logs.source.jetstream → logs.process (stage.metrics, stage.multiline,
 * stage.metrics) → logs.write to a fake Loki; the test writes blocks of 1 to 3 lines per stream with
 * jetStreamWrite, in this process, and counts a block as acknowledged once its send resolved.
 *
 * - Three instances catching up a stored backlog together lose no lease: every block arrives
 *   once and whole, and the stage.metrics counters summed over them equal the input.
 * - Then, with live input: a fourth instance joins, two instances are SIGKILLed at 1/3 and 2/3 of
 *   the input, and nats-server is restarted. No acknowledged block is lost or split, each
 *   stream's blocks arrive in order once duplicates are removed, and a block arrives twice only
 *   if it was in flight at a kill (on a killed instance's partition) or at the server restart
 *   (stored before it and not acknowledged yet when it began).
 *
 * Each instance reports its longest event-loop stall (jetstream-loop-delay.ts); the test prints
 * them, with the leases the survivors lost and the messages the stream stored (more than the
 * blocks would be a writer's duplicates). It runs only with JETSTREAM_CHAOS=1: on a machine shared
 * with other heavy work its four processes can take minutes to start.
 * JETSTREAM_CHAOS_LEASE_TTL_MS overrides the lease TTL (to measure at another one), and
 * JETSTREAM_CHAOS_LOGS names a directory where each instance's log is written at the end.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { labelsKey, makeEntry, type Entry } from '../../core/entry.js';
import { partitionOf } from '../../lib/jetstream/partition.js';
import { jetStreamWrite, type JetStreamWrite } from '../../sinks/logs-write-jetstream.js';
import { startFakeLoki, type FakeLoki } from '../sinks/loki/fake-loki.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { needs } from '../support/system-binaries.js';
import { metricSum, PROJECT_ROOT, scrape, spawnRun, type ChildRun } from './support.js';
import { jetStreamProcessorConfig } from './configs.js';

const LEASE_TTL_MS = Number(process.env.JETSTREAM_CHAOS_LEASE_TTL_MS ?? 3000);
const PARTITIONS = 12;
const STREAMS = 120;
const ACK_DELAY_MS = 1000;
/** stage.multiline's max_wait_time: how long a block forwarded before the restart may take to reach Loki. */
const MAX_WAIT_MS = 2000;
const LOGS_DIR = process.env.JETSTREAM_CHAOS_LOGS;
const LOOP_DELAY_PROBE = fileURLToPath(new URL('./jetstream-loop-delay.ts', import.meta.url));

const natsServer = needs('nats-server');
const RUN = process.env.JETSTREAM_CHAOS === '1';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function processConfig(natsUrl: string, lokiUrl: string): string {
  return jetStreamProcessorConfig(natsUrl, lokiUrl, LEASE_TTL_MS, ACK_DELAY_MS, `${MAX_WAIT_MS}ms`);
}

/** One multiline block: its stream, number within the stream, and lines. */
interface Block {
  readonly stream: number;
  readonly n: number;
  readonly lines: readonly string[];
}

const labelsOf = (s: number) => ({ namespace: 'prod', pod: `pod-${s}`, container: 'app' });
const partitionOfStream = (s: number) => partitionOf(labelsKey(labelsOf(s)), PARTITIONS);

/** Round `n`: a block of 1 to 3 lines for every stream. */
function round(n: number): Block[] {
  return Array.from({ length: STREAMS }, (_, s) => ({
    stream: s,
    n,
    lines: [`B ${s}:${n} request failed`, ...Array.from({ length: (s + n) % 3 }, (_, j) => `    at frame ${j} of ${s}:${n}`)],
  }));
}

/** Writes the blocks, trying again while the stream is unreachable; resolves once all are stored. */
async function write(sink: JetStreamWrite, blocks: readonly Block[]): Promise<void> {
  const entries: Entry[] = blocks.flatMap((b) =>
    b.lines.map((line, j) => makeEntry({ labels: labelsOf(b.stream), line, timestamp: BigInt(b.n * 10 + j) })),
  );
  for (;;) {
    try {
      await sink.send(entries);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

interface Env {
  readonly nats: NatsServer;
  readonly loki: FakeLoki;
  readonly sink: JetStreamWrite;
  startProcessor(): Promise<ChildRun>;
  /** Notes a moment of the test in its log (JETSTREAM_CHAOS_LOGS). */
  note(what: string): void;
}

/** `name`'s instances' logs, each line after the milliseconds since the test began, go to JETSTREAM_CHAOS_LOGS. */
async function environment(name: string): Promise<Env> {
  const began = Date.now();
  const notes: string[] = [];
  const note = (what: string) => notes.push(`${Date.now() - began} ${what}`);
  if (LOGS_DIR)
    cleanups.push(() => {
      mkdirSync(LOGS_DIR, { recursive: true });
      writeFileSync(join(LOGS_DIR, `${name}-test.log`), `${notes.join('\n')}\n`);
    });
  const nats = await startNatsServer();
  cleanups.push(() => nats.close());
  const loki = await startFakeLoki();
  cleanups.push(() => loki.close());
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-js-chaos-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'process.alloy');
  writeFileSync(file, processConfig(nats.url, loki.url));
  const sink = jetStreamWrite({ url: nats.url, stream: 'LOGS', partitions: PARTITIONS, publish_timeout: '1s' }, { log: () => {} });
  cleanups.push(() => sink.stop());
  let started = 0;
  return {
    nats,
    loki,
    sink,
    note,
    startProcessor: async () => {
      const run = await spawnRun(file, [], 120_000, process.env, [
        '--import',
        'tsx',
        '--import',
        LOOP_DELAY_PROBE,
        join(PROJECT_ROOT, 'bin/rivulet.ts'),
      ]);
      const number = ++started;
      let log = '';
      let partial = '';
      run.child.stderr!.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) log += `${Date.now() - began} ${line}\n`;
      });
      note(`processor ${number} started`);
      cleanups.push(async () => {
        if (run.child.exitCode === null && run.child.signalCode === null) {
          run.child.kill('SIGKILL');
          await run.exited;
        }
        if (LOGS_DIR) {
          mkdirSync(LOGS_DIR, { recursive: true });
          writeFileSync(join(LOGS_DIR, `${name}-processor-${number}.log`), log);
        }
      });
      return run;
    },
  };
}

async function owned(run: ChildRun): Promise<number[]> {
  const listed = / owns partitions ([0-9, ]+) of /.exec(await sourceHealth(run))?.[1];
  return listed ? listed.split(', ').map(Number) : [];
}

/** The health message of an instance's logs.source.jetstream: the partitions it owns, or what is wrong. */
async function sourceHealth(run: ChildRun): Promise<string> {
  const res = await fetch(`${run.runUrl}/api/v0/components`);
  const list = (await res.json()) as Array<{ id: string; health: { message: string } }>;
  return list.find((c) => c.id === 'logs.source.jetstream.in')!.health.message;
}

/** How many messages the stream holds. */
async function storedMessages(natsUrl: string): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  try {
    return (await (await jetstreamManager(nc)).streams.info('LOGS')).state.messages;
  } finally {
    await nc.close();
  }
}

/** The longest event-loop stall the instance reported since it joined the group. */
function loopDelay(run: ChildRun): number {
  const log = run.stderr();
  const joined = log.indexOf('joined group');
  if (joined < 0) return 0;
  return Math.max(0, ...[...log.slice(joined).matchAll(/loop_delay_max_ms=([0-9]+)/g)].map((m) => Number(m[1])));
}

async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What reached the fake Loki: each output block's text with its arrival time. */
function arrived(loki: FakeLoki): Array<{ text: string; at: number }> {
  return loki.accepted.flatMap((push, i) =>
    push.streams.flatMap((s) => s.entries.map((e) => ({ text: e.line, at: loki.arrivals[i]!.at }))),
  );
}

interface Outcome {
  /** Outputs that are no input block (a block split, or lines joined across blocks). */
  readonly foreign: string[];
  /** Input blocks that never arrived. */
  readonly missing: string[];
  /** Streams whose first arrivals are out of block order. */
  readonly outOfOrder: number[];
  readonly duplicates: Array<{ block: Block; first: number; again: number }>;
}

function judge(blocks: readonly Block[], loki: FakeLoki): Outcome {
  const index = new Map(blocks.map((b) => [b.lines.join('\n'), b]));
  const outputs = arrived(loki);
  const first = new Map<string, number>();
  const order = new Map<number, number[]>();
  const duplicates: Outcome['duplicates'] = [];
  for (const o of outputs) {
    const block = index.get(o.text);
    if (!block) continue;
    const seen = first.get(o.text);
    if (seen !== undefined) {
      duplicates.push({ block, first: seen, again: o.at });
      continue;
    }
    first.set(o.text, o.at);
    order.set(block.stream, [...(order.get(block.stream) ?? []), block.n]);
  }
  return {
    foreign: outputs.filter((o) => !index.has(o.text)).map((o) => o.text),
    missing: [...index.keys()].filter((text) => !first.has(text)),
    outOfOrder: [...order].filter(([, ns]) => ns.some((n, i) => i > 0 && n < ns[i - 1]!)).map(([s]) => s),
    duplicates,
  };
}

describe.skipIf(natsServer.skip || !RUN)(
  natsServer.title('JetStream processing tier under chaos (JETSTREAM_CHAOS=1)'),
  { timeout: 300_000 },
  () => {
    it('counts every line exactly once when three instances catch up a backlog at the smallest lease_ttl', async () => {
      const env = await environment('backlog');
      const blocks = Array.from({ length: 12 }, (_, n) => round(n)).flat();
      await write(env.sink, blocks);
      const processors = await Promise.all([env.startProcessor(), env.startProcessor(), env.startProcessor()]);
      await until(() => new Set(arrived(env.loki).map((o) => o.text)).size >= blocks.length, 120_000, 'the backlog at Loki');
      await new Promise((r) => setTimeout(r, ACK_DELAY_MS + 500));
      const scrapes = await Promise.all(processors.map(scrape));
      const outcome = judge(blocks, env.loki);
      const lines = blocks.reduce((n, b) => n + b.lines.length, 0);
      console.log(
        `jetstream chaos, backlog: ${lines} lines in ${blocks.length} blocks, lease_ttl ${LEASE_TTL_MS} ms; ` +
          `longest event-loop stalls ${processors.map(loopDelay).join(', ')} ms`,
      );
      expect({
        foreign: outcome.foreign,
        missing: outcome.missing.length,
        outOfOrder: outcome.outOfOrder,
        duplicates: outcome.duplicates.length,
        lost: scrapes.reduce((n, s) => n + metricSum(s, 'logs_source_jetstream_partition_changes_total', 'change="lost"'), 0),
        linesIn: scrapes.reduce((n, s) => n + metricSum(s, 'logs_process_custom_lines_in'), 0),
        blocksOut: scrapes.reduce((n, s) => n + metricSum(s, 'logs_process_custom_blocks_out'), 0),
      }).toEqual({ foreign: [], missing: 0, outOfOrder: [], duplicates: 0, lost: 0, linesIn: lines, blocksOut: blocks.length });
    });

    it('loses and splits nothing across a joining instance, two SIGKILLs and a nats-server restart', async () => {
      const env = await environment('chaos');
      const rounds = 45;
      const all = Array.from({ length: rounds }, (_, n) => round(n));
      // A backlog caught up by three instances.
      await write(env.sink, all.slice(0, 9).flat());
      const processors = await Promise.all([env.startProcessor(), env.startProcessor(), env.startProcessor()]);
      // A fourth joins: the partitions are shared out 3/3/3/3.
      processors.push(await env.startProcessor());
      await until(async () => (await Promise.all(processors.map(owned))).every((p) => p.length === 3), 30_000, 'a 3/3/3/3 split');

      const RESTART_ROUND = 9 + 30;
      const kills: Array<{ at: number; partitions: number[] }> = [];
      let restart = { from: 0, to: 0 };
      const kill = async (victim: ChildRun) => {
        const partitions = await owned(victim);
        victim.child.kill('SIGKILL');
        kills.push({ at: Date.now(), partitions });
        env.note(`killed processor ${processors.indexOf(victim) + 1} (partitions ${partitions.join(', ')})`);
      };
      // Live input, a round every 100 ms: kills at 1/3 and 2/3, the server restarted at 5/6.
      for (let n = 9; n < rounds; n++) {
        if (n === 9 + 12) await kill(processors[0]!);
        if (n === 9 + 24) await kill(processors[1]!);
        if (n === RESTART_ROUND) {
          restart.from = Date.now();
          env.note('nats-server restart begins');
          await env.nats.stop();
          await env.nats.start();
          restart = { from: restart.from, to: Date.now() };
          env.note('nats-server restarted');
        }
        await write(env.sink, all[n]!);
        await new Promise((r) => setTimeout(r, 100));
      }
      const blocks = all.flat();
      // Blocks still missing after a minute are shown below, by partition and round.
      await until(() => judge(blocks, env.loki).missing.length === 0, 60_000, 'every block at Loki').catch(() => {});
      const missing = judge(blocks, env.loki).missing.map((text) => blocks.find((b) => b.lines.join('\n') === text)!);
      if (missing.length > 0)
        env.note(`missing ${missing.map((b) => `${b.stream}:${b.n} (partition ${partitionOfStream(b.stream)})`).join(', ')}`);
      await new Promise((r) => setTimeout(r, ACK_DELAY_MS + 500));
      const outcome = judge(blocks, env.loki);
      // A duplicate is work in flight at a kill (a killed instance's partition, first delivered by
      // then) or at the server restart: stored before it, and not acknowledged when it began (first
      // at Loki less than the ack delay before it, or after it: a block forwarded before the restart
      // reaches Loki at the latest after max_wait_time). Every lease may lapse while the server is
      // away, and the acknowledgements sent meanwhile are lost; what was forwarded after it is not
      // read again.
      const inFlightAtRestart = (d: Outcome['duplicates'][number]) =>
        d.block.n < RESTART_ROUND && d.first >= restart.from - ACK_DELAY_MS - 500 && d.first <= restart.to + MAX_WAIT_MS + 1000;
      const inFlightAtKill = (d: Outcome['duplicates'][number]) =>
        kills.some((k) => k.partitions.includes(partitionOfStream(d.block.stream)) && d.first <= k.at + ACK_DELAY_MS && d.again >= k.at);
      const explained = (d: Outcome['duplicates'][number]) => inFlightAtKill(d) || (inFlightAtRestart(d) && d.again >= restart.from);
      const survivors = processors.slice(2);
      const survivorScrapes = await Promise.all(survivors.map(scrape));
      const lost = survivorScrapes.map((s) => metricSum(s, 'logs_source_jetstream_partition_changes_total', 'change="lost"'));
      console.log(
        `jetstream chaos: ${blocks.length} blocks, lease_ttl ${LEASE_TTL_MS} ms; ${outcome.duplicates.length} delivered twice ` +
          `(${outcome.duplicates.filter((d) => d.again >= restart.from).length} after the restart began, ` +
          `${outcome.duplicates.filter((d) => d.block.n >= RESTART_ROUND).length} written after it, ` +
          `${outcome.duplicates.filter((d) => !inFlightAtKill(d)).length} not on a killed instance's partition in flight at the kill); ` +
          `server down ${restart.to - restart.from} ms; leases lost by the survivors ${lost.join(', ')}; ` +
          `${await storedMessages(env.nats.url)} messages stored; ` +
          `longest event-loop stalls ${processors.map(loopDelay).join(', ')} ms`,
      );
      expect({
        foreign: outcome.foreign,
        missing: missing.map((b) => `${b.lines[0]} (partition ${partitionOfStream(b.stream)})`),
        outOfOrder: outcome.outOfOrder,
        unexplainedDuplicates: outcome.duplicates
          .filter((d) => !explained(d))
          .map((d) => `${d.block.lines[0]} (at Loki ${d.first - restart.from} and ${d.again - restart.from} ms after the restart began)`),
        owners: (await Promise.all(survivors.map(owned))).flat().length,
        // A survivor whose health names no partitions reports why (its health message).
        survivorsOwningNone: (
          await Promise.all(survivors.map(async (s) => ((await owned(s)).length === 0 ? await sourceHealth(s) : undefined)))
        ).filter((h) => h !== undefined),
      }).toEqual({ foreign: [], missing: [], outOfOrder: [], unexplainedDuplicates: [], owners: PARTITIONS, survivorsOwningNone: [] });
    });
  },
);
