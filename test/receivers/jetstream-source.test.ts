/**
 * jetStreamSource used from code against a real nats-server: entries written with jetStreamWrite
 * come out as acknowledged batches; a message is acknowledged to JetStream only once its batch is,
 * a batch left unacknowledged is read again by the next member, and stop() waits for the answers.
 */
import { jetstreamManager, type ConsumerInfo } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { LogBatch } from '../../core/delivery.js';
import type { Entry } from '../../core/entry.js';
import { RetryLaterError } from '../../core/receiver.js';
import type { ComponentArgs, ComponentContext } from '../../core/runtime/component.js';
import type { Log } from '../../lib/log.js';
import {
  jetStreamSource,
  type LogsSourceJetStream,
  logsSourceJetStreamComponent,
  type JetStreamSource,
} from '../../receivers/logs-source-jetstream.js';
import { jetStreamWrite, type JetStreamWrite } from '../../sinks/logs-write-jetstream.js';
import { natsServerForTests } from '../support/nats-server.js';
import { componentArgs, entryOf, eventually, metricValue, recordingReceiver, testContext } from './loki/harness.js';

const nats = natsServerForTests('PS');
const { program: natsServer, cleanups, nextStream } = nats;
const quiet: Log = () => {};

/** The component as a config builds it: its block validated by the definition first. */
function buildSource(args: ComponentArgs, ctx: ComponentContext): LogsSourceJetStream {
  return logsSourceJetStreamComponent.build(args, ctx) as unknown as LogsSourceJetStream;
}

/** A writer to a one-partition stream, so every entry lands in the same partition, in order. */
function writer(stream: string): JetStreamWrite {
  const sink = jetStreamWrite({ url: nats.server.url, stream, partitions: 1 }, { log: quiet, registry: new Registry() });
  cleanups.push(() => sink.stop());
  return sink;
}

interface Member {
  readonly source: JetStreamSource;
  readonly registry: Registry;
  /** Every batch emitted, answered or not. */
  readonly batches: LogBatch[];
  completed(): boolean;
}

/** A group member whose batches the test answers itself. */
function member(stream: string, options: { max_in_flight?: number } = {}): Member {
  const registry = new Registry();
  const source = jetStreamSource({ url: nats.server.url, stream, group: 'g', lease_ttl: '3s', ...options }, { log: quiet, registry });
  cleanups.push(() => source.stop());
  const batches: LogBatch[] = [];
  let completed = false;
  source.subscribe({ next: (batch) => batches.push(batch), complete: () => (completed = true) });
  return { source, registry, batches, completed: () => completed };
}

const lines = (entries: readonly Entry[]) => entries.map((e) => e.line);

async function consumerState(stream: string): Promise<{ ackFloor: number; ackPending: number; pending: number }> {
  const nc = await connect({ servers: nats.server.url });
  try {
    // Partition 0's consumer belongs to the lease grant: `g-0-<token>`.
    const consumers: ConsumerInfo[] = [];
    for await (const c of await (await jetstreamManager(nc)).consumers.list(stream)) if (/^g-0-[0-9]+$/.test(c.name)) consumers.push(c);
    expect(consumers).toHaveLength(1);
    const info = consumers[0]!;
    return { ackFloor: info.ack_floor.stream_seq, ackPending: info.num_ack_pending, pending: info.num_pending };
  } finally {
    await nc.close();
  }
}

describe.skipIf(natsServer.skip)(natsServer.title('jetStreamSource'), { timeout: 30_000 }, () => {
  it('emits what jetStreamWrite stored as batches, and acknowledges the messages once the batches are', async () => {
    const stream = nextStream();
    const sink = writer(stream);
    const sent = [entryOf('one', { app: 'a' }, 1n), entryOf('two', { app: 'a' }, 2n), entryOf('three', { app: 'b' }, 3n)];
    sent[1]!.structuredMetadata.push({ name: 'trace_id', value: 't2' });
    await sink.send(sent);
    const { source, registry, batches } = member(stream);
    // The two messages come in one batch, or in two when a loaded machine's fetch brings the
    // first alone: what is emitted is the same entries, in order, either way.
    await eventually(() => batches.reduce((n, b) => n + b.entries.length, 0) === 3, 10_000, 'the batches');
    expect(batches.flatMap((b) => b.entries).map((e) => [e.labels, e.line, e.timestamp, e.structuredMetadata])).toEqual([
      [{ app: 'a' }, 'one', 1n, []],
      [{ app: 'a' }, 'two', 2n, [{ name: 'trace_id', value: 't2' }]],
      [{ app: 'b' }, 'three', 3n, []],
    ]);
    expect(batches.every((b) => b.untilSentOn === true)).toBe(true);
    // Two streams, two messages: neither is acknowledged before its batch is.
    expect(await consumerState(stream)).toEqual({ ackFloor: 0, ackPending: 2, pending: 0 });
    expect(await metricValue(registry, 'logs_source_jetstream_acked_messages_total')).toBe(0);
    for (const batch of batches) batch.ack();
    await eventually(async () => (await metricValue(registry, 'logs_source_jetstream_acked_messages_total')) === 2, 5_000, 'the acks');
    expect(await metricValue(registry, 'logs_source_jetstream_received_entries_total')).toBe(3);
    expect(source.ownedPartitions()).toEqual([0]);
    expect(source.health().message).toBe(`group g member ${source.memberId} owns partitions 0 of 1 of stream ${stream}`);
    await eventually(async () => (await consumerState(stream)).ackFloor === 2, 5_000, 'the acknowledgement floor');
  });

  it('reports a partition reader’s failure only while it lasts: a lease lost and taken again clears it', async () => {
    const stream = nextStream();
    const sink = writer(stream);
    await sink.send([entryOf('one', { app: 'a' }, 1n)]);
    // A consumer of a later grant than any this member will get: its reader refuses to start.
    const nc = await connect({ servers: nats.server.url });
    cleanups.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(stream, { durable_name: 'g-0-999999', description: 'partition consumer g-0, lease grant 999999' });
    const { source, batches } = member(stream);
    await eventually(() => /has a newer owner/.test(source.health().message), 10_000, 'the reader failing');
    expect(source.health().state).toBe('unhealthy');
    // The obstacle goes, and so does the lease (as when it expires): the member takes the
    // partition again with a reader of a new grant, which reads.
    await jsm.consumers.delete(stream, 'g-0-999999');
    const kv = await new Kvm(nc).open(`rivulet_leases_${stream}_g`);
    await kv.delete('partitions.0');
    await eventually(() => batches.length === 1, 15_000, 'the batch, read by the new grant');
    batches[0]!.ack();
    expect(source.health()).toMatchObject({
      state: 'healthy',
      message: `group g member ${source.memberId} owns partitions 0 of 1 of stream ${stream}`,
    });
  });

  it('keeps a held batch’s message unacknowledged and the next one at the server; stop() waits for the answer', async () => {
    const stream = nextStream();
    const sink = writer(stream);
    await sink.send([entryOf('first')]);
    await sink.send([entryOf('second')]);
    // One message in flight at most: the second is not delivered while the first is unanswered.
    const a = member(stream, { max_in_flight: 1 });
    await eventually(() => a.batches.length === 1, 10_000, 'the first batch');
    expect(lines(a.batches[0]!.entries)).toEqual(['first']);
    expect(await consumerState(stream)).toEqual({ ackFloor: 0, ackPending: 1, pending: 1 });
    expect(a.batches).toHaveLength(1);

    let stopped = false;
    const stopping = a.source.stop().then(() => (stopped = true));
    // The server answers a round trip while stop() still waits for the batch to be answered.
    expect(await consumerState(stream)).toEqual({ ackFloor: 0, ackPending: 1, pending: 1 });
    expect([stopped, a.completed()]).toEqual([false, false]);
    a.batches[0]!.nack(new RetryLaterError('not now'));
    await stopping;
    expect(a.completed()).toBe(true);
    expect(await metricValue(a.registry, 'logs_source_jetstream_acked_messages_total')).toBe(0);
    expect(await metricValue(a.registry, 'logs_source_jetstream_forward_failures_total')).toBe(1);

    // The next member reads both again, from the acknowledgement floor, in order.
    const b = member(stream, { max_in_flight: 1 });
    await eventually(() => b.batches.length === 1, 10_000, 'the first batch again');
    expect(lines(b.batches[0]!.entries)).toEqual(['first']);
    b.batches[0]!.ack();
    await eventually(() => b.batches.length === 2, 10_000, 'the second batch');
    expect(lines(b.batches[1]!.entries)).toEqual(['second']);
    b.batches[1]!.ack();
    await b.source.stop();
    expect(b.completed()).toBe(true);
    expect(await metricValue(b.registry, 'logs_source_jetstream_acked_messages_total')).toBe(2);
    expect(await consumerState(stream)).toEqual({ ackFloor: 2, ackPending: 0, pending: 0 });

    // Acknowledged messages are not delivered again: the next member's first batch is a new entry.
    const c = member(stream);
    await eventually(() => c.source.ownedPartitions().length === 1, 10_000, 'c owning the partition');
    await sink.send([entryOf('third')]);
    await eventually(() => c.batches.length === 1, 10_000, 'the new batch');
    expect(lines(c.batches[0]!.entries)).toEqual(['third']);
    c.batches[0]!.ack();
    await c.source.stop();
    expect(await metricValue(c.registry, 'logs_source_jetstream_received_entries_total')).toBe(1);
  });
});

describe.skipIf(natsServer.skip)(natsServer.title('logs.source.jetstream on jetStreamSource'), { timeout: 30_000 }, () => {
  it('sends the next batch to a reloaded forward_to, and refuses a reload that changes the stream at the block', async () => {
    const stream = nextStream();
    const sink = writer(stream);
    const [first, second] = [recordingReceiver(), recordingReceiver()];
    const config = (s: string, to: string) =>
      `logs.source.jetstream "in" {\n url = "${nats.server.url}"\n stream = "${s}"\n group = "g"\n forward_to = [${to}]\n lease_ttl = "3s"\n}`;
    const ctx = testContext('logs.source.jetstream.in');
    const component = buildSource(componentArgs(logsSourceJetStreamComponent, config(stream, 'r0'), [first, second]), ctx);
    cleanups.push(() => component.stop());
    await component.start();
    await sink.send([entryOf('before')]);
    await eventually(() => first.entries.length === 1, 10_000, 'the first entry');
    component.update(componentArgs(logsSourceJetStreamComponent, config(stream, 'r1'), [first, second]));
    await sink.send([entryOf('after')]);
    await eventually(() => second.entries.length === 1, 10_000, 'the entry after the reload');
    expect([lines(first.entries), lines(second.entries)]).toEqual([['before'], ['after']]);
    expect(messageOf(() => component.update(componentArgs(logsSourceJetStreamComponent, config('OTHER', 'r1'), [first, second])))).toBe(
      'test.alloy:1:1: logs.source.jetstream "in": the connection, stream, group, partitions, subject_prefix and lease_ttl cannot change while the component runs',
    );
  });

  it('names its connection after the component id, from a config or from code, unless name is set', async () => {
    const connected: string[] = [];
    const log: Log = (_level, message, fields) => {
      if (message === 'connected to NATS') connected.push(`${fields?.component} as ${fields?.name}`);
    };
    const stream = nextStream();
    const config = (name: string) =>
      `logs.source.jetstream "in" {\n url = "${nats.server.url}"\n stream = "${stream}"\n group = "g"\n forward_to = []\n ${name}\n}`;
    const contexts = [testContext('logs.source.jetstream.in'), testContext('logs.source.jetstream.in')];
    for (const [i, name] of ['', 'name = "processor-7"'].entries()) {
      const component = buildSource(componentArgs(logsSourceJetStreamComponent, config(name), []), contexts[i]!);
      cleanups.push(() => component.stop());
    }
    const fromCode = jetStreamSource({ url: nats.server.url, stream, group: 'g' }, { id: 'reader-1', log, registry: new Registry() });
    cleanups.push(() => fromCode.stop());
    const fromConfig = () => contexts.flatMap((ctx) => ctx.logs.filter((line) => line.startsWith('info connected to NATS')));
    await eventually(() => connected.length === 1 && fromConfig().length === 2, 5_000, 'three connections');
    expect(fromConfig()).toEqual([
      `info connected to NATS {"servers":"${nats.server.url}","name":"logs.source.jetstream.in"}`,
      `info connected to NATS {"servers":"${nats.server.url}","name":"processor-7"}`,
    ]);
    expect(connected).toEqual(['reader-1 as reader-1']);
  });
});

/** The message of what `fn` throws. */
function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('nothing was thrown');
}

describe('jetStreamSource options', () => {
  const base = { url: 'nats://127.0.0.1:1', stream: 'S', group: 'g' };

  it('refuses invalid options with the component’s errors', () => {
    expect(messageOf(() => jetStreamSource({ ...base, max_entries_per_message: 0, group: 'a.b' }))).toBe(
      'logs.source.jetstream: group must be letters, digits, "_" or "-", got "a.b"\nlogs.source.jetstream: max_entries_per_message must be at least 1',
    );
    expect(messageOf(() => jetStreamSource({ ...base, lease_ttl: '100ms' }))).toBe('logs.source.jetstream: lease_ttl must be at least 3s');
    expect(messageOf(() => jetStreamSource({ ...base, forward_to: [] } as never))).toBe(
      'logs.source.jetstream: unrecognized attribute name "forward_to"',
    );
    expect(messageOf(() => jetStreamSource({ url: base.url, stream: 'S' } as never))).toBe(
      'logs.source.jetstream: missing required attribute "group"',
    );
  });

  it('takes an update of max_in_flight and refuses one of the stream', async () => {
    const source = jetStreamSource(base, { log: quiet, registry: new Registry() });
    try {
      source.update({ ...base, max_in_flight: 5 });
      expect(messageOf(() => source.update({ ...base, stream: 'T' }))).toBe(
        'logs.source.jetstream: the connection, stream, group, partitions, subject_prefix and lease_ttl cannot change while the component runs',
      );
      expect(source.health().message).toBe('connecting to NATS at nats://127.0.0.1:1');
    } finally {
      // Never subscribed: stop() still closes its connection attempts.
      await source.stop();
    }
  });
});
