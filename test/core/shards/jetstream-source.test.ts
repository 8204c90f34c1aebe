/**
 * logs.source.jetstream on the shards of a sharded run, against a real nats-server: each shard
 * runs an instance of its own, a member of the group, so the leases divide the stream's
 * partitions among the shards; each shard's processor hands every entry to the shard owning its
 * stream. The outputs are those of the same config in place.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import type { Log } from '../../../lib/log.js';
import { jetStreamSource } from '../../../receivers/logs-source-jetstream.js';
import { jetStreamWrite } from '../../../sinks/logs-write-jetstream.js';
import { natsServerForTests } from '../../support/nats-server.js';
import { entryOf, eventually } from '../../receivers/loki/harness.js';
import { type CommandRun, runConfig } from './support.js';
import { writeFileSync } from 'node:fs';

const nats = natsServerForTests('SHARDS');
const { program: natsServer, cleanups, nextStream } = nats;
const quiet: Log = () => {};
const PARTITIONS = 4;
const STREAMS = 8;
const LINES_PER_STREAM = 30;

function config(stream: string, group: string, maxWaitTime: string, maxInFlight = 1000): string {
  return `logs.source.jetstream "in" {
  url           = "${nats.server.url}"
  stream        = "${stream}"
  group         = "${group}"
  lease_ttl     = "3s"
  max_in_flight = ${maxInFlight}
  forward_to    = [logs.process.p.receiver]
}

logs.process "p" {
  stage.multiline {
    firstline     = "^start"
    max_wait_time = "${maxWaitTime}"
  }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`;
}

/** Every stream numbers its lines; a block starts at every third. */
function entries(): Entry[] {
  const out: Entry[] = [];
  for (let k = 0; k < LINES_PER_STREAM; k++)
    for (let s = 0; s < STREAMS; s++)
      out.push(entryOf(`${k % 3 === 0 ? 'start' : '  cont'} n=${k}`, { app: `a${s}` }, BigInt(1_000_000_000 + k * STREAMS + s)));
  return out;
}

/**
 * Writes the entries with logs.write.jetstream to a new stream of PARTITIONS partitions, all in
 * one send: each stream's lines in one message, so they reach the stages together.
 */
async function writtenStream(): Promise<string> {
  const { stream, write } = await newStream();
  await write();
  return stream;
}

/** A new stream of PARTITIONS partitions, created by logs.write.jetstream, and what writes the entries to it. */
async function newStream(): Promise<{ stream: string; write(): Promise<void> }> {
  const stream = nextStream();
  const sink = jetStreamWrite({ url: nats.server.url, stream, partitions: PARTITIONS }, { log: quiet, registry: new Registry() });
  cleanups.push(() => sink.stop());
  await eventually(() => sink.health().state === 'healthy', 10_000, 'the stream created');
  return { stream, write: () => sink.send(entries()) };
}

/** The echoed entries, stream by stream, each stream's in order. */
function byStream(stdout: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const text of stdout.split('\n')) {
    if (text === '') continue;
    const entry = JSON.parse(text) as { labels: Record<string, string>; line: string; timestamp: string };
    (out[entry.labels.app!] ??= []).push(`${entry.timestamp} ${entry.line}`);
  }
  return out;
}

const echoed = (stdout: string) => stdout.split('\n').filter(Boolean).length;

/** The partitions each shard holds, from its log: acquired, less those released or lost since. */
function ownedByShard(stderr: string): Map<string, number[]> {
  const owned = new Map<string, Set<number>>();
  for (const line of stderr.split('\n')) {
    const change = /msg="(acquired|released|lost) partition"/.exec(line)?.[1];
    if (!change) continue;
    const shard = /\bshard=(\d+)/.exec(line)?.[1] ?? 'in place';
    const partition = Number(/\bpartition=(\d+)/.exec(line)?.[1]);
    const set = owned.get(shard) ?? new Set<number>();
    owned.set(shard, set);
    if (change === 'acquired') set.add(partition);
    else set.delete(partition);
  }
  return new Map([...owned].map(([shard, set]) => [shard, [...set].sort()]));
}

async function metrics(run: CommandRun): Promise<string> {
  return (await fetch(`${run.runUrl}/metrics`)).text();
}

/** The value of the one series of `name` on /metrics. */
function metricOf(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Of each partition consumer of `group`: its acknowledgement floor, and the messages pending or awaiting acknowledgement. */
async function consumerStates(stream: string, group: string): Promise<{ floor: number; unacknowledged: number }[]> {
  const nc = await connect({ servers: nats.server.url });
  try {
    const out: { floor: number; unacknowledged: number }[] = [];
    for await (const c of await (await jetstreamManager(nc)).consumers.list(stream))
      if (c.name.startsWith(`${group}-`)) out.push({ floor: c.ack_floor.stream_seq, unacknowledged: c.num_pending + c.num_ack_pending });
    return out;
  } finally {
    await nc.close();
  }
}

/** The max_ack_pending of each partition's consumer of `group` (each partition has one, its lease grant's). */
async function maxAckPending(stream: string, group: string): Promise<Map<number, number>> {
  const nc = await connect({ servers: nats.server.url });
  try {
    const out = new Map<number, number>();
    for await (const c of await (await jetstreamManager(nc)).consumers.list(stream)) {
      const partition = new RegExp(`^${group}-(\\d+)-\\d+$`).exec(c.name)?.[1];
      if (partition !== undefined) out.set(Number(partition), c.config.max_ack_pending!);
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Waits until the shards (`['0', '1']`) or the process in place (`['in place']`) hold every partition, evenly. */
async function settled(run: CommandRun, holders: readonly string[]): Promise<void> {
  await eventually(
    () => {
      const owned = ownedByShard(run.stderr());
      return holders.every((holder) => owned.get(holder)?.length === PARTITIONS / holders.length);
    },
    20_000,
    'the partitions divided',
  );
}

/** Runs `text` until `blocks` blocks are echoed, then stops it: the run, and what it served on /metrics before stopping. */
async function readAll(text: string, flags: readonly string[], blocks: number) {
  const run = await runConfig(text, flags, []);
  cleanups.push(async () => void (await run.stop()));
  await eventually(() => echoed(run.stdout()) >= blocks, 20_000, 'every block echoed');
  const served = await metrics(run);
  expect(await run.stop()).toBe(0);
  return { run, served };
}

describe.skipIf(natsServer.skip)(natsServer.title('logs.source.jetstream on the shards of a sharded run'), { timeout: 60_000 }, () => {
  it('reads every entry once, each stream in order, with the outputs of the same config in place', async () => {
    const stream = await writtenStream();
    const blocks = STREAMS * (LINES_PER_STREAM / 3);
    const inPlace = await readAll(config(stream, 'inplace', '200ms'), ['--workers', '1'], blocks);
    const sharded = await readAll(config(stream, 'sharded', '200ms'), ['--shards', '2'], blocks);
    expect(echoed(sharded.run.stdout())).toBe(blocks);
    expect(byStream(sharded.run.stdout())).toEqual(byStream(inPlace.run.stdout()));
    expect(Object.keys(byStream(sharded.run.stdout()))).toHaveLength(STREAMS);
    // Read once: a partition handed over to the other shard was acknowledged before it went.
    expect(metricOf(sharded.served, 'logs_source_jetstream_received_entries_total')).toBe(STREAMS * LINES_PER_STREAM);
    // The writer published one message a stream.
    expect(metricOf(sharded.served, 'logs_source_jetstream_received_messages_total')).toBe(STREAMS);
    expect(metricOf(sharded.served, 'logs_source_jetstream_acked_messages_total')).toBe(STREAMS);
  });

  it('divides the partitions between the shards, two each, and names the shard in its records', async () => {
    const stream = await writtenStream();
    const run = await runConfig(config(stream, 'g', '200ms'), ['--shards', '2'], []);
    cleanups.push(async () => void (await run.stop()));
    // The first shard to join may take every partition; the rebalancing gives the other its half.
    await eventually(
      () => {
        const owned = ownedByShard(run.stderr());
        return owned.get('0')?.length === 2 && owned.get('1')?.length === 2;
      },
      20_000,
      'two partitions on each shard',
    );
    const owned = ownedByShard(run.stderr());
    expect([...owned.get('0')!, ...owned.get('1')!].sort()).toEqual([0, 1, 2, 3]);
    expect(metricOf(await metrics(run), 'logs_source_jetstream_owned_partitions')).toBe(PARTITIONS);
    for (const shard of [0, 1])
      expect(run.stderr()).toMatch(
        new RegExp(`msg="joined group" component="logs.source.jetstream.in" shard=${shard} group="g" member="[^"]+-s${shard}-[0-9a-f]{8}"`),
      );
    expect(await run.stop()).toBe(0);
  });
  it('hands back at a stop the blocks the stages hold, their messages unacknowledged, as in place', async () => {
    // Each stream's last block stays open (max_wait_time 1h): its message waits for it.
    const complete = STREAMS * (LINES_PER_STREAM / 3 - 1);
    const stopWhileHeld = async (group: string, flags: readonly string[], holders: readonly string[]) => {
      const { stream, write } = await newStream();
      const run = await runConfig(config(stream, group, '1h'), flags, []);
      cleanups.push(async () => void (await run.stop()));
      // Divided before anything is read: a partition handed over would send its open blocks on.
      await settled(run, holders);
      await write();
      await eventually(() => echoed(run.stdout()) === complete, 20_000, 'the complete blocks echoed');
      expect(await run.stop()).toBe(0);
      return { stream, stdout: run.stdout() };
    };
    const inPlace = await stopWhileHeld('inplace', ['--workers', '1'], ['in place']);
    const sharded = await stopWhileHeld('sharded', ['--shards', '2'], ['0', '1']);
    expect(echoed(sharded.stdout)).toBe(complete);
    expect(byStream(sharded.stdout)).toEqual(byStream(inPlace.stdout));
    // Not one message acknowledged: each held an open block, which the next reader completes.
    for (const [stream, group] of [
      [inPlace.stream, 'inplace'],
      [sharded.stream, 'sharded'],
    ])
      expect((await consumerStates(stream!, group!)).map((c) => c.floor)).toEqual([0, 0, 0, 0]);
    const next = await readAll(config(sharded.stream, 'sharded', '200ms'), ['--shards', '2'], STREAMS * (LINES_PER_STREAM / 3));
    expect(Object.values(byStream(next.run.stdout())).map((blocks) => blocks.length)).toEqual(
      new Array(STREAMS).fill(LINES_PER_STREAM / 3),
    );
    expect((await consumerStates(sharded.stream, 'sharded')).map((c) => c.unacknowledged)).toEqual([0, 0, 0, 0]);
  });

  it('applies a reload of max_in_flight on every shard, to the partitions acquired afterwards', async () => {
    const { stream } = await newStream();
    const run = await runConfig(config(stream, 'g', '200ms', 1000), ['--shards', '2'], []);
    cleanups.push(async () => void (await run.stop()));
    await settled(run, ['0', '1']);
    expect([...(await maxAckPending(stream, 'g')).values()]).toEqual([1000, 1000, 1000, 1000]);
    writeFileSync(run.file, config(stream, 'g', '200ms', 7));
    run.signals.emit('SIGHUP');
    await eventually(() => run.stderr().includes('msg="config reloaded"'), 10_000, 'the reload');
    // A third member takes a partition from one of the shards, and gives it back when it stops.
    const member = jetStreamSource({ url: nats.server.url, stream, group: 'g', lease_ttl: '3s' }, { log: quiet, registry: new Registry() });
    cleanups.push(() => member.stop());
    member.subscribe({ next: (batch) => batch.ack() });
    await eventually(() => member.ownedPartitions().length > 0, 20_000, 'the third member holding a partition');
    const taken = member.ownedPartitions();
    await member.stop();
    await settled(run, ['0', '1']);
    const reloaded = run.stderr().slice(run.stderr().indexOf('msg="config reloaded"'));
    const acquiredSince = [...new Set([...reloaded.matchAll(/msg="acquired partition".*\bpartition=(\d+)/g)].map((m) => Number(m[1])))];
    expect(acquiredSince).toEqual(expect.arrayContaining(taken));
    const after = await maxAckPending(stream, 'g');
    expect([...after.keys()].sort()).toEqual([0, 1, 2, 3]);
    for (const [partition, max] of after) expect([partition, max]).toEqual([partition, acquiredSince.includes(partition) ? 7 : 1000]);
    expect(await run.stop()).toBe(0);
  });
});
