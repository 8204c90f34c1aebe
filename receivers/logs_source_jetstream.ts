/**
 * logs.source.jetstream — reads the log entries logs.write.jetstream published and forwards them
 * to `forward_to`. Instances sharing a `group` divide the stream's partitions among themselves:
 * each partition is read by one instance at a time, so a stream's entries (always in one
 * partition) are processed in order by one pipeline, and a stateful stage such as
 * stage.multiline sees all of a stream's lines. Exports nothing.
 *
 * Ownership is a lease per partition in the JetStream key-value bucket
 * `rivulet_leases_<stream>_<group>` (see jetstream/leases.ts): renewed every `lease_ttl`/3,
 * taken over by the others once an instance has been gone for `lease_ttl`, and rebalanced so N
 * instances hold about partitions/N each. Each owned partition is read through the durable pull
 * consumer `<group>-<partition>` (see jetstream/partition_reader.ts).
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
import { setTimeout as delay } from 'node:timers/promises';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import {
  errorText,
  NatsLink,
  natsConnectionFields,
  natsTlsBlockSpec,
  resolveNatsConnection,
  takesTermReasons,
  type NatsConnectionSettings,
} from '../lib/jetstream/connection.js';
import { parseLayoutDescription, partitionSubject } from '../lib/jetstream/partition.js';
import { attributePos, durationMs } from '../lib/loki/config.js';
import { cloneEntry, type Entry } from '../core/entry.js';
import { LOGS_RECEIVER, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, unhealthy, type ComponentArgs, type ComponentContext, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { LeaseKeeper } from './jetstream/leases.js';
import { jetStreamSourceMetrics, type JetStreamSourceMetrics } from './jetstream/metrics.js';
import { PartitionReader } from './jetstream/partition_reader.js';

const NAME = /^[A-Za-z0-9_-]+$/;
/** Delay before a failed setup step or a failed partition reader is tried again. */
const RETRY_MS = 1000;
/** Longest a partition read again waits for the previous reading's batches to be handed on. */
const LEFTOVERS_WAIT_MS = 30_000;
/**
 * As logs.source.api's max_entries_per_push: a message of the writer's default size (256KiB)
 * holds at most about 26,000 entries, one of 1MiB (NATS's default max_payload) about 105,000.
 */
const DEFAULT_MAX_ENTRIES_PER_MESSAGE = 100_000;
/** NATS's default max_payload, for a connection that has not said yet. */
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

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
  fields: {
    ...natsConnectionFields,
    stream: { kind: t.string, required: true, doc: 'JetStream stream to read.' },
    group: { kind: t.string, required: true, doc: 'Instances with the same group share the partitions; each group reads every entry.' },
    forward_to: { kind: t.list(t.capsule(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
    partitions: { kind: t.int, default: 0, doc: 'Partition count, as the writer’s; 0 reads it from the stream the writer created.' },
    subject_prefix: {
      kind: t.string,
      default: '',
      doc: 'Subject prefix, as the writer’s; defaults to the one the writer recorded, else the stream name.',
    },
    lease_ttl: {
      kind: t.duration,
      default: 10_000_000_000n,
      doc: 'How long a partition stays with an instance that stopped renewing its lease.',
    },
    max_in_flight: { kind: t.int, default: 1000, doc: 'Most messages per partition forwarded and not yet acknowledged.' },
    ack_delay: {
      kind: t.duration,
      default: 0n,
      doc: 'Extra wait after the receivers took a batch over before it is acknowledged; set it above the writer’s batch_wait (plus a request’s time) when logs.write keeps batches only in memory, so entries still batched are delivered again after a crash.',
    },
    ack_wait: {
      kind: t.duration,
      default: 60_000_000_000n,
      doc: 'How long JetStream waits for an acknowledgement before delivering a message again.',
    },
    max_entries_per_message: {
      kind: t.int,
      default: DEFAULT_MAX_ENTRIES_PER_MESSAGE,
      doc: 'Most entries in one message; a message declaring more is terminated unread (counted with reason too_many_entries and logged).',
    },
  },
  blocks: { tls: natsTlsBlockSpec },
  build(args, ctx) {
    return new LogsSourceJetStream(args, ctx);
  },
});

interface Settings {
  readonly connection: NatsConnectionSettings;
  readonly stream: string;
  readonly group: string;
  readonly forwardTo: readonly LogsReceiver[];
  readonly partitions: number;
  readonly prefix: string;
  readonly leaseTtlMs: number;
  readonly maxInFlight: number;
  readonly ackDelayMs: number;
  readonly ackWaitMs: number;
  readonly maxEntriesPerMessage: number;
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
  for (const name of ['stream', 'group'])
    if (!NAME.test(v[name] as string)) fail(`${name} must be letters, digits, "_" or "-", got ${JSON.stringify(v[name])}`, name);
  const partitions = v.partitions as number;
  if (partitions < 0 || partitions > 4096) fail(`partitions must be between 0 and 4096, got ${partitions}`, 'partitions');
  const prefix = v.subject_prefix as string;
  if (prefix !== '' && !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(prefix))
    fail(`subject_prefix must be dot-separated tokens without wildcards, got ${JSON.stringify(prefix)}`, 'subject_prefix');
  const leaseTtlMs = durationMs(v.lease_ttl);
  if (leaseTtlMs < 300) fail('lease_ttl must be at least 300ms', 'lease_ttl');
  const maxInFlight = v.max_in_flight as number;
  if (maxInFlight < 1) fail('max_in_flight must be at least 1', 'max_in_flight');
  const ackDelayMs = durationMs(v.ack_delay);
  if (ackDelayMs < 0) fail('ack_delay must not be negative', 'ack_delay');
  const ackWaitMs = durationMs(v.ack_wait);
  if (ackWaitMs <= ackDelayMs) fail('ack_wait must be longer than ack_delay', 'ack_wait');
  const maxEntriesPerMessage = v.max_entries_per_message as number;
  if (maxEntriesPerMessage < 1) fail('max_entries_per_message must be at least 1', 'max_entries_per_message');
  if (errors.length > 0) throw new ConfigErrors(errors);
  return {
    connection: connection!,
    stream: v.stream as string,
    group: v.group as string,
    forwardTo: v.forward_to as LogsReceiver[],
    partitions,
    prefix,
    leaseTtlMs,
    maxInFlight,
    ackDelayMs,
    ackWaitMs,
    maxEntriesPerMessage,
  };
}

/** What the stream and the bucket turned out to be, once set up. */
interface Layout {
  readonly partitions: number;
  readonly prefix: string;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
}

export class LogsSourceJetStream {
  readonly exports = {};
  private settings: Settings;
  private readonly link: NatsLink;
  private readonly metrics: JetStreamSourceMetrics;
  private readonly labels: { component_id: string };
  /** This instance's id in the group, also the value of the lease keys it holds. */
  readonly memberId: string;
  private layout: Layout | undefined;
  private keeper: LeaseKeeper | undefined;
  private readonly readers = new Map<number, PartitionReader>();
  /**
   * Per partition, until it settles: the batches of a session that ended without handing
   * everything on (lost lease, refused batch, drain given up) are still in the pipeline.
   */
  private readonly leftovers = new Map<number, Promise<void>>();
  private setupProblem: string | undefined = 'setting up';
  private readerProblem: string | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Aborted by stop(): wakes a set-up still waiting for its first connection. */
  private readonly stopping = new AbortController();

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
  ) {
    this.settings = settingsOf(args, ctx.id);
    this.metrics = jetStreamSourceMetrics(ctx.registry);
    this.labels = { component_id: ctx.id };
    this.metrics.ownedPartitions.set(this.labels, 0);
    const base = `${hostname()}-${process.pid}`.replace(/[^A-Za-z0-9_-]/g, '_');
    this.memberId = `${base}-${randomBytes(4).toString('hex')}`;
    this.link = new NatsLink({ settings: this.settings.connection, log: ctx.log });
  }

  health(): Health {
    const link = this.link.describe();
    if (!link.up) return unhealthy(link.message);
    if (this.setupProblem !== undefined) return unhealthy(this.setupProblem);
    const leaseProblem = this.keeper?.problem();
    if (leaseProblem) return unhealthy(leaseProblem);
    if (this.readerProblem !== undefined) return unhealthy(this.readerProblem);
    const owned = this.keeper?.ownedPartitions() ?? [];
    const { stream, group } = this.settings;
    return healthy(
      `group ${group} member ${this.memberId} owns ${owned.length === 0 ? 'no partitions' : `partitions ${owned.join(', ')}`} of ${this.layout?.partitions} of stream ${stream}`,
    );
  }

  async start(): Promise<void> {
    // Setting up waits for the server; the rest of the graph must not wait with it.
    this.running = this.setUp();
  }

  update(args: ComponentArgs): void {
    const next = settingsOf(args, this.ctx.id);
    const previous = this.settings;
    const fixed = (s: Settings) => JSON.stringify([s.connection.fingerprint, s.stream, s.group, s.partitions, s.prefix, s.leaseTtlMs]);
    if (fixed(next) !== fixed(previous))
      throw new ConfigError(
        'the connection, stream, group, partitions, subject_prefix and lease_ttl cannot change while the component runs',
        (args.block as Block).pos,
        args.path,
      );
    this.settings = next;
  }

  /** Releases every partition after acknowledging what is in flight, then disconnects. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await this.running;
    await this.keeper?.stop();
    for (const reader of this.readers.values()) reader.abandon();
    this.readers.clear();
    await this.link.close();
    this.metrics.ownedPartitions.remove(this.labels);
  }

  /** The partitions held now (for tests and the health message). */
  ownedPartitions(): number[] {
    return this.keeper?.ownedPartitions() ?? [];
  }

  private async setUp(): Promise<void> {
    while (!this.stopped) {
      const nc = await this.link.ready(this.stopping.signal);
      if (!nc) return;
      try {
        this.layout = await this.readLayout(nc);
        const kv = await this.openBucket(nc);
        const ttlMs = (await kv.status()).ttl || this.settings.leaseTtlMs;
        if (ttlMs !== this.settings.leaseTtlMs)
          this.ctx.log('warn', 'the lease bucket exists with another TTL; using it', { bucket: this.bucketName(), ttl_ms: ttlMs });
        if (this.stopped) return;
        this.keeper = new LeaseKeeper({
          kv,
          memberId: this.memberId,
          partitions: this.layout.partitions,
          ttlMs,
          log: this.ctx.log,
          acquire: (p) => this.startReader(p),
          release: (p) => this.drainReader(p),
          lost: (p) => this.abandonReader(p),
          renewed: (p) => this.readers.get(p)?.resume(),
          changed: (change) => {
            this.metrics.partitionChanges.inc({ ...this.labels, change });
            this.metrics.ownedPartitions.set(this.labels, this.keeper?.ownedPartitions().length ?? 0);
          },
        });
        this.keeper.start();
        this.setupProblem = undefined;
        this.ctx.log('info', 'joined group', { group: this.settings.group, member: this.memberId, partitions: this.layout.partitions });
        return;
      } catch (err) {
        const problem = errorText(err);
        if (problem !== this.setupProblem)
          this.ctx.log('error', 'setting up failed, retrying', { stream: this.settings.stream, error: problem });
        this.setupProblem = problem;
        await delay(RETRY_MS, undefined, { signal: this.stopping.signal }).catch(() => {});
      }
    }
  }

  private async readLayout(nc: NatsConnection): Promise<Layout> {
    const { stream, partitions, prefix } = this.settings;
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    const recorded = parseLayoutDescription(info.config.description);
    const count = partitions || recorded?.partitions;
    if (!count) throw new Error(`stream ${stream} does not record its partition count; set partitions`);
    if (recorded && partitions && recorded.partitions !== partitions)
      throw new Error(`stream ${stream} was created for ${recorded.partitions} partitions, not ${partitions}`);
    return { partitions: count, prefix: prefix || recorded?.prefix || stream, js: jetstream(nc), jsm };
  }

  private bucketName(): string {
    return `rivulet_leases_${this.settings.stream}_${this.settings.group}`;
  }

  private async openBucket(nc: NatsConnection): Promise<KV> {
    const kvm = new Kvm(nc);
    try {
      return await kvm.create(this.bucketName(), { ttl: this.settings.leaseTtlMs, history: 1 });
    } catch {
      // The bucket exists with other settings (another TTL): use it as it is.
      return await kvm.open(this.bucketName());
    }
  }

  private startReader(partition: number): void {
    const layout = this.layout!;
    const { stream, group, maxInFlight, ackDelayMs, ackWaitMs, maxEntriesPerMessage } = this.settings;
    const reader = new PartitionReader({
      js: layout.js,
      jsm: layout.jsm,
      stream,
      subject: partitionSubject(layout.prefix, partition),
      durable: `${group}-${partition}`,
      partition,
      maxInFlight,
      ackDelayMs,
      ackWaitMs,
      maxEntriesPerMessage,
      termReasons: takesTermReasons(this.link.connection()?.info?.version),
      maxPayloadBytes: this.link.connection()?.info?.max_payload ?? DEFAULT_MAX_PAYLOAD_BYTES,
      forward: (entries) => this.forward(entries),
      ...(this.leftovers.has(partition) ? { after: this.afterLeftovers(partition) } : {}),
      holds: () => this.keeper?.holds(partition) === true,
      failed: (error) => this.restartReader(partition, reader, error),
      metrics: this.metrics,
      labels: this.labels,
      log: this.ctx.log,
    });
    this.readers.set(partition, reader);
    reader.start().catch((err) => this.restartReader(partition, reader, `reading partition ${partition} failed: ${errorText(err)}`));
  }

  /** A reader that stopped on its own starts again from the acknowledgement floor, if the lease is still held. */
  private restartReader(partition: number, reader: PartitionReader, error: string): void {
    if (this.readers.get(partition) !== reader) return;
    reader.abandon();
    this.keepLeftovers(partition, reader);
    this.readerProblem = error;
    this.ctx.log('error', 'partition reader stopped, restarting', { partition, error });
    setTimeout(() => {
      if (this.stopped || this.readers.get(partition) !== reader || !this.keeper?.holds(partition)) return;
      this.readerProblem = undefined;
      this.startReader(partition);
    }, RETRY_MS);
  }

  private async drainReader(partition: number): Promise<void> {
    const reader = this.readers.get(partition);
    if (!reader) return;
    await reader.drain();
    // Drained batches are all handed on; one given up on (or abandoned meanwhile) may not be.
    this.keepLeftovers(partition, reader);
    if (this.readers.get(partition) === reader) this.readers.delete(partition);
    // The acknowledgements must reach the server before the lease is given up.
    await this.link
      .connection()
      ?.flush()
      .catch(() => {});
  }

  private abandonReader(partition: number): void {
    const reader = this.readers.get(partition);
    if (!reader) return;
    reader.abandon();
    this.keepLeftovers(partition, reader);
    this.readers.delete(partition);
  }

  /** Remembers until when the ended session's batches may still be in the pipeline. */
  private keepLeftovers(partition: number, reader: PartitionReader): void {
    const earlier = this.leftovers.get(partition);
    const settled = Promise.all([earlier, reader.settled()]).then(() => undefined);
    this.leftovers.set(partition, settled);
    void settled.then(() => {
      if (this.leftovers.get(partition) === settled) this.leftovers.delete(partition);
    });
  }

  /**
   * What a new session of the partition waits for: the leftovers settled, or LEFTOVERS_WAIT_MS
   * (a receiver that never settles must not keep a held partition unread for ever).
   */
  private afterLeftovers(partition: number): Promise<void> {
    const leftovers = this.leftovers.get(partition);
    if (!leftovers) return Promise.resolve();
    this.ctx.log('info', 'waiting for what the previous reading of the partition still has in the pipeline', { partition });
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), LEFTOVERS_WAIT_MS)));
    return Promise.race([leftovers.then(() => false), gaveUp]).then((timedOut) => {
      clearTimeout(timer);
      if (timedOut)
        this.ctx.log('warn', 'reading the partition again while the previous reading still has entries in the pipeline', { partition });
    });
  }

  /** Every receiver gets the batch at once (each its own copies), so batches keep their order at each. */
  private async forward(entries: Entry[]): Promise<void> {
    const receivers = this.settings.forwardTo;
    const last = receivers.length - 1;
    // Acknowledged upstream once this resolves: wait for lines a stage still holds (an open
    // multiline block), or a lost instance would lose them with their messages acknowledged.
    await Promise.all(receivers.map((r, i) => r.send(i === last ? entries : entries.map(cloneEntry), { untilSentOn: true })));
  }
}
