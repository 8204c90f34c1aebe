/**
 * Reads one partition for as long as this instance holds its lease, through a durable pull
 * consumer filtered to `<prefix>.<partition>` whose acknowledgements each cover every message
 * before (ack policy "all": they go out in stream order). The consumer belongs
 * to one lease grant: it is named `<group>-<partition>-<token>`, the token being the revision of
 * the lease key when it was taken (revisions only grow, so a later owner has a larger token).
 *
 * Fencing. Every owner reads from a consumer of its own, so a former owner that has not noticed
 * yet that its lease is gone (a stalled process) can pull only from its own consumer, never from
 * the new owner's: when every owner shared one durable name, a stalled former owner pulled
 * messages from the new owner's consumer and handed them back, and the new owner, having read past
 * them, took them for redeliveries of messages it had forwarded and dropped them. Starting, a
 * reader finds the partition's consumers of earlier grants, creates its own at the acknowledgement
 * floor of the latest of them + 1 — or at that consumer's own start sequence, when that is later:
 * a consumer created at a start sequence reports a floor of 0 until it acknowledges its first
 * message — and then deletes the earlier ones, which ends whatever a former owner still pulls from
 * them. (Created before the others are deleted: a partition never lacks the consumer that holds
 * its position, so a whole group that restarts resumes where it stopped.) A consumer of a later
 * grant than its own means the reader is the former owner: it reads nothing. Starting afresh from
 * the floor delivers everything not acknowledged again, first, in stream order (at least once:
 * what the previous owner forwarded but had not acknowledged arrives twice).
 *
 * While `holds()` is false (the lease is not known to be current: a renewal late on a busy event
 * loop) nothing is pulled, forwarded or acknowledged, but nothing is given up either: `resume()`,
 * called when the lease is renewed, goes on where it stopped, in the middle of a message if need
 * be. Only `abandon()` (the lease is gone) ends the session; what it received and had not
 * forwarded is handed back (nak) to its own consumer, and a session that handed a message back
 * reads nothing more, so nothing handed back is ever taken for a message already forwarded.
 *
 * Messages are fetched while fewer than FETCH_BYTES of them wait to be decoded, so a backlog of
 * large messages is not pulled in whole, and decoded in slices of entries (lib/slices.ts), across
 * messages for small ones and within a message for a large one. Each slice is forwarded as a batch
 * without waiting for the previous one (up to `maxInFlight` unacknowledged messages: the
 * consumer's max_ack_pending), and the event loop gets a turn before the next: a message of a
 * hundred thousand tiny entries neither holds the loop (lease renewals, acknowledgements) for its
 * whole decoding nor lives in memory whole. While MAX_FORWARDING_ENTRIES entries are on their way
 * through the receivers, decoding waits. A message is acknowledged with the batch holding its last
 * entry; batches are acknowledged, in order, once every receiver took them over and `ackDelayMs`
 * more has passed. The delay is for receivers that acknowledge entries they still hold (a multiline
 * block waiting for its next line, a writer's in-memory batch): if the process dies within it,
 * JetStream delivers those messages again to the next owner.
 *
 * A session lives on one connection. The client drops what it sends while disconnected
 * (acknowledgements among it), and what the server delivered into a connection that went down is
 * lost, so the consumer goes on with later messages while those wait as pending for their
 * ack_wait; delivered again then, they were taken for redeliveries of messages already forwarded
 * (their sequence is below the highest forwarded) and dropped. So the group reader ends every
 * session when the connection comes back (group-reader.ts): `endAfterReconnect()` takes nothing
 * more, acknowledges what was forwarded and sends its last acknowledgement again; an
 * acknowledgement covers the ones before it that were dropped, and none covers a message after the
 * last one received. The next session starts at the floor.
 *
 * A message that does not decode, or declares more than `maxEntriesPerMessage` entries, is
 * counted with its reason, logged and terminated (before any of its entries is forwarded), so it
 * is never delivered again. A message delivered again while its first delivery is still in flight
 * (its ack wait ran out) is not forwarded twice; one already acknowledged is acknowledged again.
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
  type Consumer,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { decodeEntryBatchSteps, EntryCountExceeded, MalformedEntryMessage, type DecodedBatch } from '../../lib/jetstream/entry-codec.js';
import { errorText } from '../../lib/jetstream/connection.js';
import { ItemSlices } from '../../lib/slices.js';
import type { Log } from '../../lib/log.js';
import { copyMap, makeEntry, type Entry } from '../../core/entry.js';
import { HandBack, HandedBackError } from '../../core/hand-back.js';
import { InputBacklog } from '../../core/input-time.js';
import type { SendOptions } from '../../core/receiver.js';
import type { JetStreamSourceMetrics } from './metrics.js';

/** Longest a hand-over waits for the receivers to take over what is in flight (ack delay aside). */
const DRAIN_TIMEOUT_MS = 30_000;

/**
 * Entries forwarded and not yet taken over beyond which decoding waits. Several slices, so that
 * a batch whose last line a stage holds (an open multiline block, sent on with the next batch's
 * lines) never stops the reading.
 */
export const MAX_FORWARDING_ENTRIES = 16_384;

/** Entries and metadata pairs checked or decoded between two turns of the event loop, as for a push. */
const SLICE_ITEMS = 1024;

/**
 * Messages up to this size are forwarded whole, the turn of the event loop a full slice asks for
 * coming after them: a pause inside a message looks like idle input to a time-based stage (a
 * multiline block whose next lines wait in the reader would be flushed by its max_wait_time on a
 * stalled machine). Only a message larger than this (tens of thousands of tiny entries) is cut.
 */
const WHOLE_MESSAGE_BYTES = 256 * 1024;

/**
 * Bytes of messages received and not yet decoded beyond which no more are fetched; a fetch asks
 * for about as many messages as fill what is left, going by the size of those fetched before.
 * The client's consume() pulls again as soon as messages arrive, whatever is still undecoded, so a
 * backlog of large messages came in whole, up to max_in_flight of them. (A fetch by max_bytes
 * does not end on 2.9 servers until its heartbeats are missed.)
 */
const FETCH_BYTES = 4 * 1024 * 1024;
/** Most messages one fetch asks for. */
const MAX_FETCH_MESSAGES = 1000;
/** How long one fetch stays open waiting for messages before the next is asked for. */
const FETCH_EXPIRES_MS = 5000;
/** Failed fetches in a row that end a session (it starts again from the acknowledgement floor). */
const FETCH_ATTEMPTS = 3;
const FETCH_RETRY_MS = 1000;

/** Why a message was terminated, the `reason` of the terminated-messages metric. */
export type TerminationReason = 'malformed' | 'too_many_entries';

export interface PartitionReaderOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  readonly subject: string;
  /** `<group>-<partition>`: the consumers of the partition are this and `-<token>`. */
  readonly consumerPrefix: string;
  /** The fencing token of the lease grant this session reads under (the lease key's revision). */
  readonly token: number;
  readonly partition: number;
  readonly maxInFlight: number;
  readonly ackDelayMs: number;
  readonly ackWaitMs: number;
  /** A message declaring more entries is terminated unread. */
  readonly maxEntriesPerMessage: number;
  /** The server's max_payload: the size assumed of messages before any was fetched. */
  readonly maxPayloadBytes: number;
  /** Whether the server takes a reason with a termination (2.10 and later; 2.9 ignores `+TERM <reason>`). */
  readonly termReasons: boolean;
  /** Messages up to this many bytes are forwarded whole (WHOLE_MESSAGE_BYTES unless given). */
  readonly wholeMessageBytes?: number;
  /**
   * Sends a batch on; `options` carry the session's backlog (messages received and not forwarded
   * yet, during which the pipeline's stages do not take the input for idle) and its hand-back
   * (requested at a stop: what a stage still holds is dropped and not acknowledged).
   */
  readonly forward: (entries: Entry[], options: SendOptions) => Promise<void>;
  /** The reader reads nothing before this settles (the previous session's batches, see settled()). */
  readonly after?: Promise<void>;
  /** Whether the lease still allows forwarding and acknowledging. */
  readonly holds: () => boolean;
  /** The reader stopped on its own (a receiver refused a batch, the consumer failed). */
  readonly failed: (error: string) => void;
  /**
   * Sends an acknowledgement again, confirmed, to a message's reply subject (the client's JsMsg
   * sends one only once). Without it `endAfterReconnect()` does not repeat the last one.
   */
  readonly ackAgain?: (reply: string) => Promise<void>;
  readonly metrics: JetStreamSourceMetrics;
  readonly labels: { component_id: string };
  readonly log: Log;
}

/** Messages whose last entries were forwarded together, acknowledged together once taken over. */
interface InFlight {
  /**
   * In stream order; terminated ones are terminated in their place, so the floor moves in order.
   * Empty for a slice in the middle of a message.
   */
  readonly messages: JsMsg[];
  /** The termination text of each message terminated. */
  readonly terminated: ReadonlyMap<JsMsg, string>;
  /** Resolves with the time the receivers took the batch over. */
  readonly takenOver: Promise<number>;
}

/** A batch being put together: the entries of one slice and the messages it completes. */
interface Outgoing {
  readonly entries: Entry[];
  readonly messages: JsMsg[];
  readonly terminated: Map<JsMsg, string>;
}

/** The message being decoded, kept across turns of the event loop. */
interface Reading {
  readonly message: JsMsg;
  readonly steps: Generator<DecodedBatch, DecodedBatch, void>;
}

const outgoing = (): Outgoing => ({ entries: [], messages: [], terminated: new Map() });

export class PartitionReader {
  private state: 'starting' | 'running' | 'draining' | 'stopped' = 'starting';
  /** The fetch under way. */
  private fetching: ConsumerMessages | undefined;
  /** Bytes of the messages in `incoming` and `reading`. */
  private receivedBytes = 0;
  /** Whoever waits for receivedBytes to go down. */
  private fetchWaiters: Array<() => void> = [];
  private incoming: JsMsg[] = [];
  /** The message decoded so far, when a slice ended inside it. */
  private reading: Reading | undefined;
  private pumpScheduled = false;
  private pumping: Promise<void> | undefined;
  /** Entries forwarded whose batch the receivers have not taken over (or refused) yet. */
  private forwardingEntries = 0;
  /** Whoever waits for forwardingEntries to go down. */
  private roomWaiters: Array<() => void> = [];
  private readonly inFlight: InFlight[] = [];
  private acking: Promise<void> | undefined;
  /** Highest stream sequence forwarded (or terminated) in this session. */
  private highestSeen = 0;
  /** Highest stream sequence acknowledged in this session. */
  private ackedThrough = 0;
  /** The message acknowledged last: its acknowledgement covers every one before it. */
  private lastAcked: JsMsg | undefined;
  /** Set by abandon(): the session acknowledges nothing more. */
  private abandoned = false;
  private ackTimer: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  /** Whoever waits for the lease to be held again (see resume()). */
  private leaseWaiters: Array<() => void> = [];
  /** Batches forwarded in this session that the receivers have not settled yet, acknowledged or not. */
  private readonly unsettled = new Set<Promise<unknown>>();
  /** Messages received and not forwarded yet, for the stages' idle timers (core/input-time.ts). */
  private readonly backlog = new InputBacklog();
  private releaseBacklog: (() => void) | undefined;
  /** While decoding waits for the receivers to take entries over: not input waiting on us (see noteBacklog). */
  private waitingForRoom = false;
  /** Requested when the session ends: stages drop what they hold of its batches (core/hand-back.ts). */
  private readonly handBackHeld = new HandBack();
  private readonly sendOptions: SendOptions = { backlog: this.backlog, handBack: this.handBackHeld };

  constructor(private readonly options: PartitionReaderOptions) {}

  /** Creates this grant's consumer at the acknowledgement floor, deletes earlier grants' ones, and starts fetching. */
  async start(): Promise<void> {
    const { js, jsm, stream, subject, maxInFlight, ackWaitMs, log, partition, token } = this.options;
    if (this.options.after) await this.options.after;
    if (this.state !== 'starting') return;
    const durable = this.consumerName();
    const earlier: ConsumerInfo[] = [];
    for await (const info of await jsm.consumers.list(stream)) {
      // A consumer deleted while the server pages the list is listed as null.
      if (!info?.config) continue;
      const of = this.grantOf(info);
      if (of === undefined) continue;
      if (of > token) throw new Error(`partition ${partition} has a newer owner (lease token ${of}, this reader's ${token})`);
      earlier.push(info);
    }
    // The latest grant's consumer was created at the floor of those before it.
    const latest = earlier.sort((a, b) => this.grantOf(b)! - this.grantOf(a)!)[0];
    // Everything before a consumer's start was acknowledged before it was created.
    const startSeq = latest ? Math.max(latest.ack_floor.stream_seq + 1, latest.config.opt_start_seq ?? 1) : 1;
    if (this.state !== 'starting') return;
    // A reader started again under the same grant (after a refused batch) replaces its consumer.
    if (latest?.name === durable) await this.deleteConsumer(durable);
    // Once a consumer is deleted the new one is created even if the session ended meanwhile (a stop
    // or a lost lease): the consumers are where the partition's position lives, and without one
    // the next owner read the partition again from its first message.
    await jsm.consumers.add(stream, {
      durable_name: durable,
      description: this.description(token),
      filter_subject: subject,
      ack_policy: AckPolicy.All,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: startSeq,
      max_ack_pending: maxInFlight,
      ack_wait: nanos(ackWaitMs),
      max_deliver: -1,
    });
    for (const old of earlier) if (old.name !== durable) await this.deleteConsumer(old.name);
    await this.settleStartRace(durable);
    if (this.state !== 'starting') return;
    const consumer = await js.consumers.get(stream, durable);
    if (this.state !== 'starting') return;
    this.state = 'running';
    log('debug', 'reading partition', { partition, from_sequence: startSeq, consumer: durable });
    void this.fetchWhileReading(consumer);
  }

  /**
   * Lists the partition's consumers again once this grant's exists. Two grants' readers may start
   * at once (a lease handed on while the former reader was still creating its consumer), and each
   * may have listed before the other's consumer existed: then the former grant's consumer stayed
   * behind, unread, holding every message as pending. Listing after creating settles it whichever
   * create landed last: an earlier grant's consumer is deleted, and a reader that finds a later
   * grant's deletes its own (it has read nothing through it) and reads nothing.
   */
  private async settleStartRace(durable: string): Promise<void> {
    const { jsm, stream, partition, token } = this.options;
    let newer: number | undefined;
    const older: string[] = [];
    for await (const info of await jsm.consumers.list(stream)) {
      if (!info?.config || info.name === durable) continue;
      const of = this.grantOf(info);
      if (of === undefined) continue;
      if (of > token) newer = Math.max(newer ?? of, of);
      else older.push(info.name);
    }
    for (const name of older) await this.deleteConsumer(name);
    if (newer === undefined) return;
    await this.deleteConsumer(durable);
    throw new Error(`partition ${partition} has a newer owner (lease token ${newer}, this reader's ${token})`);
  }

  /** This grant's consumer: `<group>-<partition>-<token>`, described as such. */
  consumerName(): string {
    return `${this.options.consumerPrefix}-${this.options.token}`;
  }

  /** What a grant's consumer says it is: its name alone could be another group's (groups may contain "-"). */
  private description(token: number): string {
    return `partition consumer ${this.options.consumerPrefix}, lease grant ${token}`;
  }

  /**
   * The grant a consumer belongs to, if it is one of this partition's: the one its description
   * names, or grant 0 for the consumer named `<group>-<partition>` that every owner shared
   * before grants had consumers of their own.
   */
  private grantOf(info: ConsumerInfo): number | undefined {
    const described = /^partition consumer (.+), lease grant ([0-9]+)$/.exec(info.config.description ?? '');
    if (described) return described[1] === this.options.consumerPrefix ? Number(described[2]) : undefined;
    return info.name === this.options.consumerPrefix ? 0 : undefined;
  }

  private async deleteConsumer(name: string): Promise<void> {
    try {
      await this.options.jsm.consumers.delete(this.options.stream, name);
    } catch (err) {
      // Deleted meanwhile by another reader of a later grant, or gone already.
      if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.ConsumerNotFound) throw err;
    }
  }

  /**
   * Fetches whenever the messages received and not yet decoded leave room. A failed fetch (a
   * connection that dropped for a moment, heartbeats missed) is tried again after a pause, as
   * consume() would; FETCH_ATTEMPTS failures in a row, with no message between, end the session.
   */
  private async fetchWhileReading(consumer: Consumer): Promise<void> {
    let messageBytes = this.options.maxPayloadBytes;
    let failures = 0;
    while (this.isReading()) {
      while (this.receivedBytes >= FETCH_BYTES && this.isReading()) await new Promise<void>((resolve) => this.fetchWaiters.push(resolve));
      // A lease not known to be current pulls nothing: what is pulled now may belong to the next owner.
      while (!this.options.holds() && this.isReading()) await new Promise<void>((resolve) => this.leaseWaiters.push(resolve));
      if (!this.isReading()) return;
      const room = FETCH_BYTES - this.receivedBytes;
      const batch = Math.min(MAX_FETCH_MESSAGES, Math.max(1, Math.ceil(room / Math.max(1, messageBytes))));
      let received = 0;
      let bytes = 0;
      try {
        const messages = await consumer.fetch({ max_messages: batch, expires: FETCH_EXPIRES_MS });
        this.fetching = messages;
        if (!this.isReading()) {
          await messages.close();
          return;
        }
        for await (const message of messages) {
          received++;
          bytes += message.data.length;
          failures = 0;
          this.receive(message);
        }
      } catch (err) {
        if (!this.isReading()) return;
        if (++failures >= FETCH_ATTEMPTS) {
          this.abandon();
          this.options.failed(`fetching messages of partition ${this.options.partition} failed: ${errorText(err)}`);
          return;
        }
        this.options.log('debug', 'fetching messages failed, trying again', { partition: this.options.partition, error: errorText(err) });
        await new Promise((resolve) => setTimeout(resolve, FETCH_RETRY_MS));
      } finally {
        this.fetching = undefined;
      }
      if (received > 0) messageBytes = bytes / received;
    }
  }

  /**
   * Stops taking messages and waits until what was forwarded is acknowledged (ack delay
   * included). Messages received but not forwarded are left to the next owner, and so, with
   * `takeBack` (the source stops), are the lines a stage still holds in an open block.
   */
  async drain(takeBack = false): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'draining';
    this.handBackIncoming();
    await this.fetching?.close().catch(() => {});
    // The message being read is finished: handed back, its part already forwarded would reach the
    // next owner's pipeline twice.
    while (this.reading && this.state === 'draining' && this.options.holds()) await this.pump();
    // A block a stage still holds can only be completed by lines this session no longer reads.
    // Stopping (`takeBack`), it is handed back: dropped, its messages not acknowledged, so the next
    // owner completes it rather than get the rest of it as an orphan. Handing the partition over
    // while running on, it is sent on now: dropped, the lines a stage counted before it (metrics)
    // would be counted twice while nobody died, and waiting for max_wait_time would hold the
    // hand-over up for as long as other partitions keep the pipeline busy.
    if (takeBack) this.handBackHeld.request();
    else this.handBackHeld.end();
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
    this.backlog.close();
  }

  /**
   * Ends the session after the connection came back: as a graceful `drain()`, then sends the last
   * acknowledgement again once the lease is confirmed. The client dropped those it sent while
   * disconnected; that one covers them (ack policy all).
   */
  async endAfterReconnect(): Promise<void> {
    await this.drain();
    const last = this.lastAcked;
    while (last && !this.abandoned && !this.options.holds()) await new Promise<void>((resolve) => this.leaseWaiters.push(resolve));
    const reply = (last as { reply?: string } | undefined)?.reply;
    if (reply && !this.abandoned) await this.options.ackAgain?.(reply).catch(() => {});
  }

  /** Stops at once, acknowledging nothing more (the lease is gone). */
  abandon(): void {
    this.abandoned = true;
    this.state = 'stopped';
    this.handBack();
    this.handBackHeld.request();
    this.backlog.close();
    this.inFlight.length = 0;
    this.ackTimer?.wake();
    this.wakeLeaseWaiters();
    this.wakeRoomWaiters();
    void this.fetching?.close().catch(() => {});
  }

  /**
   * The lease was renewed: forwarding and acknowledging go on if they stopped while it could have
   * lapsed.
   */
  resume(): void {
    if (!this.options.holds()) return;
    this.wakeLeaseWaiters();
    if (this.incoming.length > 0 || this.reading) this.schedulePump();
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

  /** Read through a call, as it changes across awaits. */
  private isReading(): boolean {
    return this.state === 'running' || this.state === 'starting';
  }

  private wakeLeaseWaiters(): void {
    for (const wake of this.leaseWaiters.splice(0)) wake();
  }

  private wakeRoomWaiters(): void {
    for (const wake of this.roomWaiters.splice(0)) wake();
  }

  /** A received message is decoded, terminated or handed back: its bytes leave room to fetch. */
  private done(message: JsMsg): void {
    this.receivedBytes -= message.data.length;
    if (this.receivedBytes < FETCH_BYTES) for (const wake of this.fetchWaiters.splice(0)) wake();
  }

  /**
   * Gives back the messages received but not forwarded: the next owner gets them at once, where
   * JetStream would otherwise hold them until their ack_wait ran out (a minute by default).
   */
  private handBack(): void {
    // Part of it may be on its way already: it is read again whole, at least once.
    this.reading?.message.nak();
    this.reading = undefined;
    this.handBackIncoming();
  }

  /**
   * Tells the pipelines whether input waits here: received messages not forwarded yet, unless
   * decoding waits for the receivers to take entries over — which may take a stage's idle flush,
   * so counting that as queued input would wait for ever.
   */
  private noteBacklog(): void {
    const waiting = (this.incoming.length > 0 || this.reading !== undefined) && !this.waitingForRoom && this.state !== 'stopped';
    if (waiting) this.releaseBacklog ??= this.backlog.hold();
    else {
      this.releaseBacklog?.();
      this.releaseBacklog = undefined;
    }
  }

  /** Gives back the messages received and not read yet (not the one being read). */
  private handBackIncoming(): void {
    for (const message of this.incoming.splice(0)) {
      this.done(message);
      message.nak();
    }
    this.noteBacklog();
    this.wakeRoomWaiters();
    for (const wake of this.fetchWaiters.splice(0)) wake();
  }

  private receive(message: JsMsg): void {
    if (!this.isReading()) {
      // Not ours to forward any more: handed back at once rather than after ack_wait.
      message.nak();
      return;
    }
    this.incoming.push(message);
    this.receivedBytes += message.data.length;
    this.noteBacklog();
    // Everything that arrived in the same read of the socket goes out in the same slices.
    this.schedulePump();
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => void this.pump());
  }

  /** Runs forwardIncoming, one run at a time: a call while one runs waits for it. */
  private pump(): Promise<void> {
    this.pumpScheduled = false;
    this.pumping ??= this.forwardIncoming().finally(() => {
      this.pumping = undefined;
      this.noteBacklog();
      // Messages that came in while the last slice was on its way.
      if (this.incoming.length > 0 && this.isReading() && this.options.holds()) this.schedulePump();
    });
    return this.pumping;
  }

  /**
   * Decodes and forwards slice by slice until nothing is left, the session ends or the lease may
   * have lapsed (then the messages wait in `incoming` and `reading` until resume() or abandon()).
   * Nothing but the decoder's place in `reading` is kept across an await.
   */
  private async forwardIncoming(): Promise<void> {
    const slices = new ItemSlices(SLICE_ITEMS);
    let batch = outgoing();
    // A slice filled inside a message read whole: the turn comes once the message is done.
    let turnOwed = false;
    // Draining, only the message being read is finished (see drain()).
    while ((this.isReading() || (this.state === 'draining' && this.reading)) && this.options.holds()) {
      this.reading ??= this.isReading() ? this.nextReading(slices) : undefined;
      const reading = this.reading;
      if (!reading) break;
      let step: IteratorResult<DecodedBatch, DecodedBatch>;
      try {
        step = reading.steps.next();
      } catch (err) {
        this.reading = undefined;
        this.done(reading.message);
        this.terminate(reading.message, err, batch);
        continue;
      }
      const { labels, entries } = step.value;
      for (const e of entries)
        batch.entries.push(
          makeEntry({ labels: copyMap(labels), line: e.line, timestamp: e.timestamp, structuredMetadata: e.structuredMetadata }),
        );
      if (step.done) {
        this.reading = undefined;
        this.done(reading.message);
        batch.messages.push(reading.message);
        if (!turnOwed) continue;
      } else if (reading.message.data.length <= (this.options.wholeMessageBytes ?? WHOLE_MESSAGE_BYTES)) {
        turnOwed = true;
        continue;
      }
      turnOwed = false;
      // A slice is full: it goes on its way, and the event loop (lease renewals, acknowledgements,
      // the receivers) gets a turn before the next.
      this.send(batch);
      batch = outgoing();
      await this.turn();
    }
    this.send(batch);
  }

  /** The next message to decode; redeliveries of messages already forwarded are not. */
  private nextReading(slices: ItemSlices): Reading | undefined {
    const { metrics, labels, maxEntriesPerMessage } = this.options;
    for (let message = this.incoming.shift(); message; message = this.incoming.shift()) {
      if (message.seq <= this.highestSeen) {
        this.done(message);
        metrics.redeliveredMessages.inc(labels);
        if (message.seq <= this.ackedThrough) message.ack();
        continue;
      }
      this.highestSeen = message.seq;
      return { message, steps: decodeEntryBatchSteps(message.data, slices, maxEntriesPerMessage) };
    }
    return undefined;
  }

  /** Counts and logs a message refused unread; it is terminated in its place among the acknowledgements. */
  private terminate(message: JsMsg, err: unknown, batch: Outgoing): void {
    const { metrics, labels, log, partition } = this.options;
    const reason: TerminationReason = err instanceof EntryCountExceeded ? 'too_many_entries' : 'malformed';
    metrics.terminatedMessages.inc({ ...labels, reason });
    if (err instanceof EntryCountExceeded) {
      log('warn', 'terminating a message with more entries than max_entries_per_message', {
        partition,
        sequence: message.seq,
        entries: err.entries,
        limit: err.limit,
      });
      batch.terminated.set(message, `${err.message} (max_entries_per_message)`);
    } else {
      metrics.malformedMessages.inc(labels);
      const error = err instanceof MalformedEntryMessage ? err.message : errorText(err);
      log('warn', 'terminating a message that does not decode', { partition, sequence: message.seq, bytes: message.data.length, error });
      batch.terminated.set(message, `malformed entry message: ${error}`);
    }
    batch.messages.push(message);
  }

  private send(batch: Outgoing): void {
    const { messages, entries, terminated } = batch;
    if (messages.length === 0 && entries.length === 0) return;
    const { metrics, labels } = this.options;
    const forwarded = messages.length - terminated.size;
    if (forwarded > 0) metrics.receivedMessages.inc(labels, forwarded);
    if (entries.length > 0) metrics.receivedEntries.inc(labels, entries.length);
    const takenOver =
      entries.length === 0
        ? Promise.resolve(performance.now())
        : this.options.forward(entries, this.sendOptions).then(() => performance.now());
    // Failures are handled in order by the acknowledging loop.
    takenOver.catch(() => {});
    this.forwardingEntries += entries.length;
    this.unsettled.add(takenOver);
    void takenOver
      .finally(() => {
        this.unsettled.delete(takenOver);
        this.forwardingEntries -= entries.length;
        if (this.forwardingEntries <= MAX_FORWARDING_ENTRIES) this.wakeRoomWaiters();
      })
      .catch(() => {});
    this.inFlight.push({ messages, terminated, takenOver });
    this.acking ??= this.ackInOrder().finally(() => (this.acking = undefined));
  }

  /** Gives the event loop a turn, then waits while too many entries are on their way. */
  private async turn(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.forwardingEntries > MAX_FORWARDING_ENTRIES && this.isReading()) {
      this.waitingForRoom = true;
      this.noteBacklog();
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      this.waitingForRoom = false;
      this.noteBacklog();
    }
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
        if (err instanceof HandedBackError) {
          // The session ends and a stage dropped lines of this batch: it and every batch after it
          // stay unacknowledged, for the next owner to read again from the acknowledgement floor.
          for (const batch of this.inFlight.splice(0)) for (const message of batch.messages) message.nak();
          return;
        }
        this.fail(`a receiver refused entries: ${errorText(err)}`);
        return;
      }
      const wait = at + ackDelayMs - performance.now();
      if (wait > 0) await this.sleep(wait);
      if (this.state === 'stopped' || this.inFlight[0] !== head) return;
      if (head.messages.length > 0) {
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
        const confirm = this.state === 'draining' && this.inFlight.every((b) => b === head || b.messages.length === 0);
        // Ack policy `all`: an acknowledgement covers every message before it, so the batch's last
        // message not terminated is the one acknowledged; a terminated one is terminated in its
        // place, with its reason.
        let acknowledged: JsMsg | undefined;
        for (const message of head.messages) if (!head.terminated.has(message)) acknowledged = message;
        for (let i = 0; i <= last; i++) {
          const message = head.messages[i]!;
          const termination = head.terminated.get(message);
          if (termination !== undefined) message.term(this.options.termReasons ? termination : undefined);
          else if (message !== acknowledged) continue;
          // The batch's one acknowledgement is the confirmed one before a hand-over, even when a
          // terminated message comes after it.
          else if (confirm) await message.ackAck().catch(() => false);
          else message.ack();
        }
        this.ackedThrough = head.messages[last]!.seq;
        this.lastAcked = head.messages[last];
        metrics.ackedMessages.inc(labels, head.messages.length - head.terminated.size);
      }
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
