/**
 * Retry pacing with the reference's semantics. Each wait is drawn uniformly from [min, 2·min),
 * the window doubling per wait and capped at max. The budget counts attempts: the counter grows
 * before each wait, a wait is skipped once the budget is spent or the caller gave up, and the
 * loop goes on only while `ongoing()` — so `maxRetries = N` allows N attempts, 0 means no limit.
 */

import type { Clock } from '../../core/clock.js';

/** Where waits and jitter come from; tests pass one that does not really sleep. */
export interface BackoffClock {
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** Waits on a component clock's scheduler, so a virtual clock paces retries too. */
export function backoffClockFrom(clock: Clock): BackoffClock {
  return {
    random: Math.random,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const done = () => {
          scheduled.unsubscribe();
          signal.removeEventListener('abort', done);
          resolve();
        };
        const scheduled = clock.scheduler.schedule(done, ms);
        signal.addEventListener('abort', done, { once: true });
      }),
  };
}

export const realBackoffClock: BackoffClock = {
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
  random: Math.random,
};

export interface BackoffConfig {
  readonly minMs: number;
  readonly maxMs: number;
  readonly maxRetries: number;
}

export class Backoff {
  private retries = 0;
  private windowMin: number;
  private windowMax: number;

  constructor(
    private readonly config: BackoffConfig,
    private readonly signal: AbortSignal,
    private readonly clock: BackoffClock,
  ) {
    this.windowMin = config.minMs;
    this.windowMax = Math.min(config.minMs * 2, config.maxMs);
  }

  /** The wait counter; when the budget is spent it equals the number of attempts made. */
  numRetries(): number {
    return this.retries;
  }

  ongoing(): boolean {
    return !this.signal.aborted && (this.config.maxRetries === 0 || this.retries < this.config.maxRetries);
  }

  async wait(): Promise<void> {
    const delay = this.nextDelay();
    if (this.ongoing()) await this.clock.sleep(delay, this.signal);
  }

  private nextDelay(): number {
    this.retries++;
    if (this.windowMin >= this.windowMax) return this.windowMin;
    const delay = this.windowMin + Math.floor(this.clock.random() * (this.windowMax - this.windowMin));
    if (this.windowMax < this.config.maxMs) {
      this.windowMin = Math.min(this.windowMin * 2, this.config.maxMs);
      this.windowMax = Math.min(this.windowMax * 2, this.config.maxMs);
    }
    return delay;
  }
}
