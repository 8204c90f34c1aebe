/**
 * logs.write.jetstream — publishes log entries to a NATS JetStream stream, partitioned by stream
 * (label set), for logs.source.jetstream instances to process. Exports `receiver`.
 *
 * Each `send` groups its entries by stream and publishes one message per stream (split when it
 * would pass `max_message_size`), encoded with lib/jetstream/entry-codec (versioned binary), to
 * `<subject_prefix>.<partition>`, where the partition is FNV-1a of the stream's label text modulo
 * `partitions`: a stream always lands in one partition, so its entries keep their order. `send`
 * resolves only once JetStream acknowledged every message as stored, so a logs.source.api in
 * front answers 2xx only for stored entries.
 *
 * Publishes are pipelined (up to `max_in_flight` messages awaiting acknowledgement; a `send`
 * beyond that waits) and retried with backoff; every message carries a `Nats-Msg-Id`, so a retry
 * after a lost acknowledgement is stored once. While the server is unreachable (or the stream is
 * missing) the component is unhealthy and `send` is refused at once with a `RetryLaterError`, so
 * a push API in front answers 429 with `Retry-After` promptly; it carries on by itself once the
 * server is back. A publish refused for good (too large, no stream after the last retry) rejects the send.
 *
 * With `create_stream` the stream is created when missing, with subjects `<subject_prefix>.*`,
 * the storage/retention/replica settings here, and a description naming the subject prefix and
 * partition count, which readers use when they are not told. A stream whose description names
 * another partition count is refused.
 *
 * `jetStreamWrite` is the same writer used from code, a `LogSink`; the component exports it as
 * its `receiver`.
 */
import {
  natsConnectionFields,
  natsConnectionSettings,
  natsTlsBlockSpec,
  type NatsComponentValues,
  type NatsConnectionOptions,
} from '../lib/jetstream/connection.js';
import { checkName, checkSubjectPrefix } from '../lib/jetstream/names.js';
import { layoutDescription } from '../lib/jetstream/partition.js';
import { reconfigure } from '../lib/jetstream/settings-change.js';
import { logSink, type LogSink } from '../core/delivery.js';
import { logsReceiverCapsule } from '../core/receiver.js';
import { componentOptions, defineComponent, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { t, type Checks, type FieldSpec } from '../lib/config/schema.js';
import { FIXED_WRITE_SETTINGS, JetStreamWriter, type JetStreamWriteSettings } from './jetstream/writer.js';

/** logs.write.jetstream's attributes (its `tls` block is the connection's). */
const WRITE_FIELDS = {
  ...natsConnectionFields,
  stream: { kind: t.string, required: true, doc: 'JetStream stream to publish to.' },
  subject_prefix: { kind: t.string, default: '', doc: 'Subjects are `<subject_prefix>.<partition>`; defaults to the stream name.' },
  partitions: {
    kind: t.int,
    default: 12,
    doc: 'Number of partitions; readers must use the same (they read it from the stream when created here).',
  },
  create_stream: { kind: t.bool, default: true, doc: 'Create the stream when it does not exist.' },
  storage: { kind: t.string, default: 'file', oneOf: ['file', 'memory'] as const, doc: 'Storage of a stream created here.' },
  retention: {
    kind: t.string,
    default: 'limits',
    oneOf: ['limits', 'workqueue'] as const,
    doc: 'Retention of a stream created here: `limits` keeps messages until max_age/max_bytes, `workqueue` deletes them once processed.',
  },
  replicas: { kind: t.int, default: 1, doc: 'Replicas of a stream created here (1 to 5).' },
  max_age: { kind: t.duration, default: 86_400_000_000_000n, doc: 'Oldest message a stream created here keeps; 0 keeps them forever.' },
  max_bytes: { kind: t.bytes, default: '0', doc: 'Most bytes a stream created here keeps; 0 means no limit.' },
  duplicate_window: {
    kind: t.duration,
    default: 120_000_000_000n,
    doc: 'How long a stream created here remembers message ids, so retried publishes are stored once.',
  },
  max_message_size: {
    kind: t.bytes,
    min: 1024,
    default: '256KiB',
    doc: 'Largest message written; a stream’s entries beyond it go in further messages.',
  },
  max_in_flight: { kind: t.int, default: 1024, doc: 'Most messages published and awaiting acknowledgement; send waits beyond it.' },
  publish_timeout: {
    kind: t.durationMs,
    default: 5_000_000_000n,
    min: 1,
    belowMin: 'publish_timeout must be greater than 0',
    doc: 'How long a publish waits for its acknowledgement before it is retried.',
  },
  min_backoff_period: {
    kind: t.durationMs,
    default: 100_000_000n,
    min: 1,
    belowMin: 'min_backoff_period must be greater than 0',
    doc: 'First delay between retries.',
  },
  max_backoff_period: { kind: t.durationMs, default: 5_000_000_000n, doc: 'Longest delay between retries.' },
  max_backoff_retries: {
    kind: t.int,
    default: 10,
    doc: 'Attempts per message while connected; 0 retries without limit. Waiting for the server to come back spends none.',
  },
} satisfies Record<string, FieldSpec>;

type WriteValues = NatsComponentValues<typeof WRITE_FIELDS>;

export const logsWriteJetStreamComponent = defineComponent({
  name: 'logs.write.jetstream',
  doc: 'Publishes log entries to a NATS JetStream stream, partitioned by stream, acknowledging only stored entries.',
  example: `logs.write.jetstream "buffer" {
  url    = "nats://localhost:4222"
  stream = "LOGS"
}`,
  exportNames: ['receiver'],
  fields: WRITE_FIELDS,
  blocks: { tls: natsTlsBlockSpec },
  validate: (values, checks, { id }) => settingsOf(values, checks, id),
  build(args, ctx) {
    return new LogsWriteJetStream(args, ctx);
  },
});

/**
 * Options of `jetStreamWrite`: logs.write.jetstream's attributes, named, defaulted and checked as
 * in the config. Durations are Go duration strings (`"5s"`), sizes strings such as `"256KiB"`.
 */
export interface JetStreamWriteOptions extends NatsConnectionOptions {
  /** JetStream stream to publish to. */
  readonly stream: string;
  /** Subjects are `<subject_prefix>.<partition>`; defaults to the stream name. */
  readonly subject_prefix?: string;
  /** Number of partitions (default 12); readers read it from a stream created here. */
  readonly partitions?: number;
  /** Create the stream when it does not exist (default true). */
  readonly create_stream?: boolean;
  /** Storage of a stream created here (default "file"). */
  readonly storage?: 'file' | 'memory';
  /** Retention of a stream created here (default "limits"). */
  readonly retention?: 'limits' | 'workqueue';
  /** Replicas of a stream created here, 1 to 5 (default 1). */
  readonly replicas?: number;
  /** Oldest message a stream created here keeps; "0s" keeps them forever (default "24h"). */
  readonly max_age?: string;
  /** Most bytes a stream created here keeps; "0" (the default) means no limit. */
  readonly max_bytes?: string;
  /** How long a stream created here remembers message ids (default "2m"). */
  readonly duplicate_window?: string;
  /** Largest message written (default "256KiB"); a stream's entries beyond it go in further messages. */
  readonly max_message_size?: string;
  /** Most messages published and awaiting acknowledgement (default 1024); a send waits beyond it. */
  readonly max_in_flight?: number;
  /** How long a publish waits for its acknowledgement before it is retried (default "5s"). */
  readonly publish_timeout?: string;
  /** First delay between retries (default "100ms"). */
  readonly min_backoff_period?: string;
  /** Longest delay between retries (default "5s"). */
  readonly max_backoff_period?: string;
  /** Attempts per message while connected (default 10); 0 retries without limit. */
  readonly max_backoff_retries?: number;
}

/** A running logs.write.jetstream as a `LogSink`. */
export interface JetStreamWrite extends LogSink {
  /** Whether it is connected and the stream is writable, or why not, as the component reports it. */
  health(): Health;
  /**
   * Takes new options, as a config reload does: the connection, stream, subject_prefix,
   * partitions and stream settings cannot change (a ConfigError); the rest applies at once.
   */
  update(options: JetStreamWriteOptions): void;
}

/**
 * Publishes log entries to a JetStream stream for `jetStreamSource` (or logs.source.jetstream)
 * readers. A batch (or a `send`) is acknowledged once JetStream stored every message of it; it is
 * refused only when a publish fails for good (too large, retries spent, stopped), or with a
 * `RetryLaterError` at once while the server is unreachable: a push source in front answers 429. `stop()` (or the source completing) refuses new
 * batches, lets the connection drain what is published, and closes it. Invalid options throw the
 * component's ConfigErrors.
 *
 * @example
 * const buffer = jetStreamWrite({ url: 'nats://localhost:4222', stream: 'LOGS', partitions: 4 });
 * pushApi.subscribe(buffer);
 */
export function jetStreamWrite(options: JetStreamWriteOptions, run: RunOptions = {}): JetStreamWrite {
  const ctx = standaloneContext(logsWriteJetStreamComponent.name, run);
  return sinkOf(new JetStreamWriter(optionSettings(options, ctx), ctx), ctx);
}

/** Where errors about options given in code are placed: under the component's name. */
const OPTIONS_PATH = [logsWriteJetStreamComponent.name];

/** Options given in code as settings: the component's schema and checks. */
function optionSettings(options: JetStreamWriteOptions, ctx: ComponentContext): JetStreamWriteSettings {
  return componentOptions(logsWriteJetStreamComponent, options, OPTIONS_PATH, ctx);
}

/** The `LogSink` face of a writer. */
function sinkOf(writer: JetStreamWriter, ctx: ComponentContext): JetStreamWrite {
  return Object.assign(
    logSink({ send: (entries) => writer.send(entries) }, () => writer.stop()),
    {
      health: () => writer.health(),
      update: (options: JetStreamWriteOptions) =>
        reconfigure(writer, FIXED_WRITE_SETTINGS, optionSettings(options, ctx), undefined, OPTIONS_PATH),
    },
  );
}

/** Checks the decoded values (a block's, or options given in code) and turns them into settings. */
function settingsOf(v: WriteValues, checks: Checks, componentId: string): JetStreamWriteSettings {
  const { fail } = checks;
  const connection = natsConnectionSettings(v, componentId, checks);
  const stream = v.stream;
  checkName(stream, 'stream', checks);
  const prefix = v.subject_prefix || stream;
  checkSubjectPrefix(prefix, checks);
  const partitions = v.partitions;
  if (partitions < 1 || partitions > 4096) fail(`partitions must be between 1 and 4096, got ${partitions}`, 'partitions');
  const replicas = v.replicas;
  if (replicas < 1 || replicas > 5) fail(`replicas must be between 1 and 5, got ${replicas}`, 'replicas');
  if (v.max_in_flight < 1) fail('max_in_flight must be at least 1', 'max_in_flight');
  if (v.max_backoff_period < v.min_backoff_period)
    fail('max_backoff_period must not be less than min_backoff_period', 'max_backoff_period');
  if (v.max_backoff_retries < 0) fail('max_backoff_retries must not be negative', 'max_backoff_retries');
  return {
    connection,
    stream,
    prefix,
    partitions,
    createStream: v.create_stream,
    streamConfig: {
      name: stream,
      subjects: [`${prefix}.*`],
      description: layoutDescription(prefix, partitions),
      storage: v.storage,
      retention: v.retention,
      num_replicas: replicas,
      max_age: Number(v.max_age),
      max_bytes: v.max_bytes === 0 ? -1 : v.max_bytes,
      duplicate_window: Number(v.duplicate_window),
    },
    maxMessageBytes: v.max_message_size,
    maxInFlight: v.max_in_flight,
    publishTimeoutMs: v.publish_timeout,
    minBackoffMs: v.min_backoff_period,
    maxBackoffMs: v.max_backoff_period,
    maxRetries: v.max_backoff_retries,
  };
}

/** The logs.write.jetstream component: a `jetStreamWrite` sink exported as its `receiver`. */
export class LogsWriteJetStream {
  readonly exports;
  private readonly writer: JetStreamWriter;
  private readonly sink: JetStreamWrite;

  constructor(args: ComponentArgs<JetStreamWriteSettings>, ctx: ComponentContext) {
    this.writer = new JetStreamWriter(args.values, ctx);
    this.sink = sinkOf(this.writer, ctx);
    this.exports = { receiver: logsReceiverCapsule(this.sink) };
  }

  health(): Health {
    return this.writer.health();
  }

  update(args: ComponentArgs<JetStreamWriteSettings>): void {
    reconfigure(this.writer, FIXED_WRITE_SETTINGS, args.values, args.block.pos, args.path);
  }

  async stop(): Promise<void> {
    await this.sink.stop();
  }
}
