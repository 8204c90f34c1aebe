/**
 * logs.write.jetstream — publishes log entries to a NATS JetStream stream, partitioned by stream
 * (label set), for logs.source.jetstream instances to process. Exports `receiver`.
 *
 * Each `send` groups its entries by stream and publishes one message per stream (split when it
 * would pass `max_message_size`), encoded with lib/jetstream/entry_codec (versioned binary), to
 * `<subject_prefix>.<partition>`, where the partition is FNV-1a of the stream's label text modulo
 * `partitions`: a stream always lands in one partition, so its entries keep their order. `send`
 * resolves only once JetStream acknowledged every message as stored, so a logs.source.api in
 * front answers 2xx only for stored entries.
 *
 * Publishes are pipelined (up to `max_in_flight` messages awaiting acknowledgement; a `send`
 * beyond that waits) and retried with backoff; every message carries a `Nats-Msg-Id`, so a retry
 * after a lost acknowledgement is stored once. While the server is unreachable (or the stream is
 * missing) the component is unhealthy and `send` waits without spending retries, which fills the
 * push API's pending bound and makes it answer 429; it carries on by itself once the server is
 * back. A publish refused for good (too large, no stream after the last retry) rejects the send.
 *
 * With `create_stream` the stream is created when missing, with subjects `<subject_prefix>.*`,
 * the storage/retention/replica settings here, and a description naming the subject prefix and
 * partition count, which readers use when they are not told. A stream whose description names
 * another partition count is refused.
 */
import { randomBytes } from 'node:crypto';
import { jetstreamManager, JetStreamApiCodes, JetStreamApiError, type StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import { Backoff, backoffClockOn } from '../lib/backoff.js';
import { encodedEntrySize, encodedLabelsSize, encodeEntryBatch } from '../lib/jetstream/entry_codec.js';
import {
  errorText,
  NatsLink,
  natsConnectionFields,
  natsTlsBlockSpec,
  resolveNatsConnection,
  type NatsConnectionSettings,
} from '../lib/jetstream/connection.js';
import { layoutDescription, parseLayoutDescription, partitionOf, partitionSubject } from '../lib/jetstream/partition.js';
import { attributePos, byteSize, durationMs } from '../lib/loki/config.js';
import { labelsKey, type Entry } from '../core/entry.js';
import { logsReceiverCapsule, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, unhealthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { jetStreamWriteMetrics, type JetStreamWriteMetrics } from './jetstream/metrics.js';
import { AsyncPublisher, PublishError, type PublishFailure } from './jetstream/publisher.js';
import { InFlightWindow } from './jetstream/window.js';

/** Stream and consumer names: no dots, wildcards or spaces (NATS's rule), kept to a safe set. */
const NAME = /^[A-Za-z0-9_-]+$/;
/** How long to wait before checking a missing or mismatched stream again. */
const STREAM_RETRY_MS = 2000;

export const logsWriteJetStreamComponent = defineComponent({
  name: 'logs.write.jetstream',
  doc: 'Publishes log entries to a NATS JetStream stream, partitioned by stream, acknowledging only stored entries.',
  example: `logs.write.jetstream "buffer" {
  url    = "nats://localhost:4222"
  stream = "LOGS"
}`,
  exportNames: ['receiver'],
  fields: {
    ...natsConnectionFields,
    stream: { kind: t.string, required: true, doc: 'JetStream stream to publish to.' },
    subject_prefix: { kind: t.string, default: '', doc: 'Subjects are `<subject_prefix>.<partition>`; defaults to the stream name.' },
    partitions: {
      kind: t.int,
      default: 12,
      doc: 'Number of partitions; readers must use the same (they read it from the stream when created here).',
    },
    create_stream: { kind: t.bool, default: true, doc: 'Create the stream when it does not exist.' },
    storage: { kind: t.string, default: 'file', oneOf: ['file', 'memory'], doc: 'Storage of a stream created here.' },
    retention: {
      kind: t.string,
      default: 'limits',
      oneOf: ['limits', 'workqueue'],
      doc: 'Retention of a stream created here: `limits` keeps messages until max_age/max_bytes, `workqueue` deletes them once processed.',
    },
    replicas: { kind: t.int, default: 1, doc: 'Replicas of a stream created here (1 to 5).' },
    max_age: { kind: t.duration, default: 86_400_000_000_000n, doc: 'Oldest message a stream created here keeps; 0 keeps them forever.' },
    max_bytes: { kind: t.string, default: '0', doc: 'Most bytes a stream created here keeps; 0 means no limit.' },
    duplicate_window: {
      kind: t.duration,
      default: 120_000_000_000n,
      doc: 'How long a stream created here remembers message ids, so retried publishes are stored once.',
    },
    max_message_size: {
      kind: t.string,
      default: '256KiB',
      doc: 'Largest message written; a stream’s entries beyond it go in further messages.',
    },
    max_in_flight: { kind: t.int, default: 1024, doc: 'Most messages published and awaiting acknowledgement; send waits beyond it.' },
    publish_timeout: {
      kind: t.duration,
      default: 5_000_000_000n,
      doc: 'How long a publish waits for its acknowledgement before it is retried.',
    },
    min_backoff_period: { kind: t.duration, default: 100_000_000n, doc: 'First delay between retries.' },
    max_backoff_period: { kind: t.duration, default: 5_000_000_000n, doc: 'Longest delay between retries.' },
    max_backoff_retries: {
      kind: t.int,
      default: 10,
      doc: 'Attempts per message while connected; 0 retries without limit. Waiting for the server to come back spends none.',
    },
  },
  blocks: { tls: natsTlsBlockSpec },
  build(args, ctx) {
    return new LogsWriteJetStream(args, ctx);
  },
});

interface Settings {
  readonly connection: NatsConnectionSettings;
  readonly stream: string;
  readonly prefix: string;
  readonly partitions: number;
  readonly createStream: boolean;
  readonly streamConfig: Partial<StreamConfig> & { name: string };
  readonly maxMessageBytes: number;
  readonly maxInFlight: number;
  readonly publishTimeoutMs: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxRetries: number;
}

function settingsOf(args: ComponentArgs, componentId: string): Settings {
  const block = args.block as Block;
  const v = args.values;
  const errors: ConfigError[] = [];
  const fail = (reason: string, attribute: string) => errors.push(new ConfigError(reason, attributePos(block, attribute), args.path));
  let connection: NatsConnectionSettings | undefined;
  try {
    connection = resolveNatsConnection(v, componentId, block, args.path);
  } catch (err) {
    if (err instanceof ConfigErrors) errors.push(...err.errors);
    else throw err;
  }
  const stream = v.stream as string;
  if (!NAME.test(stream)) fail(`stream must be letters, digits, "_" or "-", got ${JSON.stringify(stream)}`, 'stream');
  const prefix = (v.subject_prefix as string) || stream;
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(prefix))
    fail(`subject_prefix must be dot-separated tokens without wildcards, got ${JSON.stringify(prefix)}`, 'subject_prefix');
  const partitions = v.partitions as number;
  if (partitions < 1 || partitions > 4096) fail(`partitions must be between 1 and 4096, got ${partitions}`, 'partitions');
  const replicas = v.replicas as number;
  if (replicas < 1 || replicas > 5) fail(`replicas must be between 1 and 5, got ${replicas}`, 'replicas');
  const size = (name: string, min: number) => {
    try {
      return byteSize(v[name] as string, name, block, args.path, min);
    } catch (err) {
      errors.push(err as ConfigError);
      return 0;
    }
  };
  const maxBytes = size('max_bytes', 0);
  const maxMessageBytes = size('max_message_size', 1024);
  const maxInFlight = v.max_in_flight as number;
  if (maxInFlight < 1) fail('max_in_flight must be at least 1', 'max_in_flight');
  const publishTimeoutMs = durationMs(v.publish_timeout);
  if (publishTimeoutMs <= 0) fail('publish_timeout must be greater than 0', 'publish_timeout');
  const minBackoffMs = durationMs(v.min_backoff_period);
  const maxBackoffMs = durationMs(v.max_backoff_period);
  if (minBackoffMs <= 0) fail('min_backoff_period must be greater than 0', 'min_backoff_period');
  if (maxBackoffMs < minBackoffMs) fail('max_backoff_period must not be less than min_backoff_period', 'max_backoff_period');
  if ((v.max_backoff_retries as number) < 0) fail('max_backoff_retries must not be negative', 'max_backoff_retries');
  if (errors.length > 0) throw new ConfigErrors(errors);
  return {
    connection: connection!,
    stream,
    prefix,
    partitions,
    createStream: v.create_stream as boolean,
    streamConfig: {
      name: stream,
      subjects: [`${prefix}.*`],
      description: layoutDescription(prefix, partitions),
      storage: v.storage as StreamConfig['storage'],
      retention: v.retention as StreamConfig['retention'],
      num_replicas: replicas,
      max_age: Number(v.max_age as bigint),
      max_bytes: maxBytes === 0 ? -1 : maxBytes,
      duplicate_window: Number(v.duplicate_window as bigint),
    },
    maxMessageBytes,
    maxInFlight,
    publishTimeoutMs,
    minBackoffMs,
    maxBackoffMs,
    maxRetries: v.max_backoff_retries as number,
  };
}

/** One message to publish: a stream's entries, encoded. */
interface Outgoing {
  readonly subject: string;
  readonly data: Buffer;
  readonly entries: number;
}

export class LogsWriteJetStream {
  readonly exports;
  private settings: Settings;
  private readonly link: NatsLink;
  private publisher: AsyncPublisher | undefined;
  /** Why the stream cannot be written to, while it cannot. */
  private streamProblem: string | undefined = 'checking the stream';
  private streamReady: Promise<void>;
  private lastFailure: string | undefined;
  private readonly window: InFlightWindow;
  private readonly metrics: JetStreamWriteMetrics;
  private readonly labels: { component_id: string };
  /** Distinguishes this writer's message ids from every other writer's. */
  private readonly writerId = randomBytes(9).toString('base64url');
  private nextMessage = 0;
  private readonly stopSignal = new AbortController();
  private stopped = false;

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
  ) {
    this.settings = settingsOf(args, ctx.id);
    this.metrics = jetStreamWriteMetrics(ctx.registry);
    this.labels = { component_id: ctx.id };
    this.metrics.inFlightMessages.set(this.labels, 0);
    this.window = new InFlightWindow(this.settings.maxInFlight);
    this.link = new NatsLink({ settings: this.settings.connection, log: ctx.log });
    this.streamReady = this.prepare();
    const receiver: LogsReceiver = { send: (entries) => this.send(entries) };
    this.exports = { receiver: logsReceiverCapsule(receiver) };
  }

  health(): Health {
    const link = this.link.describe();
    if (!link.up) return unhealthy(link.message);
    if (this.streamProblem !== undefined) return unhealthy(this.streamProblem);
    if (this.lastFailure !== undefined) return unhealthy(this.lastFailure);
    return healthy(
      `publishing to stream ${this.settings.stream} (${this.settings.partitions} partitions) on ${this.settings.connection.display}`,
    );
  }

  update(args: ComponentArgs): void {
    const next = settingsOf(args, this.ctx.id);
    const previous = this.settings;
    const fixed = (s: Settings) =>
      JSON.stringify([s.connection.fingerprint, s.stream, s.prefix, s.partitions, s.createStream, s.streamConfig]);
    if (fixed(next) !== fixed(previous))
      throw new ConfigError(
        'the connection, stream, subject_prefix, partitions and stream settings cannot change while the component runs',
        (args.block as Block).pos,
        args.path,
      );
    this.settings = next;
    this.window.resize(next.maxInFlight);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.window.close(new Error('logs.write.jetstream is stopped'));
    // Sends in progress finish (or fail) before the connection goes: they were promised nothing yet.
    this.stopSignal.abort();
    await this.link.close();
    this.publisher?.close();
    this.metrics.inFlightMessages.remove(this.labels);
  }

  /** Publishes the entries; resolves once JetStream stored all of them. */
  private async send(entries: readonly Entry[]): Promise<void> {
    if (this.stopped) throw new Error('logs.write.jetstream is stopped');
    if (entries.length === 0) return;
    const outgoing = this.encode(entries);
    await this.window.acquire(outgoing.length);
    this.metrics.inFlightMessages.inc(this.labels, outgoing.length);
    try {
      await Promise.all(outgoing.map((message) => this.publishWithRetry(message)));
    } finally {
      this.metrics.inFlightMessages.dec(this.labels, outgoing.length);
      this.window.release(outgoing.length);
    }
  }

  /** One message per stream (in first-seen order), split at max_message_size. */
  private encode(entries: readonly Entry[]): Outgoing[] {
    const { prefix, partitions, maxMessageBytes } = this.settings;
    const byStream = new Map<string, Entry[]>();
    for (const entry of entries) {
      const key = labelsKey(entry.labels);
      const list = byStream.get(key);
      if (list) list.push(entry);
      else byStream.set(key, [entry]);
    }
    const out: Outgoing[] = [];
    for (const [key, list] of byStream) {
      const subject = partitionSubject(prefix, partitionOf(key, partitions));
      const labels = list[0]!.labels;
      const header = encodedLabelsSize(labels) + 5;
      let start = 0;
      let bytes = header;
      for (let i = 0; i < list.length; i++) {
        const size = encodedEntrySize(list[i]!);
        if (i > start && bytes + size > maxMessageBytes) {
          out.push({ subject, data: encodeEntryBatch({ labels, entries: list.slice(start, i) }), entries: i - start });
          start = i;
          bytes = header;
        }
        bytes += size;
      }
      out.push({
        subject,
        data: encodeEntryBatch({ labels, entries: start === 0 ? list : list.slice(start) }),
        entries: list.length - start,
      });
    }
    return out;
  }

  private async publishWithRetry(message: Outgoing): Promise<void> {
    const msgId = `${this.writerId}-${(this.nextMessage++).toString(36)}`;
    const { minBackoffMs, maxBackoffMs, maxRetries } = this.settings;
    const backoffClock = backoffClockOn(this.ctx.clock.scheduler);
    const backoff = new Backoff({ minMs: minBackoffMs, maxMs: maxBackoffMs, maxRetries }, backoffClock);
    for (;;) {
      const publisher = await this.ready();
      try {
        const ack = await publisher.publish(message.subject, message.data, msgId);
        if (ack.duplicate) this.metrics.duplicateMessages.inc(this.labels);
        this.metrics.publishedMessages.inc(this.labels);
        this.metrics.publishedEntries.inc(this.labels, message.entries);
        this.metrics.publishedBytes.inc(this.labels, message.data.length);
        this.lastFailure = undefined;
        return;
      } catch (err) {
        if (this.stopped) throw new Error('logs.write.jetstream stopped before the entries were stored');
        const reason: PublishFailure = err instanceof PublishError ? err.reason : 'rejected';
        const text = errorText(err);
        // The stream went away (a server that lost its memory storage): set it up again.
        if (reason === 'no_stream' && this.streamProblem === undefined) {
          this.streamProblem = text;
          this.streamReady = this.prepare();
        }
        // A publish lost to a dropped connection is not the message's fault: wait for the link.
        if (!this.link.describe().up) continue;
        const delay = backoff.nextDelay();
        if (!backoff.ongoing()) {
          this.metrics.failedEntries.inc({ ...this.labels, reason }, message.entries);
          this.ctx.log('error', 'giving up publishing entries', { subject: message.subject, entries: message.entries, error: text });
          throw new Error(`publishing to ${message.subject} failed: ${text}`);
        }
        this.lastFailure = `publishing to stream ${this.settings.stream} failed: ${text}; retrying`;
        this.metrics.retriedEntries.inc({ ...this.labels, reason }, message.entries);
        this.ctx.log('warn', 'publishing entries failed, will retry', { subject: message.subject, error: text, retry_in_ms: delay });
        await backoffClock.sleep(delay, this.stopSignal.signal);
      }
    }
  }

  /** The publisher, once connected and the stream is usable; waits (not spending retries) until then. */
  private async ready(): Promise<AsyncPublisher> {
    for (;;) {
      if (this.stopped) throw new Error('logs.write.jetstream stopped before the entries were stored');
      const nc = await this.link.ready();
      if (!nc) throw new Error('logs.write.jetstream stopped before the entries were stored');
      await this.streamReady;
      if (this.publisher && this.link.connection()) return this.publisher;
    }
  }

  /** Connects, then checks (or creates) the stream until it is usable. */
  private async prepare(): Promise<void> {
    for (;;) {
      const nc = await this.link.ready();
      if (!nc) return;
      try {
        await this.checkStream(nc);
        this.streamProblem = undefined;
        this.publisher ??= new AsyncPublisher(nc, this.settings.publishTimeoutMs);
        return;
      } catch (err) {
        const problem = errorText(err);
        if (problem !== this.streamProblem)
          this.ctx.log('error', 'the stream cannot be written to', { stream: this.settings.stream, error: problem });
        this.streamProblem = problem;
      }
      await backoffClockOn(this.ctx.clock.scheduler).sleep(STREAM_RETRY_MS, this.stopSignal.signal);
      if (this.stopped) return;
    }
  }

  private async checkStream(nc: NatsConnection): Promise<void> {
    const { stream, prefix, partitions, createStream, streamConfig } = this.settings;
    const jsm = await jetstreamManager(nc);
    let description: string | undefined;
    try {
      description = (await jsm.streams.info(stream)).config.description;
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.StreamNotFound) throw err;
      if (!createStream) throw new Error(`stream ${stream} does not exist and create_stream is false`);
      await jsm.streams.add(streamConfig);
      this.ctx.log('info', 'created stream', { stream, subjects: `${prefix}.*`, partitions });
      return;
    }
    const layout = parseLayoutDescription(description);
    if (layout && (layout.partitions !== partitions || layout.prefix !== prefix))
      throw new Error(
        `stream ${stream} was created for ${layout.partitions} partitions under ${layout.prefix}.*, but this writer has ${partitions} under ${prefix}.*`,
      );
  }
}
