import { connect, headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { RetryLaterError, type LogsReceiver } from '../../core/receiver.js';
import type { ComponentArgs, ComponentContext } from '../../core/runtime/component.js';
import { encodeEntryBatch } from '../../lib/jetstream/entry-codec.js';
import { type LogsSourceJetStream, logsSourceJetStreamComponent } from '../../receivers/logs-source-jetstream.js';
import { type LogsWriteJetStream, logsWriteJetStreamComponent } from '../../sinks/logs-write-jetstream.js';
import { natsServerForTests, startNatsServer } from '../support/nats-server.js';
import { componentArgs, entryOf, eventually, metricValue, testContext, type TestContext } from './loki/harness.js';

const nats = natsServerForTests('T');
const { program: natsServer, cleanups, nextStream } = nats;

/** The component as a config builds it: its block validated by the definition first. */
function buildSource(args: ComponentArgs, ctx: ComponentContext): LogsSourceJetStream {
  return logsSourceJetStreamComponent.build(args, ctx) as unknown as LogsSourceJetStream;
}

/** The component as a config builds it: its block validated by the definition first. */
function buildWriter(args: ComponentArgs, ctx: ComponentContext): LogsWriteJetStream {
  return logsWriteJetStreamComponent.build(args, ctx) as unknown as LogsWriteJetStream;
}

function startWriter(stream: string, extra = ''): { writer: LogsWriteJetStream; receiver: LogsReceiver; ctx: TestContext } {
  const ctx = testContext('logs.write.jetstream.out');
  const config = `logs.write.jetstream "out" {\n url = "${nats.server.url}"\n stream = "${stream}"\n partitions = 4\n ${extra}\n}`;
  const writer = buildWriter(componentArgs(logsWriteJetStreamComponent, config, []), ctx);
  cleanups.push(() => writer.stop());
  const receiver = (writer.exports.receiver as unknown as { value: LogsReceiver }).value;
  return { writer, receiver, ctx };
}

interface Collected {
  readonly source: LogsSourceJetStream;
  readonly entries: Entry[];
  readonly ctx: TestContext;
}

async function startSource(stream: string, options: { extra?: string; refuse?: () => boolean } = {}): Promise<Collected> {
  const entries: Entry[] = [];
  const receiver: LogsReceiver = {
    send: async (batch) => {
      if (options.refuse?.()) throw new Error('refused');
      entries.push(...batch);
    },
  };
  const ctx = testContext('logs.source.jetstream.in');
  const config = `logs.source.jetstream "in" {\n url = "${nats.server.url}"\n stream = "${stream}"\n group = "g"\n forward_to = [r0]\n lease_ttl = "3s"\n ${options.extra ?? ''}\n}`;
  const source = buildSource(componentArgs(logsSourceJetStreamComponent, config, [receiver]), ctx);
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await source.stop();
  });
  const stop = source.stop.bind(source);
  source.stop = async () => {
    stopped = true;
    await stop();
  };
  await source.start();
  return { source, entries, ctx };
}

const pod = (n: number) => ({ app: 'web', pod: `pod-${n}` });

describe.skipIf(natsServer.skip)(natsServer.title('logs.write.jetstream and logs.source.jetstream'), { timeout: 30_000 }, () => {
  it('publishes entries and reads them back in order per stream, with labels, timestamps and metadata', async () => {
    const stream = nextStream();
    const { receiver, writer, ctx } = startWriter(stream);
    const sent: Entry[] = [];
    for (let i = 0; i < 200; i++) {
      const entry = entryOf(`line ${i}`, pod(i % 7), BigInt(i) * 1_000_000_007n + 1n);
      if (i % 3 === 0) entry.structuredMetadata.push({ name: 'trace_id', value: `t${i}` });
      sent.push(entry);
    }
    await receiver.send(sent.slice(0, 100));
    await receiver.send(sent.slice(100));
    expect(await metricValue(ctx.registry, 'logs_write_jetstream_published_entries_total')).toBe(200);
    expect(writer.health().state).toBe('healthy');
    const { entries } = await startSource(stream);
    await eventually(() => entries.length === 200, 10_000, 'all entries');
    const byStream = (list: Entry[]) => {
      const streams: Record<string, unknown[]> = {};
      for (const e of list) (streams[e.labels.pod!] ??= []).push([e.labels, e.line, e.timestamp, e.structuredMetadata]);
      return streams;
    };
    expect(byStream(entries)).toEqual(byStream(sent));
  });

  it('reads the partition count and prefix the writer recorded in the stream', async () => {
    const stream = nextStream();
    const { receiver } = startWriter(stream, 'subject_prefix = "logs.in"');
    await receiver.send([entryOf('x', pod(1))]);
    const { source, entries } = await startSource(stream);
    await eventually(() => entries.length === 1, 10_000, 'the entry');
    expect(source.ownedPartitions()).toEqual([0, 1, 2, 3]);
    expect(source.health().message).toMatch(/^group g member \S+ owns partitions 0, 1, 2, 3 of 4 of stream T\d+$/);
  });

  it('counts, logs and terminates a malformed message, and goes on with the next', async () => {
    const stream = nextStream();
    const { receiver } = startWriter(stream);
    await receiver.send([entryOf('before', pod(1))]);
    const nc = await connect({ servers: nats.server.url });
    const hdrs = headers();
    const ack = await nc.request(`${stream}.0`, new Uint8Array([9, 1, 2, 3]), { timeout: 5000, headers: hdrs });
    expect(JSON.parse(new TextDecoder().decode(ack.data)).seq).toBe(2);
    await nc.close();
    await receiver.send([entryOf('after', pod(1))]);
    const { entries, ctx } = await startSource(stream);
    await eventually(() => entries.length === 2, 10_000, 'the good entries');
    expect(entries.map((e) => e.line)).toEqual(['before', 'after']);
    expect(await metricValue(ctx.registry, 'logs_source_jetstream_malformed_messages_total')).toBe(1);
    expect(ctx.logs.filter((l) => l.includes('does not decode'))).toEqual([
      'warn terminating a message that does not decode {"partition":0,"sequence":2,"bytes":4,"error":"unknown version 9 at byte 1 of 4"}',
    ]);
  });

  it('drains a backlog of large messages of tiny entries in slices, with no lease lost and the event loop never held up', async () => {
    const stream = nextStream();
    const { receiver } = startWriter(stream);
    await receiver.send([entryOf('first', pod(1))]);
    // 60,000 entries of 15 bytes per message of 900 KB (the server's max_payload is 1 MiB).
    const perMessage = 60_000;
    const lineOf = (n: number) => n.toString(36).padStart(5, '0');
    const messages = 8;
    const nc = await connect({ servers: nats.server.url });
    for (let m = 0; m < messages; m++) {
      const entries = Array.from({ length: perMessage }, (_, i) => ({
        timestamp: BigInt(i),
        line: lineOf(m * perMessage + i),
        structuredMetadata: [],
      }));
      const data = encodeEntryBatch({ labels: pod(1), entries });
      expect(data.length).toBeLessThan(1_024_000);
      await nc.request(`${stream}.0`, data, { timeout: 5000 });
    }
    await nc.close();
    let largestBatch = 0;
    let received = 0;
    let lastLine = '';
    const sink: LogsReceiver = {
      send: async (batch) => {
        largestBatch = Math.max(largestBatch, batch.length);
        received += batch.length;
        lastLine = batch[batch.length - 1]!.line;
        // A pipeline's work per entry.
        let h = 0;
        for (const e of batch) for (let i = 0; i < e.line.length; i++) h = (h * 31 + e.line.charCodeAt(i)) | 0;
        if (h === 42) received--;
      },
    };
    let longestStall = 0;
    let last = performance.now();
    const watch = setInterval(() => {
      const now = performance.now();
      longestStall = Math.max(longestStall, now - last);
      last = now;
    }, 10);
    cleanups.push(async () => clearInterval(watch));
    const ctx = testContext('logs.source.jetstream.in');
    const config = `logs.source.jetstream "in" {\n url = "${nats.server.url}"\n stream = "${stream}"\n group = "g"\n forward_to = [r0]\n lease_ttl = "3s"\n}`;
    const source = buildSource(componentArgs(logsSourceJetStreamComponent, config, [sink]), ctx);
    cleanups.push(() => source.stop());
    await source.start();
    const total = 1 + perMessage * messages;
    await eventually(() => received === total, 20_000, 'every entry');
    await eventually(
      async () => (await metricValue(ctx.registry, 'logs_source_jetstream_acked_messages_total')) === 1 + messages,
      5_000,
      'every message acknowledged',
    );
    expect(lastLine).toBe(lineOf(messages * perMessage - 1));
    expect(await metricValue(ctx.registry, 'logs_source_jetstream_partition_changes_total', { change: 'lost' })).toBe(0);
    expect(largestBatch).toBeLessThanOrEqual(1024);
    // A lease survives stalls up to 3/4 of lease_ttl less a round trip; this stays far below.
    console.log(`backlog catch-up: longest event-loop stall ${Math.round(longestStall)} ms`);
    expect(longestStall).toBeLessThan(900);
  });

  it('shares partitions between instances and hands a stopping instance’s partitions over at once', async () => {
    const stream = nextStream();
    const { receiver } = startWriter(stream);
    await receiver.send([entryOf('x', pod(1))]);
    const a = await startSource(stream);
    await eventually(() => a.source.ownedPartitions().length === 4, 10_000, 'a owning all');
    const b = await startSource(stream);
    await eventually(() => a.source.ownedPartitions().length === 2 && b.source.ownedPartitions().length === 2, 10_000, 'an even split');
    expect([...a.source.ownedPartitions(), ...b.source.ownedPartitions()].sort()).toEqual([0, 1, 2, 3]);
    // Graceful stop hands b's partitions over at once.
    await b.source.stop();
    await eventually(() => a.source.ownedPartitions().length === 4, 5_000, 'a taking over');
    expect(await metricValue(a.ctx.registry, 'logs_source_jetstream_partition_changes_total', { change: 'released' })).toBe(2);
  });

  it('reads a partition again from its last acknowledgement when a receiver refuses a batch', async () => {
    const stream = nextStream();
    const { receiver } = startWriter(stream);
    let refusals = 1;
    const { entries, ctx } = await startSource(stream, { refuse: () => refusals-- > 0 });
    await eventually(() => ctx.logs.some((l) => l.includes('joined group')), 10_000, 'joining');
    await receiver.send([entryOf('one', pod(1)), entryOf('two', pod(1))]);
    await eventually(() => entries.length === 2, 10_000, 'the entries after the refusal');
    expect(entries.map((e) => e.line)).toEqual(['one', 'two']);
    expect(await metricValue(ctx.registry, 'logs_source_jetstream_forward_failures_total')).toBe(1);
  });

  it('refuses sends at once while the server is down (retry later), is unhealthy meanwhile, and recovers by itself', async () => {
    const own = await startNatsServer();
    cleanups.push(() => own.close());
    const ctx = testContext('logs.write.jetstream.out');
    const config = `logs.write.jetstream "out" {\n url = "${own.url}"\n stream = "OUT"\n partitions = 2\n publish_timeout = "500ms"\n}`;
    const writer = buildWriter(componentArgs(logsWriteJetStreamComponent, config, []), ctx);
    cleanups.push(() => writer.stop());
    const receiver = (writer.exports.receiver as unknown as { value: LogsReceiver }).value;
    await receiver.send([entryOf('first', pod(1))]);
    await own.stop();
    await eventually(() => writer.health().state === 'unhealthy', 5_000, 'unhealthy');
    expect(writer.health().message).toMatch(new RegExp(`^NATS at nats://127\\.0\\.0\\.1:${own.port} is unreachable.*; reconnecting$`));
    await expect(receiver.send([entryOf('during', pod(1))])).rejects.toBeInstanceOf(RetryLaterError);
    await own.start();
    await eventually(() => writer.health().state === 'healthy', 10_000, 'healthy again');
    await receiver.send([entryOf('after', pod(1))]);
    expect(await metricValue(ctx.registry, 'logs_write_jetstream_published_entries_total')).toBe(2);
  });

  it('refuses a max_entries_per_message below 1', () => {
    const config = `logs.source.jetstream "in" {\n url = "nats://127.0.0.1:1"\n stream = "S"\n group = "g"\n forward_to = []\n max_entries_per_message = 0\n}`;
    expect(() => buildSource(componentArgs(logsSourceJetStreamComponent, config, []), testContext('logs.source.jetstream.in'))).toThrow(
      /max_entries_per_message must be at least 1/,
    );
  });

  it('never shows a password in health, logs or errors', async () => {
    const ctx = testContext('logs.write.jetstream.out');
    const config = `logs.write.jetstream "out" {\n url = "nats://127.0.0.1:1"\n stream = "S"\n token = "tok-123"\n user = "bob"\n}`;
    expect(() => buildWriter(componentArgs(logsWriteJetStreamComponent, config, []), ctx)).toThrow(
      /at most one of token, user\/password and creds_file/,
    );
    const ok = `logs.write.jetstream "out" {\n url = "nats://alice:s3cret@127.0.0.1:1"\n stream = "S"\n user = "bob"\n password = "hunter2"\n}`;
    const writer = buildWriter(componentArgs(logsWriteJetStreamComponent, ok, []), ctx);
    cleanups.push(() => writer.stop());
    await eventually(() => ctx.logs.length > 0, 5_000, 'a log line');
    expect(writer.health().message).toMatch(/^connecting to NATS at nats:\/\/127\.0\.0\.1:1/);
    const shown = JSON.stringify([writer.health(), ctx.logs, await ctx.registry.metrics()]);
    expect(shown).not.toContain('s3cret');
    expect(shown).not.toContain('hunter2');
  });
});

describe('logs.source.jetstream without a server', () => {
  it('stops at once while it is still trying to make its first connection', async () => {
    const ctx = testContext('logs.source.jetstream.in');
    // Port 1 on the loopback address: nothing listens there, so every attempt is refused.
    const config = `logs.source.jetstream "in" {\n url = "nats://127.0.0.1:1"\n stream = "S"\n group = "g"\n forward_to = [r0]\n}`;
    const source = buildSource(componentArgs(logsSourceJetStreamComponent, config, [{ send: async () => {} }]), ctx);
    await source.start();
    await eventually(() => ctx.logs.some((line) => line.startsWith('warn cannot connect to NATS, retrying')));
    const stopped = await Promise.race([source.stop().then(() => 'stopped'), new Promise((r) => setTimeout(r, 5000, 'still waiting'))]);
    expect(stopped).toBe('stopped');
    expect(source.health().state).toBe('unhealthy');
  });
});
