/**
 * Retry pacing with the reference's semantics, shared by the writers. Each wait is drawn uniformly
 * from a window that starts at [min, 2·min) and doubles per wait, capped at max. The budget counts
 * attempts: the counter grows with each wait drawn, and a retry loop goes on only while
 * `ongoing()`, so `maxRetries = N` allows N attempts; 0 means no limit.
 *
 * ```ts
 * const backoff = new Backoff({ minMs: 500, maxMs: 300_000, maxRetries: 10 }, realBackoffClock, signal);
 * for (;;) {
 *   if (await send()) break;
 *   await backoff.wait();
 *   if (!backoff.ongoing()) break;
 * }
 * ```
 */
import { asyncScheduler, type SchedulerLike } from 'rxjs';

/** Where waits and jitter come from; tests pass one that does not really sleep. */
export interface BackoffClock {
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** Waits on `scheduler`, so a virtual clock paces retries too. */
export function backoffClockOn(scheduler: SchedulerLike, random: () => number = Math.random): BackoffClock {
  return {
    random,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const onAbort = () => {
          timer.unsubscribe();
          resolve();
        };
        const timer = scheduler.schedule(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
  };
}

/** Real time and `Math.random`. */
export const realBackoffClock: BackoffClock = backoffClockOn(asyncScheduler);

const NEVER_ABORTED = new AbortController().signal;

export interface BackoffConfig {
  readonly minMs: number;
  readonly maxMs: number;
  /** Attempts in total, the first included; 0 means no limit. */
  readonly maxRetries: number;
  /**
   * Once the window's top reaches max, the reference keeps the window where it is, [low, max).
   * With this set its floor keeps doubling too, so waits settle at exactly max: the pacing
   * `logs.write` has always had.
   */
  readonly floorRisesToMax?: boolean;
}

export class Backoff {
  private retries = 0;
  private windowMin: number;
  private windowMax: number;

  /** `signal` is the caller giving up: once it aborts, nothing more is waited for. */
  constructor(
    private readonly config: BackoffConfig,
    private readonly clock: BackoffClock = realBackoffClock,
    private readonly signal?: AbortSignal,
  ) {
    this.windowMin = config.minMs;
    this.windowMax = Math.min(config.minMs * 2, config.maxMs);
  }

  /** The wait counter; when the budget is spent it equals the number of attempts made. */
  numRetries(): number {
    return this.retries;
  }

  /** Whether another attempt is allowed. */
  ongoing(): boolean {
    return !this.signal?.aborted && (this.config.maxRetries === 0 || this.retries < this.config.maxRetries);
  }

  /** Draws the next wait and sleeps it, unless that spent the budget or the caller gave up. */
  async wait(): Promise<void> {
    const delay = this.nextDelay();
    if (this.ongoing()) await this.clock.sleep(delay, this.signal ?? NEVER_ABORTED);
  }

  /** Counts one retry and draws its wait in milliseconds, for callers that sleep themselves. */
  nextDelay(): number {
    this.retries++;
    // Also the case of max ≤ min: every wait is min.
    if (this.windowMin >= this.windowMax) return this.windowMin;
    const delay = this.windowMin + Math.floor(this.clock.random() * (this.windowMax - this.windowMin));
    const { maxMs } = this.config;
    if (this.windowMax < maxMs) {
      this.windowMin = Math.min(this.windowMin * 2, maxMs);
      this.windowMax = Math.min(this.windowMax * 2, maxMs);
    } else if (this.config.floorRisesToMax) {
      this.windowMin = Math.min(this.windowMin * 2, maxMs);
    }
    return delay;
  }
}

/**
 * The delay a `Retry-After` header asks for, in milliseconds: delta-seconds or an HTTP date
 * (relative to `nowMs`). Undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null | undefined, nowMs: number): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
