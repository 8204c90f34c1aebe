/**
 * jetStreamWrite used from code against a real nats-server: a batch is acknowledged once
 * JetStream stored its messages, refused when a publish fails for good, and the sink stops with
 * the source it is subscribed to.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { logSource, type LogBatch } from '../../core/delivery.js';
import type { Entry } from '../../core/entry.js';
import { RetryLaterError, type LogsReceiver } from '../../core/receiver.js';
import type { ComponentArgs, ComponentContext } from '../../core/runtime/component.js';
import { decodeEntryBatch } from '../../lib/jetstream/entry-codec.js';
import type { Log } from '../../lib/log.js';
import {
  jetStreamWrite,
  type LogsWriteJetStream,
  logsWriteJetStreamComponent,
  type JetStreamWrite,
  type JetStreamWriteOptions,
} from '../../sinks/logs-write-jetstream.js';
import { natsServerForTests, startNatsServer } from '../support/nats-server.js';
import { componentArgs, entryOf, eventually, metricValue, protoBody, startSourceApi, testContext } from '../receivers/loki/harness.js';

const nats = natsServerForTests('PW');
const { program: natsServer, cleanups, nextStream } = nats;
const quiet: Log = () => {};

/** The component as a config builds it: its block validated by the definition first. */
function buildWriter(args: ComponentArgs, ctx: ComponentContext): LogsWriteJetStream {
  return logsWriteJetStreamComponent.build(args, ctx) as unknown as LogsWriteJetStream;
}

function writer(options: Omit<JetStreamWriteOptions, 'url'>, registry = new Registry()): JetStreamWrite {
  const sink = jetStreamWrite({ url: nats.server.url, ...options }, { log: quiet, registry });
  cleanups.push(() => sink.stop());
  return sink;
}

/** A batch whose answer the test reads: 'acked' or the nack's error message. */
function batchOf(entries: Entry[]): { batch: LogBatch; answer: Promise<string> } {
  let batch!: LogBatch;
  const answer = new Promise<string>((resolve) => {
    batch = { entries, ack: () => resolve('acked'), nack: (err) => resolve((err as Error).message) };
  });
  return { batch, answer };
}

/** Every message of the stream, decoded: [subject, labels, lines]. */
function storedMessages(stream: string): Promise<unknown[]> {
  return storedMessagesAt(nats.server.url, stream);
}

/** Every message of a stream on the server at `url`, decoded: [subject, labels, lines]. */
async function storedMessagesAt(url: string, stream: string): Promise<unknown[]> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(stream);
    const out: unknown[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const msg = await jsm.streams.getMessage(stream, { seq });
      if (!msg) continue;
      const decoded = decodeEntryBatch(msg.data);
      out.push([msg.subject, decoded.labels, decoded.entries.map((e) => e.line)]);
    }
    return out;
  } finally {
    await nc.close();
  }
}

describe.skipIf(natsServer.skip)(natsServer.title('jetStreamWrite'), { timeout: 30_000 }, () => {
  it('acknowledges a batch once JetStream stored every message of it', async () => {
    const stream = nextStream();
    const registry = new Registry();
    const sink = writer({ stream, partitions: 1 }, registry);
    const { batch, answer } = batchOf([entryOf('one', { app: 'a' }), entryOf('two', { app: 'b' }), entryOf('three', { app: 'a' })]);
    sink.next(batch);
    expect(await answer).toBe('acked');
    // One message per stream, in first-seen order, on the one partition's subject.
    expect(await storedMessages(stream)).toEqual([
      [`${stream}.0`, { app: 'a' }, ['one', 'three']],
      [`${stream}.0`, { app: 'b' }, ['two']],
    ]);
    expect(await metricValue(registry, 'logs_write_jetstream_published_entries_total')).toBe(3);
    expect(await metricValue(registry, 'logs_write_jetstream_published_messages_total')).toBe(2);
    expect(await metricValue(registry, 'logs_write_jetstream_in_flight_messages')).toBe(0);
    expect(sink.health().message).toBe(`publishing to stream ${stream} (1 partitions) on ${nats.server.url}`);
  });

  it('takes a source’s batches, answering each send once stored, and stops when the source completes', async () => {
    const stream = nextStream();
    const sink = writer({ stream, partitions: 1 });
    const answered: string[] = [];
    let sender: LogsReceiver | undefined;
    const source = logSource((receiver) => {
      sender = receiver;
      return { stop: async () => {} };
    });
    source.subscribe(sink);
    await sender!.send([entryOf('first')]).then(() => answered.push('first'));
    await sender!.send([entryOf('second')]).then(() => answered.push('second'));
    expect(answered).toEqual(['first', 'second']);
    expect(await storedMessages(stream)).toEqual([
      [`${stream}.0`, {}, ['first']],
      [`${stream}.0`, {}, ['second']],
    ]);
    await source.stop();
    await expect(sink.send([entryOf('late')])).rejects.toThrow(/^logs\.write\.jetstream is stopped$/);
    expect(sink.health().message).toBe(`connection to NATS at ${nats.server.url} is closed`);
  });

  it('refuses a batch whose publish fails for good, counting its entries', async () => {
    const stream = nextStream();
    const registry = new Registry();
    const sink = writer({ stream, partitions: 1, max_backoff_retries: 1, min_backoff_period: '10ms' }, registry);
    // Larger than the server's max_payload (1 MiB): the client refuses to publish it.
    const { batch, answer } = batchOf([entryOf('x'.repeat(1_100_000))]);
    sink.next(batch);
    expect(await answer).toBe(`publishing to ${stream}.0 failed: 'payload' max_payload size exceeded`);
    expect(await metricValue(registry, 'logs_write_jetstream_failed_entries_total', { reason: 'rejected' })).toBe(1);
    expect(await metricValue(registry, 'logs_write_jetstream_published_entries_total')).toBe(0);
  });

  it('makes a push API in front answer 429 with Retry-After within 100 ms while NATS is down, and 204 once it is back', async () => {
    const own = await startNatsServer();
    cleanups.push(() => own.close());
    const config = `logs.write.jetstream "out" {\n url = "${own.url}"\n stream = "OUTAGE"\n partitions = 2\n}`;
    const writer = buildWriter(componentArgs(logsWriteJetStreamComponent, config, []), testContext('logs.write.jetstream.out'));
    cleanups.push(() => writer.stop());
    const api = await startSourceApi([(writer.exports.receiver as unknown as { value: LogsReceiver }).value]);
    cleanups.push(() => api.stop());
    const url = `${api.url}/loki/api/v1/push`;
    let n = 0;
    const push = async () => {
      const body = protoBody([{ labels: '{app="outage"}', entries: [{ timestampNs: 1n, line: `line ${n++}`, structuredMetadata: [] }] }]);
      const started = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-protobuf' },
        body: body as Uint8Array<ArrayBuffer>,
        signal: AbortSignal.timeout(5000),
      });
      const text = await res.text();
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text, ms: performance.now() - started };
    };
    expect((await push()).status).toBe(204);
    await own.stop();
    const deadline = Date.now() + 10_000;
    while (writer.health().state !== 'unhealthy' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const during = [await push(), await push(), await push()];
    expect(during.map(({ status, retryAfter }) => [status, retryAfter])).toEqual([
      [429, '1'],
      [429, '1'],
      [429, '1'],
    ]);
    expect(during[0]!.text).toContain(`stream OUTAGE cannot be written to now: NATS at nats://127.0.0.1:${own.port} is unreachable`);
    // The writer refuses before any timer could fire (see the next test); over HTTP on a loaded
    // two-core machine the answer took 5 to 90 ms. The bound here only tells it from waiting.
    expect(Math.max(...during.map((d) => d.ms))).toBeLessThan(1000);
    await own.start();
    let back = await push();
    while (back.status === 429 && Date.now() < deadline + 20_000) {
      await new Promise((r) => setTimeout(r, 100));
      back = await push();
    }
    expect(back.status).toBe(204);
  });

  it('refuses a send with RetryLaterError within one turn of the event loop while NATS is down', async () => {
    const own = await startNatsServer();
    cleanups.push(() => own.close());
    const sink = jetStreamWrite({ url: own.url, stream: 'DOWN', partitions: 1 }, { log: quiet, registry: new Registry() });
    cleanups.push(() => sink.stop());
    await sink.send([entryOf('first')]);
    await own.stop();
    const deadline = Date.now() + 10_000;
    while (sink.health().state !== 'unhealthy' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    let outcome: unknown = 'pending';
    sink.send([entryOf('during')]).then(
      () => (outcome = 'stored'),
      (err: unknown) => (outcome = err),
    );
    await new Promise((r) => setImmediate(r));
    expect(outcome).toBeInstanceOf(RetryLaterError);
    expect((outcome as Error).message).toMatch(
      new RegExp(`^stream DOWN cannot be written to now: NATS at nats://127\\.0\\.0\\.1:${own.port} is unreachable.*; reconnecting$`),
    );
    await own.start();
    while (sink.health().state !== 'healthy' && Date.now() < deadline + 10_000) await new Promise((r) => setTimeout(r, 50));
    await sink.send([entryOf('after')]);
    expect((await storedMessagesAt(own.url, 'DOWN')).map((m) => (m as unknown[])[2])).toEqual([['first'], ['after']]);
  });

  it('names its connection after the component id, from a config or from code, unless name is set', async () => {
    const connected: string[] = [];
    const log: Log = (_level, message, fields) => {
      if (message === 'connected to NATS') connected.push(`${fields?.component} as ${fields?.name}`);
    };
    const ctx = testContext('logs.write.jetstream.out');
    const config = `logs.write.jetstream "out" {\n url = "${nats.server.url}"\n stream = "${nextStream()}"\n}`;
    const component = buildWriter(componentArgs(logsWriteJetStreamComponent, config, []), ctx);
    cleanups.push(() => component.stop());
    const fromCode = jetStreamWrite({ url: nats.server.url, stream: nextStream() }, { id: 'buffer-1', log, registry: new Registry() });
    cleanups.push(() => fromCode.stop());
    const named = jetStreamWrite(
      { url: nats.server.url, stream: nextStream(), name: 'ingest' },
      { id: 'buffer-2', log, registry: new Registry() },
    );
    cleanups.push(() => named.stop());
    const fromConfig = () => ctx.logs.filter((line) => line.startsWith('info connected to NATS'));
    await eventually(() => connected.length === 2 && fromConfig().length === 1, 5_000, 'three connections');
    expect(fromConfig()).toEqual([`info connected to NATS {"servers":"${nats.server.url}","name":"logs.write.jetstream.out"}`]);
    expect(connected.sort()).toEqual(['buffer-1 as buffer-1', 'buffer-2 as ingest']);
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

describe('jetStreamWrite options', () => {
  const base = { url: 'nats://127.0.0.1:1', stream: 'S' };

  it('refuses invalid options with the component’s errors', () => {
    expect(messageOf(() => jetStreamWrite({ ...base, stream: 'a.b', max_message_size: '1000B', partitions: 0 }))).toBe(
      [
        'logs.write.jetstream: stream must be letters, digits, "_" or "-", got "a.b"',
        'logs.write.jetstream: partitions must be between 1 and 4096, got 0',
        'logs.write.jetstream: attribute "max_message_size": must be at least 1024 bytes, got "1000B"',
      ].join('\n'),
    );
    expect(messageOf(() => jetStreamWrite({ ...base, storage: 'disk' } as never))).toBe(
      'logs.write.jetstream: attribute "storage": invalid value "disk", expected one of "file", "memory"',
    );
  });

  it('refuses a publish timeout or a first backoff of zero, at its attribute', () => {
    const config = [
      'logs.write.jetstream "out" {',
      ' url = "nats://127.0.0.1:1"',
      ' stream = "S"',
      ' publish_timeout = "0s"',
      ' min_backoff_period = "0s"',
      '}',
    ].join('\n');
    const build = () => buildWriter(componentArgs(logsWriteJetStreamComponent, config, []), testContext('logs.write.jetstream.out'));
    expect(messageOf(build)).toBe(
      [
        'test.alloy:4:2: logs.write.jetstream "out": publish_timeout must be greater than 0',
        'test.alloy:5:2: logs.write.jetstream "out": min_backoff_period must be greater than 0',
      ].join('\n'),
    );
    expect(messageOf(() => jetStreamWrite({ ...base, publish_timeout: '0s' }))).toBe(
      'logs.write.jetstream: publish_timeout must be greater than 0',
    );
  });

  it('places a block’s problems at their attributes, a value the schema refuses (a byte size) after the others', () => {
    const config = [
      'logs.write.jetstream "out" {',
      ' url = "nats://127.0.0.1:1"',
      ' stream = "a.b"',
      ' max_message_size = "1000B"',
      ' partitions = 0',
      ' tls {',
      '  cert_file = "/nonexistent/client.pem"',
      ' }',
      '}',
    ].join('\n');
    const build = () => buildWriter(componentArgs(logsWriteJetStreamComponent, config, []), testContext('logs.write.jetstream.out'));
    expect(messageOf(build)).toBe(
      [
        'test.alloy:7:3: logs.write.jetstream "out" > tls: reading cert_file: ENOENT (/nonexistent/client.pem)',
        'test.alloy:7:3: logs.write.jetstream "out" > tls: cert_file and key_file go together',
        'test.alloy:3:2: logs.write.jetstream "out": stream must be letters, digits, "_" or "-", got "a.b"',
        'test.alloy:5:2: logs.write.jetstream "out": partitions must be between 1 and 4096, got 0',
        'test.alloy:4:2: logs.write.jetstream "out": attribute "max_message_size": must be at least 1024 bytes, got "1000B"',
      ].join('\n'),
    );
  });

  it('takes an update of max_in_flight and refuses one of the partitions', async () => {
    const sink = jetStreamWrite(base, { log: quiet, registry: new Registry() });
    try {
      sink.update({ ...base, max_in_flight: 5 });
      expect(messageOf(() => sink.update({ ...base, partitions: 4 }))).toBe(
        'logs.write.jetstream: the connection, stream, subject_prefix, partitions and stream settings cannot change while the component runs',
      );
    } finally {
      await sink.stop();
    }
  });

  it('is what the component exports as its receiver, reloaded through the same check', async () => {
    const config = (partitions: number) =>
      `logs.write.jetstream "out" {\n url = "${base.url}"\n stream = "S"\n partitions = ${partitions}\n}`;
    const component = buildWriter(componentArgs(logsWriteJetStreamComponent, config(2), []), testContext('logs.write.jetstream.out'));
    try {
      const receiver = (component.exports.receiver as unknown as { value: JetStreamWrite }).value;
      expect(typeof receiver.next).toBe('function');
      component.update(componentArgs(logsWriteJetStreamComponent, config(2), []));
      expect(messageOf(() => component.update(componentArgs(logsWriteJetStreamComponent, config(3), [])))).toBe(
        'test.alloy:1:1: logs.write.jetstream "out": the connection, stream, subject_prefix, partitions and stream settings cannot change while the component runs',
      );
    } finally {
      await component.stop();
    }
    expect(component.health().message).toBe('connection to NATS at nats://127.0.0.1:1 is closed');
  });
});
