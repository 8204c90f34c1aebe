/**
 * Wait mode of `stage.limit`: entries wait in a bounded FIFO and leave, in arrival order, as the
 * token bucket grants them tokens, released by one timer on the injected scheduler.
 */
import { Observable, type OperatorFunction, type Subscription } from 'rxjs';
import { MAX_TIMER_MS, type Clock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { Fifo } from '../../lib/fifo.js';
import type { TokenBucket } from './token-bucket.js';

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
  /** Resolves once every entry held when it was called has left the stage (or was discarded). */
  pending(): Promise<void>;
  /** Entries held right now, over every subscription. */
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
