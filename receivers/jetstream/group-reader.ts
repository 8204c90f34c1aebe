/**
 * What logs.source.jetstream and `jetStreamSource` run: one member of a group reading a stream's
 * partitions. It joins the group (the lease bucket, see leases.ts), reads every partition it holds
 * through a PartitionReader, and sends what it reads to the one receiver `start` is given — the
 * source's subscriber — acknowledging a message only once that receiver took its entries over.
 * A receiver's refusal makes the partition's reader start again from the acknowledgement floor
 * (the messages not acknowledged are delivered again, in order); see logs-source-jetstream.ts for
 * the delivery promise as a whole.
 *
 * A group reader runs once: `start` after `stop` (or a second `start`) is refused. It connects as
 * soon as it is made, so its health says how the server is reached before anything is read.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { errorText, NatsLink, takesTermReasons, type NatsConnectionSettings } from '../../lib/jetstream/connection.js';
import { parseLayoutDescription, partitionSubject } from '../../lib/jetstream/partition.js';
import type { FixedSettings } from '../../lib/jetstream/settings-change.js';
import type { Log } from '../../lib/log.js';
import type { Entry } from '../../core/entry.js';
import type { LogsReceiver, SendOptions } from '../../core/receiver.js';
import { healthy, unhealthy, type ComponentContext, type Health } from '../../core/runtime/component.js';
import { LeaseKeeper } from './leases.js';
import { jetStreamSourceMetrics, type JetStreamSourceMetrics } from './metrics.js';
import { PartitionReader } from './partition-reader.js';

/** Delay before a failed setup step or a failed partition reader is tried again. */
const RETRY_MS = 1000;
/** Longest a partition read again waits for the previous reading's batches to be handed on. */
const LEFTOVERS_WAIT_MS = 30_000;
/** NATS's default max_payload, for a connection that has not said yet. */
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** A group member's validated settings (logs.source.jetstream's attributes but `forward_to`). */
export interface JetStreamSourceSettings {
  readonly connection: NatsConnectionSettings;
  readonly stream: string;
  readonly group: string;
  readonly partitions: number;
  readonly prefix: string;
  readonly leaseTtlMs: number;
  readonly maxInFlight: number;
  readonly ackDelayMs: number;
  readonly ackWaitMs: number;
  readonly maxEntriesPerMessage: number;
}

/** What a running member cannot change: only max_in_flight, ack_delay, ack_wait and max_entries_per_message may. */
export const FIXED_SOURCE_SETTINGS: FixedSettings<JetStreamSourceSettings> = {
  of: (s) => [s.connection.fingerprint, s.stream, s.group, s.partitions, s.prefix, s.leaseTtlMs],
  refusal: 'the connection, stream, group, partitions, subject_prefix and lease_ttl cannot change while the component runs',
};

/** Thrown by a second `start`, or a `start` after `stop`. */
export class GroupReaderUsedError extends Error {
  constructor() {
    super('a JetStream source runs once: make a new one to read again');
    this.name = 'GroupReaderUsedError';
  }
}

/** What the stream and the bucket turned out to be, once set up. */
interface Layout {
  readonly partitions: number;
  readonly prefix: string;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
}

/** One member of a group: the leases it holds and a PartitionReader for each. */
export class JetStreamGroupReader {
  private settings: JetStreamSourceSettings;
  /** Where what is read goes; set by start(). */
  private receiver: LogsReceiver | undefined;
  private readonly link: NatsLink;
  private readonly metrics: JetStreamSourceMetrics;
  private readonly labels: { component_id: string };
  /** This instance's id in the group, also the value of the lease keys it holds. */
  readonly memberId: string;
  /** The component's log; on a shard of a sharded run, every record names the shard. */
  private readonly log: Log;
  private layout: Layout | undefined;
  private keeper: LeaseKeeper | undefined;
  private readonly readers = new Map<number, PartitionReader>();
  /**
   * Readers whose session ended or is ending, by partition: the partition is read again from its
   * floor once the session has ended (`ended`) and the lease allows.
   */
  private readonly toReadAgain = new Map<number, { reader: PartitionReader; ended: boolean }>();
  /**
   * Per partition, until it settles: the batches of a session that ended without handing
   * everything on (lost lease, refused batch, drain given up) are still in the pipeline.
   */
  private readonly leftovers = new Map<number, Promise<void>>();
  private setupProblem: string | undefined = 'setting up';
  /** Why a partition's reader stopped on its own, until that partition is read again (or given up). */
  private readonly readerProblems = new Map<number, string>();
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Aborted by stop(): wakes a set-up still waiting for its first connection. */
  private readonly stopping = new AbortController();
  /** The one stop, for every caller of stop(). */
  private stopDone: Promise<void> | undefined;

  constructor(
    settings: JetStreamSourceSettings,
    private readonly ctx: ComponentContext,
  ) {
    this.settings = settings;
    this.metrics = jetStreamSourceMetrics(ctx.registry);
    this.labels = { component_id: ctx.id };
    this.metrics.ownedPartitions.set(this.labels, 0);
    const base = `${hostname()}-${process.pid}`.replace(/[^A-Za-z0-9_-]/g, '_');
    // Each shard of a sharded run is a member of its own: its id, its connection's name (the
    // server's connz) and every record it logs name the shard.
    const shard = ctx.shard?.index;
    const suffix = shard === undefined ? '' : `-s${shard}`;
    this.memberId = `${base}${suffix}-${randomBytes(4).toString('hex')}`;
    this.log = shard === undefined ? ctx.log : (level, message, fields) => ctx.log(level, message, { shard, ...fields });
    const { connection } = settings;
    const name = connection.name + suffix;
    const named = shard === undefined ? connection : { ...connection, name, options: { ...connection.options, name } };
    this.link = new NatsLink({ settings: named, log: this.log, onConnected: () => this.reconnected() });
  }

  health(): Health {
    const link = this.link.describe();
    if (!link.up) return unhealthy(link.message);
    if (this.setupProblem !== undefined) return unhealthy(this.setupProblem);
    const leaseProblem = this.keeper?.problem();
    if (leaseProblem) return unhealthy(leaseProblem);
    const readerProblem = this.readerProblems.values().next().value;
    if (readerProblem !== undefined) return unhealthy(readerProblem);
    const owned = this.keeper?.ownedPartitions() ?? [];
    const { stream, group } = this.settings;
    return healthy(
      `group ${group} member ${this.memberId} owns ${owned.length === 0 ? 'no partitions' : `partitions ${owned.join(', ')}`} of ${this.layout?.partitions} of stream ${stream}`,
    );
  }

  /** The settings it runs with. */
  current(): JetStreamSourceSettings {
    return this.settings;
  }

  /** Joins the group and starts reading, sending what it reads to `receiver`. */
  start(receiver: LogsReceiver): void {
    if (this.receiver !== undefined || this.stopped) throw new GroupReaderUsedError();
    this.receiver = receiver;
    // Setting up waits for the server; whoever starts it must not wait with it.
    this.running = this.setUp();
  }

  /** Takes settings `acceptedSettings(FIXED_SOURCE_SETTINGS, …)` accepted; they apply to partitions acquired afterwards. */
  update(next: JetStreamSourceSettings): void {
    this.settings = next;
  }

  /** Releases every partition after acknowledging what is in flight, then disconnects; once. */
  stop(): Promise<void> {
    this.stopDone ??= this.stopOnce();
    return this.stopDone;
  }

  private async stopOnce(): Promise<void> {
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
          this.log('warn', 'the lease bucket exists with another TTL; using it', { bucket: this.bucketName(), ttl_ms: ttlMs });
        if (this.stopped) return;
        this.keeper = new LeaseKeeper({
          kv,
          memberId: this.memberId,
          partitions: this.layout.partitions,
          ttlMs,
          log: this.log,
          acquire: (p, token) => this.startReader(p, token),
          release: (p) => this.drainReader(p),
          lost: (p) => this.abandonReader(p),
          renewed: (p) => this.renewed(p),
          changed: (change) => {
            this.metrics.partitionChanges.inc({ ...this.labels, change });
            this.metrics.ownedPartitions.set(this.labels, this.keeper?.ownedPartitions().length ?? 0);
          },
        });
        this.keeper.start();
        this.setupProblem = undefined;
        this.log('info', 'joined group', {
          group: this.settings.group,
          member: this.memberId,
          partitions: this.layout.partitions,
        });
        return;
      } catch (err) {
        const problem = errorText(err);
        if (problem !== this.setupProblem)
          this.log('error', 'setting up failed, retrying', { stream: this.settings.stream, error: problem });
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

  private startReader(partition: number, token: number): void {
    // A new session: whatever stopped the last one is no longer the partition's state.
    this.readerProblems.delete(partition);
    const layout = this.layout!;
    const { stream, group, maxInFlight, ackDelayMs, ackWaitMs, maxEntriesPerMessage } = this.settings;
    const reader: PartitionReader = new PartitionReader({
      js: layout.js,
      jsm: layout.jsm,
      stream,
      subject: partitionSubject(layout.prefix, partition),
      consumerPrefix: `${group}-${partition}`,
      token,
      partition,
      maxInFlight,
      ackDelayMs,
      ackWaitMs,
      maxEntriesPerMessage,
      termReasons: takesTermReasons(this.link.connection()?.info?.version),
      maxPayloadBytes: this.link.connection()?.info?.max_payload ?? DEFAULT_MAX_PAYLOAD_BYTES,
      forward: (entries, options) => this.forward(entries, options),
      ...(this.leftovers.has(partition) ? { after: this.afterLeftovers(partition) } : {}),
      holds: () => this.keeper?.holds(partition, token) === true,
      failed: (error) => this.restartReader(partition, reader, error),
      ackAgain: async (reply) => void (await this.link.connection()?.request(reply, '+ACK', { timeout: 5000 })),
      metrics: this.metrics,
      labels: this.labels,
      log: this.log,
    });
    this.readers.set(partition, reader);
    this.toReadAgain.delete(partition);
    reader.start().catch((err) => this.restartReader(partition, reader, `reading partition ${partition} failed: ${errorText(err)}`));
  }

  /** A reader that stopped on its own starts again from the acknowledgement floor, if the lease is still held. */
  private restartReader(partition: number, reader: PartitionReader, error: string): void {
    if (this.readers.get(partition) !== reader) return;
    this.readerProblems.set(partition, error);
    this.log('error', 'partition reader stopped, restarting', { partition, error });
    this.endSession(partition, reader);
    setTimeout(() => this.readAgain(partition, reader), RETRY_MS);
  }

  /** Ends the reader's session, to read the partition again from its floor (readAgain). */
  private endSession(partition: number, reader: PartitionReader): void {
    reader.abandon();
    this.keepLeftovers(partition, reader);
    this.toReadAgain.set(partition, { reader, ended: true });
  }

  /**
   * Starts reading again a partition whose session ended, from its acknowledgement floor, once the
   * lease is confirmed: at the next renewal, or a timer's try in case none comes. A lease fenced
   * for a moment is waited for (giving up left the partition held and unread for good); one lost
   * or released meanwhile ends it here.
   */
  private readAgain(partition: number, reader: PartitionReader): void {
    const pending = this.toReadAgain.get(partition);
    if (pending?.reader !== reader || !pending.ended) return;
    const token = this.keeper?.tokenOf(partition);
    if (this.stopped || this.readers.get(partition) !== reader || token === undefined) {
      // The lease went (or a new grant's reader took over): this reader's failure is over with it.
      if (this.readers.get(partition) === reader || !this.readers.has(partition)) this.readerProblems.delete(partition);
      this.toReadAgain.delete(partition);
      return;
    }
    if (!this.keeper?.holds(partition, token)) {
      setTimeout(() => this.readAgain(partition, reader), RETRY_MS);
      return;
    }
    this.startReader(partition, token);
  }

  /** A lease was renewed: its reader goes on, or one whose session ended starts again. */
  private renewed(partition: number): void {
    const pending = this.toReadAgain.get(partition);
    // A session still ending goes on acknowledging what it forwarded.
    if (pending?.ended === false) pending.reader.resume();
    else if (pending) this.readAgain(partition, pending.reader);
    else this.readers.get(partition)?.resume();
  }

  /**
   * The connection came up again. What the old one carried last may be lost: renewals (the keeper
   * fences the leases until one over the new connection succeeds), acknowledgements, and messages
   * the server delivered into it, which a session going on would take for redeliveries when they
   * come again after their ack_wait, and drop. So every session ends: it takes nothing more, and
   * once the lease is confirmed acknowledges what it forwarded and repeats its last
   * acknowledgement (each covers those before it, dropped ones among them, and none covers a
   * message lost after the last one it received). Then each partition is read again from its
   * acknowledgement floor.
   */
  private reconnected(): void {
    this.keeper?.reconnected();
    for (const [partition, reader] of this.readers) {
      if (this.toReadAgain.has(partition)) continue;
      const pending = { reader, ended: false };
      this.toReadAgain.set(partition, pending);
      void reader.endAfterReconnect().then(
        () => {
          pending.ended = true;
          this.keepLeftovers(partition, reader);
          this.readAgain(partition, reader);
        },
        (err) =>
          this.restartReader(partition, reader, `ending partition ${partition}'s reading after a reconnection failed: ${errorText(err)}`),
      );
    }
  }

  private async drainReader(partition: number): Promise<void> {
    const reader = this.readers.get(partition);
    if (!reader) return;
    // Stopping, a block still open is handed back to the next owner; handing over, it is sent on.
    await reader.drain(this.stopped);
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
    this.toReadAgain.delete(partition);
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
    this.log('info', 'waiting for what the previous reading of the partition still has in the pipeline', { partition });
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), LEFTOVERS_WAIT_MS)));
    return Promise.race([leftovers.then(() => false), gaveUp]).then((timedOut) => {
      clearTimeout(timer);
      if (timedOut)
        this.log('warn', 'reading the partition again while the previous reading still has entries in the pipeline', { partition });
    });
  }

  private forward(entries: Entry[], options: SendOptions): Promise<void> {
    // Acknowledged upstream once this resolves: wait for lines a stage still holds (an open
    // multiline block), or a lost instance would lose them with their messages acknowledged.
    return this.receiver!.send(entries, { ...options, untilSentOn: true });
  }
}
