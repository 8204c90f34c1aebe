/**
 * logs.source.jetstream — reads the log entries logs.write.jetstream published and forwards them
 * to `forward_to`. Instances sharing a `group` divide the stream's partitions among themselves:
 * each partition is read by one instance at a time, so a stream's entries (always in one
 * partition) are processed in order by one pipeline, and a stateful stage such as
 * stage.multiline sees all of a stream's lines. Exports nothing.
 *
 * `jetStreamSource` is the same source used from code: an Observable of acknowledged batches.
 * The component is that source with its batches handed to `forward_to` (`forwardBatches`).
 *
 * Ownership is a lease per partition in the JetStream key-value bucket
 * `rivulet_leases_<stream>_<group>` (see jetstream/leases.ts): renewed every `lease_ttl`/4,
 * taken over by the others once an instance has been gone for `lease_ttl`, and rebalanced so N
 * instances hold about partitions/N each. Each owned partition is read through the durable pull
 * consumer of its lease grant, `<group>-<partition>-<token>` (see jetstream/partition-reader.ts).
 *
 * Delivery is at least once: a message is acknowledged only after every receiver took its
 * entries over, lines held in open multiline blocks included (plus `ack_delay`); what an instance had not acknowledged when it died or lost its
 * lease is delivered again to the next owner, in order, and processed again — never skipped. A
 * message that does not decode is counted, logged and terminated.
 *
 * An instance that loses a lease stops reading and acknowledging the partition at once, but what
 * it already forwarded goes on through its pipeline: blocks a stage held are sent on when they
 * end (a multiline block after its `max_wait_time`), while the next owner reads the same messages
 * again. So a lost lease (a crash, a cut-off or a stalled instance) can deliver what was in flight
 * twice, and a block cut by the loss can arrive once in part and once whole. Such an instance
 * reads the partition again — when it takes the lease back, or after a receiver refused a batch
 * — only once that earlier session's batches have all been sent on, so lines read again never
 * join blocks held from before.
 *
 * `partitions` and `subject_prefix` default to what the writer recorded when it created the
 * stream. Only `forward_to`, `max_in_flight`, `ack_delay`, `ack_wait` and `max_entries_per_message`
 * may change while the component runs (all but the first apply to partitions acquired afterwards).
 *
 * A message is decoded and forwarded in slices, so a large one (a hundred thousand tiny entries)
 * never holds the event loop, lease renewals included, for its whole decoding, nor sits in memory
 * whole; one declaring more than `max_entries_per_message` entries is terminated unread.
 */
import {
  natsConnectionFields,
  natsConnectionSettings,
  natsTlsBlockSpec,
  type NatsComponentValues,
  type NatsConnectionOptions,
} from '../lib/jetstream/connection.js';
import { checkName, checkSubjectPrefix } from '../lib/jetstream/names.js';
import { reconfigure } from '../lib/jetstream/settings-change.js';
import { forwardBatches, logSource, type LogSource } from '../core/delivery.js';
import { LOGS_RECEIVER, type LogsReceiver, type SendOptions } from '../core/receiver.js';
import {
  componentOptions,
  defineComponent,
  type ComponentArgs,
  type ComponentContext,
  type Health,
  type OptionsSpec,
} from '../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { t, type Checks, type FieldSpec } from '../lib/config/schema.js';
import { cloneEntry, type Entry } from '../core/entry.js';
import { FIXED_SOURCE_SETTINGS, JetStreamGroupReader, type JetStreamSourceSettings } from './jetstream/group-reader.js';

/**
 * As logs.source.api's max_entries_per_push: a message of the writer's default size (256KiB)
 * holds at most about 26,000 entries, one of 1MiB (NATS's default max_payload) about 105,000.
 */
const DEFAULT_MAX_ENTRIES_PER_MESSAGE = 100_000;
/**
 * The smallest lease_ttl: a lease survives an event-loop stall shorter than 3/4 of it (less a
 * round trip to the server), and processing instances catching up a backlog on two loaded cores
 * were held up to 1.4 s (docs/jetstream.md has the figures). At 300 ms every run under load lost
 * leases without any instance dying.
 */
const MIN_LEASE_TTL_MS = 3000;

/** logs.source.jetstream's attributes (its `tls` block is the connection's). */
const SOURCE_FIELDS = {
  ...natsConnectionFields,
  stream: { kind: t.string, required: true, doc: 'JetStream stream to read.' },
  group: { kind: t.string, required: true, doc: 'Instances with the same group share the partitions; each group reads every entry.' },
  forward_to: { kind: t.list(t.capsule<LogsReceiver>(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
  partitions: { kind: t.int, default: 0, doc: 'Partition count, as the writer’s; 0 reads it from the stream the writer created.' },
  subject_prefix: {
    kind: t.string,
    default: '',
    doc: 'Subject prefix, as the writer’s; defaults to the one the writer recorded, else the stream name.',
  },
  lease_ttl: {
    kind: t.durationMs,
    default: 10_000_000_000n,
    doc: 'How long a partition stays with an instance that stopped renewing its lease; at least 3s (a lease survives event-loop stalls up to about 3/4 of it).',
  },
  max_in_flight: { kind: t.int, default: 1000, doc: 'Most messages per partition forwarded and not yet acknowledged.' },
  ack_delay: {
    kind: t.durationMs,
    default: 0n,
    doc: 'Extra wait after the receivers took a batch over before it is acknowledged; set it above the writer’s batch_wait (plus a request’s time) when logs.write keeps batches only in memory, so entries still batched are delivered again after a crash.',
  },
  ack_wait: {
    kind: t.durationMs,
    default: 60_000_000_000n,
    doc: 'How long JetStream waits for an acknowledgement before delivering a message again.',
  },
  max_entries_per_message: {
    kind: t.int,
    default: DEFAULT_MAX_ENTRIES_PER_MESSAGE,
    doc: 'Most entries in one message; a message declaring more is terminated unread (counted with reason too_many_entries and logged).',
  },
} satisfies Record<string, FieldSpec>;

/** What a group member reads with: the attributes but `forward_to` (from code, the subscriber). */
const { forward_to: _forwardTo, ...MEMBER_FIELDS } = SOURCE_FIELDS;

type MemberValues = NatsComponentValues<typeof MEMBER_FIELDS>;

/** The options `jetStreamSource` takes: the component's schema without `forward_to`, checked as a member's. */
const MEMBER_OPTIONS: OptionsSpec<MemberValues, JetStreamSourceSettings> = {
  fields: MEMBER_FIELDS,
  blocks: { tls: natsTlsBlockSpec },
  validate: (values, checks, { id }) => memberSettings(values, checks, id),
};

/** What the component runs on: its group member's settings and where the entries go. */
interface Settings {
  readonly forwardTo: readonly LogsReceiver[];
  readonly member: JetStreamSourceSettings;
}

export const logsSourceJetStreamComponent = defineComponent({
  name: 'logs.source.jetstream',
  doc: 'Reads log entries from a JetStream stream written by logs.write.jetstream, sharing its partitions within a group.',
  example: `logs.source.jetstream "buffer" {
  url        = "nats://localhost:4222"
  stream     = "LOGS"
  group      = "processors"
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }`,
  exportNames: [],
  fields: SOURCE_FIELDS,
  blocks: { tls: natsTlsBlockSpec },
  validate: (values, checks, { id }): Settings => ({ forwardTo: values.forward_to, member: memberSettings(values, checks, id) }),
  build(args, ctx) {
    return new LogsSourceJetStream(args, ctx);
  },
});

/**
 * Options of `jetStreamSource`: logs.source.jetstream's attributes but `forward_to` (the
 * subscriber is where the entries go), named, defaulted and checked as in the config. Durations
 * are Go duration strings (`"10s"`).
 */
export interface JetStreamSourceOptions extends NatsConnectionOptions {
  /** JetStream stream to read. */
  readonly stream: string;
  /** Instances with the same group share the partitions; each group reads every entry. */
  readonly group: string;
  /** Partition count, as the writer's; 0 (the default) reads it from the stream the writer created. */
  readonly partitions?: number;
  /** Subject prefix, as the writer's; defaults to the one the writer recorded, else the stream name. */
  readonly subject_prefix?: string;
  /** How long a partition stays with an instance that stopped renewing its lease (default "10s"). */
  readonly lease_ttl?: string;
  /** Most messages per partition emitted and not yet acknowledged (default 1000). */
  readonly max_in_flight?: number;
  /** Extra wait after a batch is acknowledged before its messages are (default "0s"). */
  readonly ack_delay?: string;
  /** How long JetStream waits for an acknowledgement before delivering a message again (default "60s"). */
  readonly ack_wait?: string;
  /** Most entries in one message; a message declaring more is terminated unread (default 100000). */
  readonly max_entries_per_message?: number;
}

/**
 * A running logs.source.jetstream group member as a `LogSource`. It connects when made; it joins
 * the group and reads once subscribed (one subscriber, once: a stopped source is not restarted).
 */
export interface JetStreamSource extends LogSource {
  /** This instance's id in the group, also the value of the lease keys it holds. */
  readonly memberId: string;
  /** The partitions this instance holds now. */
  ownedPartitions(): number[];
  /** Whether it is connected and reading, or why not, as the component reports it. */
  health(): Health;
  /**
   * Takes new options, as a config reload does: only max_in_flight, ack_delay, ack_wait and
   * max_entries_per_message may change (for partitions acquired afterwards); changing anything
   * else throws a ConfigError.
   */
  update(options: JetStreamSourceOptions): void;
}

/**
 * Reads the log entries logs.write.jetstream published, as a member of `group`: every batch a
 * partition's reader forwards is emitted as one `LogBatch`, and its messages are acknowledged to
 * JetStream only once the batch is acknowledged (plus `ack_delay`). A nack makes that partition
 * start again from its acknowledgement floor, so what was not acknowledged is delivered again, in
 * order. `stop()` releases the partitions once every emitted batch is answered (or 30 s and
 * `ack_delay` have passed: the next owner reads what is unanswered), then completes;
 * unsubscribing stops it the same way without waiting for it, the batches still held being
 * answered (or not) by whoever holds them. Invalid options throw the component's ConfigErrors.
 *
 * @example
 * const source = jetStreamSource({ url: 'nats://localhost:4222', stream: 'LOGS', group: 'processors' });
 * source.pipe(sendTo(loki)).subscribe();
 */
export function jetStreamSource(options: JetStreamSourceOptions, run: RunOptions = {}): JetStreamSource {
  const ctx = standaloneContext(logsSourceJetStreamComponent.name, run);
  return sourceOf(new JetStreamGroupReader(optionSettings(options, ctx), ctx), ctx);
}

/** Where errors about options given in code are placed: under the component's name. */
const OPTIONS_PATH = [logsSourceJetStreamComponent.name];

/** Options given in code as settings: the component's schema and checks. */
function optionSettings(options: JetStreamSourceOptions, ctx: ComponentContext): JetStreamSourceSettings {
  return componentOptions(MEMBER_OPTIONS, options, OPTIONS_PATH, ctx);
}

/** The `LogSource` face of a group member: subscribing starts it, `stop()` stops it gracefully. */
function sourceOf(reader: JetStreamGroupReader, ctx: ComponentContext): JetStreamSource {
  const source = logSource((receiver) => {
    reader.start(receiver);
    return { stop: () => reader.stop() };
  });
  const stopSubscribed = source.stop;
  return Object.assign(source, {
    memberId: reader.memberId,
    ownedPartitions: () => reader.ownedPartitions(),
    health: () => reader.health(),
    update: (options: JetStreamSourceOptions) =>
      reconfigure(reader, FIXED_SOURCE_SETTINGS, optionSettings(options, ctx), undefined, OPTIONS_PATH),
    // A source never subscribed still has its connection to close.
    stop: async () => {
      await stopSubscribed();
      await reader.stop();
    },
  });
}

/** Checks the decoded values (a block's, or options given in code) and turns them into a member's settings. */
function memberSettings(v: MemberValues, checks: Checks, componentId: string): JetStreamSourceSettings {
  const { fail } = checks;
  const connection = natsConnectionSettings(v, componentId, checks);
  checkName(v.stream, 'stream', checks);
  checkName(v.group, 'group', checks);
  const partitions = v.partitions;
  if (partitions < 0 || partitions > 4096) fail(`partitions must be between 0 and 4096, got ${partitions}`, 'partitions');
  const prefix = v.subject_prefix;
  // Empty: the prefix the writer recorded, else the stream name.
  if (prefix !== '') checkSubjectPrefix(prefix, checks);
  if (v.lease_ttl < MIN_LEASE_TTL_MS) fail(`lease_ttl must be at least ${MIN_LEASE_TTL_MS / 1000}s`, 'lease_ttl');
  if (v.max_in_flight < 1) fail('max_in_flight must be at least 1', 'max_in_flight');
  if (v.ack_delay < 0) fail('ack_delay must not be negative', 'ack_delay');
  if (v.ack_wait <= v.ack_delay) fail('ack_wait must be longer than ack_delay', 'ack_wait');
  if (v.max_entries_per_message < 1) fail('max_entries_per_message must be at least 1', 'max_entries_per_message');
  return {
    connection,
    stream: v.stream,
    group: v.group,
    partitions,
    prefix,
    leaseTtlMs: v.lease_ttl,
    maxInFlight: v.max_in_flight,
    ackDelayMs: v.ack_delay,
    ackWaitMs: v.ack_wait,
    maxEntriesPerMessage: v.max_entries_per_message,
  };
}

/** The logs.source.jetstream component: `jetStreamSource`'s batches handed to `forward_to`. */
export class LogsSourceJetStream {
  readonly exports = {};
  private forwardTo: readonly LogsReceiver[];
  private readonly reader: JetStreamGroupReader;
  private readonly source: JetStreamSource;
  private disconnect: (() => void) | undefined;
  /**
   * Every `forward_to` receiver gets a batch at once (each but the last its own copies), so the
   * batches a partition has in flight together keep their order at each receiver, and one
   * receiver holding a batch's lines (an open multiline block) does not hold the others back.
   */
  private readonly everyReceiver: LogsReceiver = {
    send: async (entries: readonly Entry[], options?: SendOptions) => {
      const receivers = this.forwardTo;
      const last = receivers.length - 1;
      await Promise.all(receivers.map((r, i) => r.send(i === last ? entries : entries.map(cloneEntry), options)));
    },
  };

  constructor(args: ComponentArgs<Settings>, ctx: ComponentContext) {
    this.forwardTo = args.values.forwardTo;
    this.reader = new JetStreamGroupReader(args.values.member, ctx);
    this.source = sourceOf(this.reader, ctx);
  }

  /** This instance's id in the group, also the value of the lease keys it holds. */
  get memberId(): string {
    return this.reader.memberId;
  }

  health(): Health {
    return this.reader.health();
  }

  async start(): Promise<void> {
    this.disconnect = forwardBatches(this.source, () => [this.everyReceiver]);
  }

  update(args: ComponentArgs<Settings>): void {
    reconfigure(this.reader, FIXED_SOURCE_SETTINGS, args.values.member, args.block.pos, args.path);
    this.forwardTo = args.values.forwardTo;
  }

  /** Releases every partition after acknowledging what is in flight, then disconnects. */
  async stop(): Promise<void> {
    await this.source.stop();
    this.disconnect?.();
  }

  /** The partitions held now (for tests and the health message). */
  ownedPartitions(): number[] {
    return this.reader.ownedPartitions();
  }
}
