/**
 * Live taps: a look at the entries passing through a running component, for `GET
 * /api/v0/tap/<id>`, `rivulet tap` and the run server's page. The graph hands every exported logs
 * receiver another component references to `wrapExport`, which puts a thin wrapper around it; the
 * wrapper publishes what is sent through it (to the receiver's owner as `in`, and from the
 * component holding the reference as `out`) and passes the entries on untouched.
 *
 * A tap never slows the pipeline: with no subscriber a publish is two map lookups; with one, at
 * most `ratePerSecond` entries a second are serialized into a bounded buffer per subscriber, and
 * the rest — entries over the rate, or arriving while the subscriber's buffer is full because its
 * client reads slowly — are dropped from the tap (never from the pipeline) and counted on
 * `rivulet_tap_dropped_entries_total{component_id, reason}`.
 */
import { Counter, type Registry } from 'prom-client';
import { entryToJson } from '../entry-json.js';
import type { Entry } from '../entry.js';
import { LOGS_RECEIVER, type LogsReceiver } from '../receiver.js';
import { isCapsule, makeCapsule, type ConfigValue } from '../../lib/config/evaluate.js';

export type TapDirection = 'in' | 'out';

export interface TapOptions {
  /** Most entries a second this subscriber gets (default 100). */
  readonly ratePerSecond?: number;
  /** Most serialized entries waiting for the subscriber (default 1000). */
  readonly bufferEntries?: number;
}

/** One subscriber: `lines` holds JSON lines waiting to be written; `wake` is called on each new one. */
export class TapSubscription {
  readonly lines: string[] = [];
  wake: (() => void) | undefined;
  private tokens: number;
  private last = Date.now();
  readonly rate: number;
  readonly capacity: number;

  constructor(
    readonly key: string,
    readonly componentId: string,
    private readonly hub: TapHub,
    options: TapOptions,
  ) {
    this.rate = options.ratePerSecond ?? 100;
    this.capacity = options.bufferEntries ?? 1000;
    this.tokens = this.rate;
  }

  /** Takes what the rate and the buffer allow; returns the numbers dropped for each reason. */
  offer(entries: readonly Entry[]): void {
    const now = Date.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
    let rateLimited = 0;
    let slow = 0;
    for (const entry of entries) {
      if (this.tokens < 1) {
        rateLimited++;
        continue;
      }
      if (this.lines.length >= this.capacity) {
        slow++;
        continue;
      }
      this.tokens -= 1;
      this.lines.push(entryToJson(entry, false));
    }
    if (rateLimited > 0) this.hub.dropped.inc({ component_id: this.componentId, reason: 'rate_limited' }, rateLimited);
    if (slow > 0) this.hub.dropped.inc({ component_id: this.componentId, reason: 'slow_client' }, slow);
    if (entries.length > rateLimited + slow) this.wake?.();
  }

  /** The waiting lines, emptying the buffer. */
  take(): string[] {
    return this.lines.splice(0);
  }

  close(): void {
    this.hub.unsubscribe(this);
  }
}

export class TapHub {
  readonly dropped: Counter<'component_id' | 'reason'>;
  private readonly subscribers = new Map<string, Set<TapSubscription>>();
  /** Wrappers by receiver, then by `owner referrer`, so a reload sees the same capsule again. */
  private readonly wrappers = new WeakMap<object, Map<string, ConfigValue>>();

  constructor(registry: Registry) {
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
      const receiver: LogsReceiver = {
        send: (entries, options) => {
          if (this.subscribers.size > 0) {
            this.publish(inKey, entries);
            this.publish(outKey, entries);
          }
          return inner.send(entries, options);
        },
      };
      wrapped = makeCapsule(LOGS_RECEIVER, receiver);
      byPair.set(pair, wrapped);
    }
    return wrapped;
  };

  /** Subscribes to what is sent to `id`'s receiver (`in`) or what `id` sends on (`out`). */
  subscribe(id: string, direction: TapDirection, options: TapOptions = {}): TapSubscription {
    const key = `${direction} ${id}`;
    const sub = new TapSubscription(key, id, this, options);
    let set = this.subscribers.get(key);
    if (!set) {
      set = new Set();
      this.subscribers.set(key, set);
    }
    set.add(sub);
    return sub;
  }

  unsubscribe(sub: TapSubscription): void {
    const set = this.subscribers.get(sub.key);
    if (!set) return;
    set.delete(sub);
    if (set.size === 0) this.subscribers.delete(sub.key);
  }

  private publish(key: string, entries: readonly Entry[]): void {
    const set = this.subscribers.get(key);
    if (!set) return;
    for (const sub of set) sub.offer(entries);
  }
}
