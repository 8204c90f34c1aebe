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
 * In a sharded run the entries flow on the shard threads, each with a hub of its own. The main
 * thread's hub tells its `TapFeeds` (the run) how many clients tap a component and the fastest
 * one's rate; each shard then relays (`relay`) what passes there, at most that rate a second and
 * batched every TAP_FLUSH_MS, counting what it leaves out as dropped for each of those clients.
 * The main thread offers the relayed lines (`offerLines`) to its clients as it offers entries, so
 * each client's rate and buffer hold exactly as in place.
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

/**
 * Where a component's entries flow when not through this hub's wrappers: the shard threads of a
 * sharded run, which send back the lines of what they see through `TapHub.offerLines`.
 */
export interface TapFeeds {
  /**
   * `clients` clients tap `id` in `direction` now, the fastest taking `ratePerSecond` entries a
   * second; 0 clients when the last one left.
   */
  tapped(id: string, direction: TapDirection, clients: number, ratePerSecond: number): void;
}

type DropCounter = { inc(value: number): void };

const NO_ENTRIES: readonly Entry[] = [];

/** The subscribers of one component and direction, and what they share. */
class TapChannel {
  readonly subs: TapSubscription[] = [];
  /** The clients the subscribers stand for: one each, or the main thread's for a shard's relay. */
  clients = 0;
  /** No subscriber may take an entry before this time (ms); 0 when one may now. */
  nextTakeAt = 0;
  /** Clients whose buffer was full when last offered entries; unchanged until one takes lines. */
  full = 0;
  readonly rateLimited: DropCounter;
  readonly slowClient: DropCounter;

  constructor(dropped: Counter<'component_id' | 'reason'>, componentId: string) {
    this.rateLimited = dropped.labels({ component_id: componentId, reason: 'rate_limited' });
    this.slowClient = dropped.labels({ component_id: componentId, reason: 'slow_client' });
  }

  /**
   * Gives each subscriber what its rate and buffer allow of `count` entries: either `serialized`,
   * all of them as lines already (relayed from a shard), or `entries`, each serialized once, when
   * a subscriber first takes it.
   */
  offer(count: number, entries: readonly Entry[], serialized: readonly string[] | undefined, now: number): void {
    if (count === 0) return;
    if (now < this.nextTakeAt) {
      this.countDropped(this.clients - this.full, this.full, count);
      return;
    }
    // takeFrom adds to these only past their end, which serialized lines never reach.
    const lines = (serialized as string[] | undefined) ?? [];
    let rateLimited = 0;
    let slow = 0;
    let next = Number.POSITIVE_INFINITY;
    let full = 0;
    for (const sub of this.subs) {
      const took = sub.takeFrom(count, entries, lines, now);
      if (sub.isFull()) {
        slow += (count - took) * sub.clients;
        full += sub.clients;
      } else {
        rateLimited += (count - took) * sub.clients;
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

/**
 * One subscriber: `lines` holds JSON lines (each ending in a newline) waiting to be written. A
 * client stands for itself; a shard's relay for the main thread's clients of its component.
 */
export class TapSubscription {
  readonly lines: string[] = [];
  private tokens: number;
  private last: number;
  rate: number;
  capacity: number;
  /** The clients that entries this one leaves out are counted as dropped for. */
  clients = 1;
  private output: TapOutput | undefined;
  private writable = true;
  /** For a shard's relay: where its lines go at each flush, instead of an output. */
  relay: ((lines: string[]) => void) | undefined;

  constructor(
    readonly key: string,
    readonly componentId: string,
    readonly direction: TapDirection,
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
   * Takes the first of `count` entries its tokens and buffer allow, serializing into `lines`
   * (shared by the channel's subscribers for this offer) only those no one took before; returns
   * how many.
   */
  takeFrom(count: number, entries: readonly Entry[], lines: string[], now: number): number {
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
    const take = Math.min(Math.floor(this.tokens), this.capacity - this.lines.length, count);
    if (take <= 0) return 0;
    for (let i = 0; i < take; i++) {
      if (i === lines.length) lines.push(`${entryToJson(entries[i]!, false)}\n`);
      this.lines.push(lines[i]!);
    }
    this.tokens -= take;
    if (this.output || this.relay) this.hub.schedule(this);
    return take;
  }

  /**
   * A relay's new figures: a faster rate brings its larger burst at once, as a client joining
   * with that rate gets its own.
   */
  tune(clients: number, ratePerSecond: number, bufferEntries: number): void {
    this.tokens = Math.min(ratePerSecond, this.tokens + Math.max(0, ratePerSecond - this.rate));
    this.rate = ratePerSecond;
    this.capacity = bufferEntries;
    this.channel.clients += clients - this.clients;
    this.clients = clients;
    this.channel.nextTakeAt = 0;
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
    if (this.relay) {
      if (this.lines.length > 0) this.relay(this.take());
      return previous;
    }
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
  /** A shard's relays, by channel key. */
  private readonly relays = new Map<string, TapSubscription>();
  private feeds: TapFeeds | undefined;

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
    const sub = this.join(id, direction, options);
    this.clients++;
    this.tellFeeds(sub);
    return sub;
  }

  unsubscribe(sub: TapSubscription): void {
    this.pending.delete(sub);
    const channel = this.channels.get(sub.key);
    const at = channel ? channel.subs.indexOf(sub) : -1;
    if (!channel || at < 0) return;
    channel.subs.splice(at, 1);
    channel.clients -= sub.clients;
    channel.nextTakeAt = 0;
    if (!sub.relay) this.clients--;
    if (channel.subs.length === 0) this.channels.delete(sub.key);
    if (this.pending.size === 0 && this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (!sub.relay) this.tellFeeds(sub);
  }

  /** Offers entries to the subscribers of `id` in `direction`, as the wrapped receivers do. */
  offer(id: string, direction: TapDirection, entries: readonly Entry[]): void {
    this.publish(`${direction} ${id}`, entries);
  }

  /**
   * Offers lines serialized elsewhere (a shard's relay: JSON lines, each ending in a newline) to
   * the subscribers of `id` in `direction`, as entries published here are offered.
   */
  offerLines(id: string, direction: TapDirection, lines: readonly string[]): void {
    this.channels.get(`${direction} ${id}`)?.offer(lines.length, NO_ENTRIES, lines, performance.now());
  }

  /**
   * Tells `feeds` from now on what this hub's clients tap (and at once what they tap already),
   * so it can send back lines for `offerLines`; undefined stops telling.
   */
  feedFrom(feeds: TapFeeds | undefined): void {
    this.feeds = feeds;
    for (const channel of this.channels.values()) {
      const sub = channel.subs.find((s) => !s.relay);
      if (sub) this.tellFeeds(sub);
    }
  }

  /**
   * On a shard: relays to `send`, every TAP_FLUSH_MS, the lines of what passes `id` in
   * `direction` for the main thread's `clients` clients, at most `ratePerSecond` a second (the
   * fastest client's rate); what it leaves out is counted as dropped for each of those clients.
   * Called again, it takes the new figures; with 0 clients, it stops.
   */
  relay(id: string, direction: TapDirection, clients: number, ratePerSecond: number, send: (lines: string[]) => void): void {
    const key = `${direction} ${id}`;
    let sub = this.relays.get(key);
    if (clients <= 0) {
      if (sub) this.unsubscribe(sub);
      this.relays.delete(key);
      return;
    }
    // Room for a second's lines and more: the relay empties every TAP_FLUSH_MS, and its rate
    // bounds what it takes, so it is full only when the shard is too busy to flush.
    const bufferEntries = 2 * Math.ceil(ratePerSecond);
    if (!sub) {
      sub = this.join(id, direction, { ratePerSecond, bufferEntries });
      this.relays.set(key, sub);
    }
    sub.tune(clients, ratePerSecond, bufferEntries);
    sub.relay = send;
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
    this.channels.get(key)?.offer(entries.length, entries, undefined, performance.now());
  }

  /** Adds a subscriber of `id` in `direction`, its channel made when it is the first. */
  private join(id: string, direction: TapDirection, options: TapOptions): TapSubscription {
    const key = `${direction} ${id}`;
    let channel = this.channels.get(key);
    if (!channel) {
      channel = new TapChannel(this.dropped, id);
      this.channels.set(key, channel);
    }
    const sub = new TapSubscription(key, id, direction, this, channel, options, performance.now());
    channel.subs.push(sub);
    channel.clients += sub.clients;
    channel.nextTakeAt = 0;
    return sub;
  }

  /** Tells the feeds how many clients tap `sub`'s component and direction now, and the fastest rate. */
  private tellFeeds(sub: TapSubscription): void {
    if (!this.feeds) return;
    const clients = this.channels.get(sub.key)?.subs.filter((s) => !s.relay) ?? [];
    const rate = clients.reduce((fastest, s) => Math.max(fastest, s.rate), 0);
    this.feeds.tapped(sub.componentId, sub.direction, clients.length, rate);
  }
}
