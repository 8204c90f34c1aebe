/**
 * Live taps: a look at the entries passing through a running component, for `GET
 * /api/v0/tap/<id>`, `rivulet tap` and the run server's page. The graph hands every exported logs
 * receiver another component references to `wrapExport`, which puts a thin wrapper around it; the
 * wrapper publishes what is sent through it (to the receiver's owner as `in`, and from the
 * component holding the reference as `out`) and passes the entries on untouched.
 *
 * A tap never slows the pipeline. With no client a publish is a size check; with clients, it is
 * one time check while none of them may take an entry. Each client takes at most `ratePerSecond`
 * entries a second into a bounded buffer; an entry some client takes is serialized once, and every
 * client taking it holds the same line. The rest — entries over a client's rate, or arriving while
 * its buffer is full because it reads slowly — are dropped from that client's tap (never from the
 * pipeline) and counted on `rivulet_tap_dropped_entries_total{component_id, reason}`. Buffers are
 * written out every TAP_FLUSH_MS, outside the pipeline's call, and only while the socket takes
 * them; clients holding the same lines are written the same bytes.
 *
 * The same wrappers count every component's entries in and out (flow-counters.ts), whether or not
 * anyone taps: that is where `rivulet top` reads a component's flow.
 */
import { Counter, type Registry } from 'prom-client';
import { entryToJson } from '../entry-json.js';
import type { Entry } from '../entry.js';
import { LOGS_RECEIVER, type LogsReceiver } from '../receiver.js';
import { isCapsule, makeCapsule, type ConfigValue } from '../../lib/config/evaluate.js';
import { flowCounters, type FlowCounters } from './flow-counters.js';

/** `in`: what is sent to a component's receivers; `out`: what the component sends on. */
export type TapDirection = 'in' | 'out';

/** Most tap clients at a time, over all components, unless the hub is given another bound. */
export const DEFAULT_MAX_TAP_CLIENTS = 100;

/** How often waiting tap lines are written to their clients. */
export const TAP_FLUSH_MS = 50;

export interface TapOptions {
  /** Most entries a second this subscriber gets (default 100). */
  readonly ratePerSecond?: number;
  /** Most serialized entries waiting for the subscriber (default 1000). */
  readonly bufferEntries?: number;
}

export interface TapHubOptions {
  /** Most subscribers at a time (default DEFAULT_MAX_TAP_CLIENTS). */
  readonly maxClients?: number;
}

/** Where a subscriber's lines go: an HTTP response, or anything with the same back-pressure. */
export interface TapOutput {
  /** False when the output is full: nothing more is written until it emits `drain`. */
  write(chunk: Buffer): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

type DropCounter = { inc(value: number): void };

/** The subscribers of one component and direction, and what they share. */
class TapChannel {
  readonly subs: TapSubscription[] = [];
  /** No subscriber may take an entry before this time (ms); 0 when one may now. */
  nextTakeAt = 0;
  /** Subscribers whose buffer was full when last offered entries; unchanged until one takes lines. */
  full = 0;
  readonly rateLimited: DropCounter;
  readonly slowClient: DropCounter;

  constructor(dropped: Counter<'component_id' | 'reason'>, componentId: string) {
    this.rateLimited = dropped.labels({ component_id: componentId, reason: 'rate_limited' });
    this.slowClient = dropped.labels({ component_id: componentId, reason: 'slow_client' });
  }

  /** Gives each subscriber what its rate and buffer allow, serializing each entry taken once. */
  offer(entries: readonly Entry[], now: number): void {
    const count = entries.length;
    if (count === 0) return;
    if (now < this.nextTakeAt) {
      this.countDropped(this.subs.length - this.full, this.full, count);
      return;
    }
    const lines: string[] = [];
    let rateLimited = 0;
    let slow = 0;
    let next = Number.POSITIVE_INFINITY;
    let full = 0;
    for (const sub of this.subs) {
      const took = sub.takeFrom(entries, lines, now);
      if (sub.isFull()) {
        slow += count - took;
        full++;
      } else {
        rateLimited += count - took;
        next = Math.min(next, sub.nextTokenAt());
      }
    }
    this.full = full;
    this.nextTakeAt = next;
    if (rateLimited > 0) this.rateLimited.inc(rateLimited);
    if (slow > 0) this.slowClient.inc(slow);
  }

  private countDropped(rateLimitedSubs: number, slowSubs: number, count: number): void {
    if (rateLimitedSubs > 0) this.rateLimited.inc(rateLimitedSubs * count);
    if (slowSubs > 0) this.slowClient.inc(slowSubs * count);
  }
}

/** One subscriber: `lines` holds JSON lines (each ending in a newline) waiting to be written. */
export class TapSubscription {
  readonly lines: string[] = [];
  private tokens: number;
  private last: number;
  readonly rate: number;
  readonly capacity: number;
  private output: TapOutput | undefined;
  private writable = true;

  constructor(
    readonly key: string,
    readonly componentId: string,
    private readonly hub: TapHub,
    private readonly channel: TapChannel,
    options: TapOptions,
    now: number,
  ) {
    this.rate = options.ratePerSecond ?? 100;
    this.capacity = options.bufferEntries ?? 1000;
    this.tokens = this.rate;
    this.last = now;
  }

  /**
   * Takes the first entries its tokens and buffer allow, serializing into `lines` (shared by the
   * channel's subscribers for this offer) only those no one took before; returns how many.
   */
  takeFrom(entries: readonly Entry[], lines: string[], now: number): number {
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
    const take = Math.min(Math.floor(this.tokens), this.capacity - this.lines.length, entries.length);
    if (take <= 0) return 0;
    for (let i = 0; i < take; i++) {
      if (i === lines.length) lines.push(`${entryToJson(entries[i]!, false)}\n`);
      this.lines.push(lines[i]!);
    }
    this.tokens -= take;
    if (this.output) this.hub.schedule(this);
    return take;
  }

  isFull(): boolean {
    return this.lines.length >= this.capacity;
  }

  /** When its next token comes, at the earliest (ms). */
  nextTokenAt(): number {
    return this.tokens >= 1 ? this.last : this.last + ((1 - this.tokens) * 1000) / this.rate;
  }

  /** The waiting lines, emptying the buffer. */
  take(): string[] {
    // Room again: the channel must offer to this subscriber next time.
    this.channel.nextTakeAt = 0;
    return this.lines.splice(0);
  }

  /** Writes what the tap samples to `output` from now on, while it takes it. */
  attach(output: TapOutput): void {
    this.output = output;
    if (this.lines.length > 0) this.hub.schedule(this);
  }

  /**
   * Writes the waiting lines unless the output is full (then once it drains). `previous` is the
   * last subscriber written in this round, whose bytes are reused when the lines are the same.
   */
  flush(previous: { lines: string[]; bytes: Buffer } | undefined): { lines: string[]; bytes: Buffer } | undefined {
    if (!this.output || !this.writable || this.lines.length === 0) return previous;
    const lines = this.take();
    const bytes = previous && sameLines(previous.lines, lines) ? previous.bytes : Buffer.from(lines.join(''));
    if (!this.output.write(bytes)) {
      this.writable = false;
      this.output.once('drain', () => {
        this.writable = true;
        if (this.lines.length > 0) this.hub.schedule(this);
      });
    }
    return { lines, bytes };
  }

  close(): void {
    this.output = undefined;
    this.hub.unsubscribe(this);
  }
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class TapHub {
  readonly dropped: Counter<'component_id' | 'reason'>;
  readonly maxClients: number;
  private readonly channels = new Map<string, TapChannel>();
  private clients = 0;
  /** Wrappers by receiver, then by `owner referrer`, so a reload sees the same capsule again. */
  private readonly wrappers = new WeakMap<object, Map<string, ConfigValue>>();
  /** Subscribers with lines to write at the next flush. */
  private readonly pending = new Set<TapSubscription>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly flow: FlowCounters;

  constructor(registry: Registry, options: TapHubOptions = {}) {
    this.maxClients = options.maxClients ?? DEFAULT_MAX_TAP_CLIENTS;
    this.flow = flowCounters(registry);
    this.dropped = new Counter({
      name: 'rivulet_tap_dropped_entries_total',
      help: 'Entries left out of a live tap (never out of the pipeline), by reason: rate_limited or slow_client.',
      labelNames: ['component_id', 'reason'],
      registers: [registry],
    });
  }

  /** For the graph: an exported value of `owner`, as resolved in `referrer`'s arguments. */
  wrapExport = (value: ConfigValue, owner: string, referrer: string): ConfigValue => {
    if (!isCapsule(value) || value.capsule !== LOGS_RECEIVER) return value;
    const inner = value.value as LogsReceiver;
    let byPair = this.wrappers.get(inner);
    if (!byPair) {
      byPair = new Map();
      this.wrappers.set(inner, byPair);
    }
    const pair = `${owner} ${referrer}`;
    let wrapped = byPair.get(pair);
    if (!wrapped) {
      const inKey = `in ${owner}`;
      const outKey = `out ${referrer}`;
      const received = this.flow.received.tally(owner);
      const sent = this.flow.sent.tally(referrer);
      const receiver: LogsReceiver = {
        send: (entries, options) => {
          if (this.channels.size > 0) {
            this.publish(inKey, entries);
            this.publish(outKey, entries);
          }
          const delivery = inner.send(entries, options);
          // Counted once taken over; the caller still gets (and handles) the send's own promise.
          delivery.then(
            () => {
              received.count += entries.length;
              sent.count += entries.length;
            },
            () => {},
          );
          return delivery;
        },
      };
      wrapped = makeCapsule(LOGS_RECEIVER, receiver);
      byPair.set(pair, wrapped);
    }
    return wrapped;
  };

  /**
   * Subscribes to what is sent to `id`'s receiver (`in`) or what `id` sends on (`out`);
   * undefined when `maxClients` subscribers are already there.
   */
  subscribe(id: string, direction: TapDirection, options: TapOptions = {}): TapSubscription | undefined {
    if (this.clients >= this.maxClients) return undefined;
    const key = `${direction} ${id}`;
    let channel = this.channels.get(key);
    if (!channel) {
      channel = new TapChannel(this.dropped, id);
      this.channels.set(key, channel);
    }
    const sub = new TapSubscription(key, id, this, channel, options, performance.now());
    channel.subs.push(sub);
    channel.nextTakeAt = 0;
    this.clients++;
    return sub;
  }

  unsubscribe(sub: TapSubscription): void {
    this.pending.delete(sub);
    const channel = this.channels.get(sub.key);
    const at = channel ? channel.subs.indexOf(sub) : -1;
    if (!channel || at < 0) return;
    channel.subs.splice(at, 1);
    channel.nextTakeAt = 0;
    this.clients--;
    if (channel.subs.length === 0) this.channels.delete(sub.key);
    if (this.clients === 0 && this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
  }

  /** Offers entries to the subscribers of `id` in `direction`, as the wrapped receivers do. */
  offer(id: string, direction: TapDirection, entries: readonly Entry[]): void {
    this.publish(`${direction} ${id}`, entries);
  }

  /**
   * Has `sub`'s lines written at the next flush. Taps keep real time (a Node timer here,
   * `performance.now()` for their rates), whatever the graph's clock: they pace what a person
   * watching is shown and write to sockets, and take no part in what the pipeline does.
   */
  schedule(sub: TapSubscription): void {
    this.pending.add(sub);
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flush(), TAP_FLUSH_MS);
    this.flushTimer.unref();
  }

  private flush(): void {
    this.flushTimer = undefined;
    const subs = [...this.pending];
    this.pending.clear();
    let previous: { lines: string[]; bytes: Buffer } | undefined;
    for (const sub of subs) previous = sub.flush(previous);
  }

  private publish(key: string, entries: readonly Entry[]): void {
    this.channels.get(key)?.offer(entries, performance.now());
  }
}
