/**
 * stage.limit — throttles entries with a token bucket of `burst` tokens, initially full and
 * refilled at `rate` tokens per second; each entry takes one token. With `drop = true` an entry
 * that finds no token is dropped; with `drop = false` it waits for one, in arrival order.
 *
 * Reference quirks kept:
 * - the bucket is golang.org/x/time/rate's: fractional tokens, refill computed from the elapsed
 *   nanoseconds as Go's `Duration.Seconds() × rate`, capped at `burst`; a wait is the token deficit
 *   divided by the rate, truncated to whole nanoseconds (so a deficit worth under 1 ns does not
 *   wait at all); a refused entry leaves the bucket untouched; a clock that steps back refills
 *   nothing; a rate of at least the largest float64 means "no limit";
 * - in wait mode the next entry reserves its token only once the previous one has left the stage,
 *   as the reference's blocking call does, so its wait starts then;
 * - drops count `logs_process_dropped_lines_total{reason="ratelimit_drop_stage"}`;
 * - `by_label_name` reads the entry's labels, not the extracted map: without the label an entry is
 *   never limited and takes no token; each value (the empty one too) has its own bucket, created
 *   full on first sight; a drop also counts
 *   `logs_process_dropped_lines_by_label_total{label_name, label_value}`;
 * - buckets by value live in two generations of `max_distinct_labels` values (anything below
 *   10000 is raised to 10000): when the new generation fills up it becomes the old one, the older
 *   one is forgotten (those values restart with a full bucket), a value found only in the old
 *   generation is promoted with its bucket, and every rotation resets the whole by-label metric
 *   family, which all limit stages of a registry share.
 *
 * Where we differ on purpose (the reference blocks its goroutine and so the whole pipeline):
 * - wait mode holds entries in a FIFO of at most `MAX_HELD_ENTRIES` per subscription, releasing
 *   them on the injected scheduler; `pending()` lets the component acknowledge a batch only once
 *   its held entries have left, which is the back-pressure the reference gets from blocking. An
 *   entry arriving while the FIFO is full is dropped and counted under `ratelimit_queue_full`;
 * - at end of input the held entries keep leaving at the configured rate and the stage completes
 *   after the last one (the reference discards its one waiting entry at stop); entries still held
 *   when the subscription is torn down are counted under `ratelimit_discarded_on_stop` instead of
 *   vanishing silently.
 */
import { Observable, type OperatorFunction, type Subscription } from 'rxjs';
import { MAX_TIMER_MS, type Clock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { FieldError } from '../../lib/config/errors.js';
import { Fifo } from '../../lib/fifo.js';
import { defineStage, type BuildContext, type StageImpl } from '../../core/stage.js';
import { NO_NAMES, type StagePartitioning } from '../../core/stage-partitioning.js';
import { t } from '../../lib/config/schema.js';

export interface LimitConfig {
  /** Tokens per second; required, > 0. */
  readonly rate: number;
  /** Bucket size; required, > 0. */
  readonly burst: number;
  readonly drop: boolean;
  /** Limits each value of this label separately; needs `drop = true`. */
  readonly by_label_name: string;
  /** Values tracked per generation with `by_label_name`; below 10000 means 10000. */
  readonly max_distinct_labels: number;
}

/** The `reason` of drops for lack of a token, as the reference names it. */
export const RATELIMIT_DROP_REASON = 'ratelimit_drop_stage';
/** The `reason` of entries refused because the wait-mode FIFO is full. */
export const QUEUE_FULL_REASON = 'ratelimit_queue_full';
/** The `reason` of held entries discarded because the subscription ended before they left. */
export const DISCARDED_ON_STOP_REASON = 'ratelimit_discarded_on_stop';
/** The reference raises any smaller `max_distinct_labels` to this. */
export const MIN_DISTINCT_LABELS = 10_000;
/**
 * How many entries one wait-mode limit holds at most. At a few hundred bytes per held entry this
 * is tens of MiB (see bench/stages-time.ts); a component that awaits `pending()` never gets close.
 */
export const MAX_HELD_ENTRIES = 100_000;

export const limit = defineStage<LimitConfig>({
  name: 'limit',
  doc: 'Rate-limits entries with a token bucket: drops them, or holds them until a token is available.',
  example: `stage.limit {
  rate  = 100
  burst = 200
  drop  = true
}`,
  fields: {
    rate: { kind: t.number, required: true, doc: 'Tokens added per second (entries per second on average).' },
    burst: { kind: t.int, required: true, doc: 'Bucket size: how many entries may pass at once after a quiet period.' },
    drop: { kind: t.bool, default: false, doc: 'Drop entries over the limit instead of holding them until a token is available.' },
    by_label_name: {
      kind: t.string,
      default: '',
      doc: 'Limit each value of this label separately; entries without it are not limited. Needs `drop = true`.',
    },
    max_distinct_labels: { kind: t.int, default: MIN_DISTINCT_LABELS, doc: 'Label values tracked with `by_label_name` (at least 10000).' },
  },
  validate: validateLimit,
  build: buildLimit,
  partitioning: (config): StagePartitioning => ({
    writes: NO_NAMES,
    state: config.by_label_name
      ? { by: 'labels', names: [config.by_label_name] }
      : { by: 'all', reason: 'stage.limit without by_label_name keeps one rate for all entries' },
  }),
});

export function validateLimit(config: LimitConfig): void {
  const reason = 'limit stage failed to parse rate or burst';
  if (!(config.rate > 0)) throw new FieldError('rate', reason);
  if (!(config.burst > 0)) throw new FieldError('burst', reason);
  if (config.by_label_name !== '' && !config.drop) throw new FieldError('by_label_name', 'when ratelimiting by label, drop must be true');
}

/** A built wait-mode limit: an operator plus what a component needs to delay acknowledgements. */
export interface WaitingLimitImpl {
  readonly kind: 'operator';
  readonly operator: OperatorFunction<Entry, Entry>;
  /** Resolves once every entry held when it was called has left the stage (or was discarded). */
  pending(): Promise<void>;
  /** Entries held right now, over every subscription. */
  heldCount(): number;
}

function buildLimit(config: LimitConfig, ctx: BuildContext): StageImpl {
  const { droppedLines, droppedLinesByLabel } = ctx.metrics;
  const { clock } = ctx;
  const newBucket = () => new TokenBucket(config.rate, config.burst);

  if (config.by_label_name !== '') {
    const name = config.by_label_name;
    const buckets = new GenerationalBuckets(Math.max(config.max_distinct_labels, MIN_DISTINCT_LABELS), newBucket, () =>
      droppedLinesByLabel.reset(),
    );
    return {
      kind: 'map',
      process: (entry) => {
        if (!Object.hasOwn(entry.labels, name)) return entry;
        const value = entry.labels[name]!;
        if (buckets.getOrCreate(value).allow(clock.nowNs())) return entry;
        droppedLines.inc({ reason: RATELIMIT_DROP_REASON });
        droppedLinesByLabel.inc({ label_name: name, label_value: value });
        return null;
      },
    };
  }

  const bucket = newBucket();
  if (config.drop) {
    // Dropping needs no timer: a per-entry filter the pipeline can fuse with its neighbours.
    return {
      kind: 'map',
      process: (entry) => {
        if (bucket.allow(clock.nowNs())) return entry;
        droppedLines.inc({ reason: RATELIMIT_DROP_REASON });
        return null;
      },
    };
  }

  const held = holdUntilTokens(bucket, clock, {
    maxHeld: MAX_HELD_ENTRIES,
    onQueueFull: () => {
      droppedLines.inc({ reason: QUEUE_FULL_REASON });
      ctx.debug('limit: hold queue full, dropping entry', { max_held: MAX_HELD_ENTRIES });
    },
    onDiscard: (count) => {
      droppedLines.inc({ reason: DISCARDED_ON_STOP_REASON }, count);
      ctx.debug('limit: discarding held entries on stop', { count });
    },
  });
  const impl: WaitingLimitImpl = { kind: 'operator', ...held };
  return impl;
}

// ---------------------------------------------------------------------------------------------
// The token bucket (golang.org/x/time/rate.Limiter, one token per event)

const NS_PER_SECOND = 1_000_000_000n;
/** Go's `rate.InfDuration`, the largest `time.Duration`. */
const INF_DURATION = (1n << 63n) - 1n;
const INT64_MAX_AS_FLOAT = 2 ** 63;

/**
 * golang.org/x/time/rate's limiter for events of one token, on bigint nanosecond time. Starts
 * full. `allow` is `Limiter.Allow`; `reserve` is the reservation `Limiter.Wait` makes.
 *
 * @example
 * const bucket = new TokenBucket(2, 1);
 * bucket.allow(0n); // true
 * bucket.reserve(0n); // 500_000_000n: the next token is due half a second later
 */
export class TokenBucket {
  private tokens: number;
  /** When tokens were last taken; undefined stands for Go's zero time (the bucket is full). */
  private last: bigint | undefined;
  private readonly unlimited: boolean;

  constructor(
    readonly rate: number,
    readonly burst: number,
  ) {
    this.tokens = burst;
    this.unlimited = rate >= Number.MAX_VALUE;
  }

  /** Takes a token if one is there at `nowNs`; never waits. */
  allow(nowNs: bigint): boolean {
    if (this.unlimited) return true;
    const tokens = this.advance(nowNs) - 1;
    // The same decision as reserve(nowNs, 0n) without bigint arithmetic on the hot path: a wait
    // truncates to zero nanoseconds exactly when it is under one.
    if (tokens < 0 && (-tokens / this.rate) * 1e9 >= 1) return false;
    this.last = nowNs;
    this.tokens = tokens;
    return true;
  }

  /**
   * Takes a token, possibly on credit: returns when it may be used (`nowNs` when no wait is
   * needed), or undefined — leaving the bucket as it was — when that is more than `maxWaitNs` away.
   */
  reserve(nowNs: bigint, maxWaitNs: bigint = INF_DURATION): bigint | undefined {
    if (this.unlimited) return nowNs;
    const tokens = this.advance(nowNs) - 1;
    const waitNs = tokens < 0 ? durationFromTokens(-tokens, this.rate) : 0n;
    if (this.burst < 1 || waitNs > maxWaitNs) return undefined;
    this.last = nowNs;
    this.tokens = tokens;
    return nowNs + waitNs;
  }

  /** The tokens there would be at `nowNs`. */
  private advance(nowNs: bigint): number {
    // From Go's zero time the elapsed duration saturates, so the refill always fills the bucket.
    if (this.last === undefined) return this.burst;
    const last = nowNs < this.last ? nowNs : this.last;
    const tokens = this.tokens + goSeconds(nowNs - last) * this.rate;
    return tokens > this.burst ? this.burst : tokens;
  }
}

const MAX_SAFE_NS = BigInt(Number.MAX_SAFE_INTEGER);

/** Go's `Duration.Seconds()`: whole seconds and the nanosecond remainder converted separately. */
function goSeconds(ns: bigint): number {
  if (ns <= MAX_SAFE_NS) {
    // Below 2^53 the float split is exact and much cheaper than bigint division.
    const n = Number(ns);
    const seconds = Math.floor(n / 1e9);
    return seconds + (n - seconds * 1e9) / 1e9;
  }
  return Number(ns / NS_PER_SECOND) + Number(ns % NS_PER_SECOND) / 1e9;
}

/** x/time/rate's `durationFromTokens`: truncated to whole nanoseconds, capped at InfDuration. */
function durationFromTokens(tokens: number, rate: number): bigint {
  const ns = (tokens / rate) * 1e9;
  if (ns > INT64_MAX_AS_FLOAT) return INF_DURATION;
  return BigInt(Math.trunc(ns));
}

/**
 * Buckets by label value in two generations (Loki's GenerationalMap): at most `2 × maxSize`
 * values are remembered, however many distinct values go by.
 */
class GenerationalBuckets {
  private newer = new Map<string, TokenBucket>();
  private older = new Map<string, TokenBucket>();

  constructor(
    private readonly maxSize: number,
    private readonly create: () => TokenBucket,
    private readonly onRotate: () => void,
  ) {}

  getOrCreate(value: string): TokenBucket {
    let bucket = this.newer.get(value);
    if (bucket !== undefined) return bucket;
    bucket = this.older.get(value) ?? this.create();
    this.newer.set(value, bucket);
    if (this.newer.size === this.maxSize) {
      this.older = this.newer;
      this.newer = new Map();
      this.onRotate();
    }
    return bucket;
  }
}

// ---------------------------------------------------------------------------------------------
// Wait mode: a bounded FIFO released on the scheduler

export interface HoldOptions {
  /** Entries held at most per subscription; further entries are refused. */
  readonly maxHeld: number;
  /** An entry was refused because `maxHeld` entries are held. */
  readonly onQueueFull: (entry: Entry) => void;
  /** `count` held entries were thrown away because the subscription ended first. */
  readonly onDiscard: (count: number) => void;
}

/** What `holdUntilTokens` returns: the operator and its back-pressure signals. */
export interface HeldEntries {
  readonly operator: OperatorFunction<Entry, Entry>;
  pending(): Promise<void>;
  heldCount(): number;
}

/**
 * The wait-mode operator: an entry leaves when `bucket` grants it a token, in arrival order; the
 * head of the FIFO reserves its token when it becomes the head and one timer on `clock.scheduler`
 * fires when that token is due. When the source completes (or errors) the held entries keep
 * leaving at the bucket's pace and the completion (or error) follows the last of them.
 */
export function holdUntilTokens(bucket: TokenBucket, clock: Clock, options: HoldOptions): HeldEntries {
  const active = new Set<HoldState>();
  const operator: OperatorFunction<Entry, Entry> = (source) =>
    new Observable<Entry>((subscriber) => {
      const state = new HoldState();
      active.add(state);
      let timer: Subscription | undefined;
      /** When the head's token is due; set while the head waits. */
      let headDueNs: bigint | undefined;
      let end: { error: unknown } | 'complete' | undefined;
      // Set while release() hands entries on: an entry pushed back in from downstream during that
      // time must queue behind the others rather than take a token of its own.
      let releasing = false;

      // The delay is exact, fractions of a millisecond included: rounding it up would release an
      // entry late while the next one's token stays on schedule, squeezing the two together.
      const arm = (nowNs: bigint) => {
        timer = clock.scheduler.schedule(release, Math.min(Number(headDueNs! - nowNs) / 1e6, MAX_TIMER_MS));
      };
      const finish = () => {
        if (end === 'complete') subscriber.complete();
        else if (end !== undefined) subscriber.error(end.error);
      };
      /** Sends the head on once its token is due, then as many followers as have tokens now. */
      const release = () => {
        timer = undefined;
        let nowNs = clock.nowNs();
        // A real timer may fire a little early, or a long wait may have been cut to fit a timer.
        if (nowNs < headDueNs!) return arm(nowNs);
        headDueNs = undefined;
        releasing = true;
        try {
          while (state.queue.length > 0) {
            subscriber.next(state.shift());
            if (subscriber.closed) return;
            if (state.queue.length === 0) break;
            nowNs = clock.nowNs();
            const due = bucket.reserve(nowNs)!;
            if (due > nowNs) {
              headDueNs = due;
              return arm(nowNs);
            }
          }
        } finally {
          releasing = false;
        }
        finish();
      };

      const subscription = source.subscribe({
        next(entry) {
          if (state.queue.length === 0 && !releasing) {
            const nowNs = clock.nowNs();
            const due = bucket.reserve(nowNs)!;
            if (due <= nowNs) {
              subscriber.next(entry);
              return;
            }
            state.push(entry);
            headDueNs = due;
            arm(nowNs);
            return;
          }
          if (state.queue.length >= options.maxHeld) {
            options.onQueueFull(entry);
            return;
          }
          state.push(entry);
        },
        error(error) {
          end = { error };
          if (state.queue.length === 0) finish();
        },
        complete() {
          end = 'complete';
          if (state.queue.length === 0) finish();
        },
      });
      return () => {
        subscription.unsubscribe();
        timer?.unsubscribe();
        timer = undefined;
        const discarded = state.discardAll();
        if (discarded > 0) options.onDiscard(discarded);
        active.delete(state);
      };
    });
  return {
    operator,
    pending: () => Promise.all([...active].map((s) => s.drained())).then(() => undefined),
    heldCount: () => {
      let count = 0;
      for (const state of active) count += state.queue.length;
      return count;
    },
  };
}

/** One subscription's held entries and the promises waiting for some of them to leave. */
class HoldState {
  readonly queue = new Fifo<Entry>();
  /** Entries ever held, and how many of them have left (released or discarded). */
  private heldTotal = 0;
  private leftTotal = 0;
  private readonly waiters: Array<{ until: number; resolve: () => void }> = [];

  push(entry: Entry): void {
    this.queue.push(entry);
    this.heldTotal++;
  }

  /** Takes the oldest held entry; only called while one is held. */
  shift(): Entry {
    const entry = this.queue.shift()!;
    this.leftTotal++;
    this.wake();
    return entry;
  }

  discardAll(): number {
    const count = this.queue.length;
    this.queue.clear();
    this.leftTotal += count;
    this.wake();
    return count;
  }

  /** Resolves once every entry held now has left. */
  drained(): Promise<void> {
    if (this.leftTotal >= this.heldTotal) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ until: this.heldTotal, resolve }));
  }

  private wake(): void {
    // Waiters are added with growing targets, so they are woken from the front.
    while (this.waiters.length > 0 && this.waiters[0]!.until <= this.leftTotal) this.waiters.shift()!.resolve();
  }
}
