/**
 * Reads one partition for as long as this instance holds its lease: a durable pull consumer
 * `<group>-<partition>` filtered to `<prefix>.<partition>`, with explicit acknowledgements.
 *
 * Starting (after acquiring the lease) the reader re-creates the consumer at the old one's
 * acknowledgement floor + 1 — or at the old one's own start sequence, when that is later: a
 * consumer created at a start sequence reports a floor of 0 until it acknowledges its first
 * message, and a new owner that trusted it read the whole partition again. A consumer keeps
 * messages delivered to a previous owner pending until their ack wait runs out and meanwhile
 * goes on with newer ones, which would put a stream's entries out of order; starting afresh from
 * the floor delivers everything not acknowledged again, first, in stream order (at least once:
 * what the previous owner forwarded but had not acknowledged arrives twice). The durable consumer
 * is what a restarted group resumes from.
 *
 * Messages are taken as they arrive, decoded and forwarded in batches without waiting for the
 * previous batch (up to `maxInFlight` unacknowledged messages: the consumer's max_ack_pending);
 * each batch is acknowledged, in order, once every receiver took it over and `ackDelayMs` more
 * has passed. The delay is for receivers that acknowledge entries they still hold (a multiline
 * block waiting for its next line, a writer's in-memory batch): if the process dies within it,
 * JetStream delivers those messages again to the next owner.
 *
 * A message that does not decode is counted, logged and terminated, so it is never delivered
 * again. A message delivered again while its first delivery is still in flight (its ack wait ran
 * out) is not forwarded twice; one already acknowledged is acknowledged again.
 *
 * While `holds()` is false (a renewal late on a busy event loop) nothing is forwarded or
 * acknowledged, but nothing is given up either: `resume()`, called when the lease is renewed,
 * goes on where it stopped. Only `abandon()` (the lease is gone) ends the session.
 *
 * A session's batches may outlive it: what was forwarded before `abandon()` is still on its way
 * through the receivers, and a stage may hold its lines (an open multiline block). `settled()`
 * tells when that is over; `after` makes a new session wait for it, so lines read again are never
 * mixed into what a stage still holds from before.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { decodeEntryBatch, MalformedEntryMessage } from '../../lib/jetstream/entry_codec.js';
import { errorText } from '../../lib/jetstream/connection.js';
import type { Log } from '../../lib/log.js';
import { copyMap, makeEntry, type Entry } from '../../core/entry.js';
import type { JetStreamSourceMetrics } from './metrics.js';

/** Longest a hand-over waits for the receivers to take over what is in flight (ack delay aside). */
const DRAIN_TIMEOUT_MS = 30_000;

export interface PartitionReaderOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  readonly subject: string;
  readonly durable: string;
  readonly partition: number;
  readonly maxInFlight: number;
  readonly ackDelayMs: number;
  readonly ackWaitMs: number;
  readonly forward: (entries: Entry[]) => Promise<void>;
  /** The reader reads nothing before this settles (the previous session's batches, see settled()). */
  readonly after?: Promise<void>;
  /** Whether the lease still allows forwarding and acknowledging. */
  readonly holds: () => boolean;
  /** The reader stopped on its own (a receiver refused a batch, the consumer failed). */
  readonly failed: (error: string) => void;
  readonly metrics: JetStreamSourceMetrics;
  readonly labels: { component_id: string };
  readonly log: Log;
}

/** Messages forwarded together, acknowledged together once taken over. */
interface InFlight {
  /** In stream order; malformed ones are terminated in their place, so the floor moves in order. */
  readonly messages: JsMsg[];
  readonly malformed: ReadonlySet<JsMsg>;
  /** Resolves with the time the receivers took the batch over. */
  readonly takenOver: Promise<number>;
}

export class PartitionReader {
  private state: 'starting' | 'running' | 'draining' | 'stopped' = 'starting';
  private consumer: ConsumerMessages | undefined;
  private incoming: JsMsg[] = [];
  private pumpScheduled = false;
  private readonly inFlight: InFlight[] = [];
  private acking: Promise<void> | undefined;
  /** Highest stream sequence forwarded (or terminated) in this session. */
  private highestSeen = 0;
  /** Highest stream sequence acknowledged in this session. */
  private ackedThrough = 0;
  private ackTimer: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  /** Whoever waits for the lease to be held again (see resume()). */
  private leaseWaiters: Array<() => void> = [];
  /** Batches forwarded in this session that the receivers have not settled yet, acknowledged or not. */
  private readonly unsettled = new Set<Promise<unknown>>();

  constructor(private readonly options: PartitionReaderOptions) {}

  /** Re-creates the consumer at the acknowledgement floor and starts consuming. */
  async start(): Promise<void> {
    const { js, jsm, stream, durable, subject, maxInFlight, ackWaitMs, log, partition } = this.options;
    if (this.options.after) await this.options.after;
    if (this.state !== 'starting') return;
    let startSeq = 1;
    try {
      const info = await jsm.consumers.info(stream, durable);
      // Everything before the old consumer's start was acknowledged before it was created.
      startSeq = Math.max(info.ack_floor.stream_seq + 1, info.config.opt_start_seq ?? 1);
      await jsm.consumers.delete(stream, durable);
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.ConsumerNotFound) throw err;
    }
    if (this.state !== 'starting') return;
    await jsm.consumers.add(stream, {
      durable_name: durable,
      filter_subject: subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: startSeq,
      max_ack_pending: maxInFlight,
      ack_wait: nanos(ackWaitMs),
      max_deliver: -1,
    });
    if (this.state !== 'starting') return;
    const consumer = await js.consumers.get(stream, durable);
    this.consumer = await consumer.consume({ max_messages: Math.min(maxInFlight, 1000), callback: (m) => this.receive(m) });
    if (this.state !== 'starting') {
      await this.consumer.close();
      return;
    }
    this.state = 'running';
    log('debug', 'reading partition', { partition, from_sequence: startSeq });
  }

  /**
   * Stops taking messages and waits until what was forwarded is acknowledged (ack delay
   * included). Messages received but not forwarded are left to the next owner.
   */
  async drain(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'draining';
    this.handBack();
    await this.consumer?.close().catch(() => {});
    // A receiver that never takes its batch over (an endpoint that stays down) must not hold the
    // hand-over forever: what is still unacknowledged then goes to the next owner.
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.options.ackDelayMs + DRAIN_TIMEOUT_MS)));
    const timedOut = await Promise.race([(this.acking ?? Promise.resolve()).then(() => false), gaveUp]);
    clearTimeout(timer);
    if (timedOut) {
      this.options.log('warn', 'gave up waiting for in-flight entries; the next owner reads them again', {
        partition: this.options.partition,
      });
      this.abandon();
    }
    this.state = 'stopped';
  }

  /** Stops at once, acknowledging nothing more (the lease is gone). */
  abandon(): void {
    this.state = 'stopped';
    this.handBack();
    this.inFlight.length = 0;
    this.ackTimer?.wake();
    this.wakeLeaseWaiters();
    void this.consumer?.close().catch(() => {});
  }

  /**
   * The lease was renewed: forwarding and acknowledging go on if they stopped while it could have
   * lapsed.
   */
  resume(): void {
    if (!this.options.holds()) return;
    this.wakeLeaseWaiters();
    if (this.incoming.length > 0 && !this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(() => this.pump());
    }
  }

  /**
   * Settles once every batch this session forwarded has been taken over or refused by the
   * receivers — with `untilSentOn`, once no stage holds any of its lines any more. After
   * `abandon()` nothing is added, so a next session can wait for it.
   */
  settled(): Promise<void> {
    return Promise.allSettled([...this.unsettled]).then(() => undefined);
  }

  /** Read through a call, as it changes across awaits. */
  private isStopped(): boolean {
    return this.state === 'stopped';
  }

  private wakeLeaseWaiters(): void {
    for (const wake of this.leaseWaiters.splice(0)) wake();
  }

  /**
   * Gives back the messages received but not forwarded: the next owner gets them at once, where
   * JetStream would otherwise hold them until their ack_wait ran out (a minute by default).
   */
  private handBack(): void {
    for (const message of this.incoming.splice(0)) message.nak();
  }

  private receive(message: JsMsg): void {
    if (this.state !== 'running' && this.state !== 'starting') {
      // Not ours to forward any more: handed back at once rather than after ack_wait.
      message.nak();
      return;
    }
    this.incoming.push(message);
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    // Everything that arrived in the same read of the socket goes out as one batch.
    setImmediate(() => this.pump());
  }

  private pump(): void {
    this.pumpScheduled = false;
    if (this.state !== 'running' && this.state !== 'starting') return;
    // Kept in `incoming` until resume() (lease renewed) or abandon() (lease lost, handed back).
    if (!this.options.holds()) return;
    const { metrics, labels, log, partition } = this.options;
    const entries: Entry[] = [];
    const messages: JsMsg[] = [];
    const malformed = new Set<JsMsg>();
    for (const message of this.incoming.splice(0)) {
      const seq = message.seq;
      if (seq <= this.highestSeen) {
        metrics.redeliveredMessages.inc(labels);
        if (seq <= this.ackedThrough) message.ack();
        continue;
      }
      this.highestSeen = seq;
      let batch;
      try {
        batch = decodeEntryBatch(message.data);
      } catch (err) {
        metrics.malformedMessages.inc(labels);
        log('warn', 'terminating a message that does not decode', {
          partition,
          sequence: seq,
          bytes: message.data.length,
          error: err instanceof MalformedEntryMessage ? err.message : errorText(err),
        });
        malformed.add(message);
        messages.push(message);
        continue;
      }
      for (const e of batch.entries)
        entries.push(
          makeEntry({ labels: copyMap(batch.labels), line: e.line, timestamp: e.timestamp, structuredMetadata: e.structuredMetadata }),
        );
      messages.push(message);
    }
    if (messages.length === 0) return;
    metrics.receivedMessages.inc(labels, messages.length - malformed.size);
    metrics.receivedEntries.inc(labels, entries.length);
    const takenOver =
      entries.length === 0 ? Promise.resolve(performance.now()) : this.options.forward(entries).then(() => performance.now());
    // Failures are handled in order by the acknowledging loop.
    takenOver.catch(() => {});
    this.unsettled.add(takenOver);
    void takenOver.finally(() => this.unsettled.delete(takenOver)).catch(() => {});
    this.inFlight.push({ messages, malformed, takenOver });
    this.acking ??= this.ackInOrder().finally(() => (this.acking = undefined));
  }

  /** Acknowledges the batches in order, each once taken over and its ack delay has passed. */
  private async ackInOrder(): Promise<void> {
    const { ackDelayMs, metrics, labels } = this.options;
    while (this.inFlight.length > 0) {
      const head = this.inFlight[0]!;
      let at: number;
      try {
        at = await head.takenOver;
      } catch (err) {
        if (this.state === 'stopped') return;
        this.fail(`a receiver refused entries: ${errorText(err)}`);
        return;
      }
      const wait = at + ackDelayMs - performance.now();
      if (wait > 0) await this.sleep(wait);
      if (this.state === 'stopped' || this.inFlight[0] !== head) return;
      // A lease that may have lapsed is not given up here: the keeper either renews it (resume())
      // or finds it lost (abandon()). Returning instead left the batches unacknowledged for good
      // once the renewal came through, and the partition stalled at max_in_flight.
      while (!this.options.holds()) {
        await new Promise<void>((resolve) => this.leaseWaiters.push(resolve));
        if (this.isStopped() || this.inFlight[0] !== head) return;
      }
      const last = head.messages.length - 1;
      // The last acknowledgement before a hand-over is confirmed by the server, so the next
      // owner reads an acknowledgement floor that includes everything acknowledged here.
      const confirm = this.state === 'draining' && this.inFlight.length === 1;
      for (let i = 0; i <= last; i++) {
        const message = head.messages[i]!;
        if (head.malformed.has(message))
          // No reason text: servers before 2.10 recognise only the bare +TERM.
          message.term();
        else if (i === last && confirm) await message.ackAck().catch(() => false);
        else message.ack();
      }
      this.ackedThrough = head.messages[last]!.seq;
      metrics.ackedMessages.inc(labels, head.messages.length - head.malformed.size);
      this.inFlight.shift();
    }
  }

  private fail(error: string): void {
    this.options.metrics.forwardFailures.inc(this.options.labels);
    this.abandon();
    this.options.failed(error);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.ackTimer = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.ackTimer = { timer, wake };
    });
  }
}
