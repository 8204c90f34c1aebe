import { asyncScheduler, type SchedulerAction, type SchedulerLike, Subscription } from 'rxjs';

/**
 * All time a stage sees comes from a Clock: `scheduler` drives timers (multiline flushes, limit
 * refills), `nowNs` reads the wall clock with nanosecond precision. Production uses the real one;
 * tests, `rivulet process --now` and the playground use a virtual or shifted one.
 */
export interface Clock {
  readonly scheduler: SchedulerLike;
  nowNs(): bigint;
}

const NS_PER_MS = 1_000_000n;

/**
 * The largest delay Node's timers accept: a larger one fires after 1 ms, so stages cap their
 * delays at this and re-arm when it fires.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * How far RxJS's `asyncScheduler.now()` may be from `Date.now()` and still be the real clock:
 * both read the same system time, a moment apart. Virtual time (an RxJS `TestScheduler.run`,
 * which starts at frame 0) is decades away.
 */
const VIRTUAL_TIME_GAP_MS = 1_000;

/**
 * The real wall clock: epoch milliseconds plus a monotonic sub-millisecond part, on RxJS's
 * `asyncScheduler` (the program's own rxjs, a peer dependency).
 *
 * While the scheduler's time is virtual (inside the program's `TestScheduler.run`, which makes
 * `asyncScheduler.now()` read its frames), `nowNs()` follows the scheduler instead: frame `n` is
 * `n` milliseconds after the epoch, as RxJS's own `timestamp()` reports it. A stage that reads
 * the time (the `limit` bucket's refills, for one) then sees the same time as the timers it
 * schedules, in a marble test that passes no clock. Outside virtual time the nanosecond
 * precision of `process.hrtime` is kept.
 */
export function systemClock(): Clock {
  const originNs = BigInt(Date.now()) * NS_PER_MS - process.hrtime.bigint();
  return {
    scheduler: asyncScheduler,
    nowNs: () => {
      const schedulerMs = asyncScheduler.now();
      if (Math.abs(schedulerMs - Date.now()) > VIRTUAL_TIME_GAP_MS) return BigInt(Math.round(schedulerMs * 1e6));
      return originNs + process.hrtime.bigint();
    },
  };
}

/** `clock`'s wall time in whole epoch milliseconds, as `Date.now()` reads the real one. */
export function epochMs(clock: Clock): number {
  return Number(clock.nowNs() / NS_PER_MS);
}

/** Starts timing on `clock`: the function returned reads the seconds passed since. */
export function stopwatch(clock: Clock): () => number {
  const startNs = clock.nowNs();
  return () => Number(clock.nowNs() - startNs) / 1e9;
}

/**
 * Runs `work` once `clock` reaches `dueMs` (epoch milliseconds), on its scheduler; returns what
 * cancels it. A wait longer than a timer can hold goes in steps of MAX_TIMER_MS, each re-reading
 * the clock, so a due time days away is not cut down to the 1 ms Node would fire it after.
 */
export function scheduleAt(clock: Clock, dueMs: number, work: () => void): () => void {
  let timer: { unsubscribe(): void } | undefined;
  const arm = () => {
    const left = dueMs - epochMs(clock);
    if (left > MAX_TIMER_MS) timer = clock.scheduler.schedule(arm, MAX_TIMER_MS);
    else timer = clock.scheduler.schedule(work, Math.max(0, left));
  };
  arm();
  return () => timer?.unsubscribe();
}

/**
 * A manually advanced clock and scheduler: nothing happens until `advanceBy`/`advanceTo` runs the
 * timers that fall due, in time order. Used by conformance runs, `rivulet process` and the
 * playground so time-based stages are deterministic.
 */
export class ManualClock implements Clock, SchedulerLike {
  private nowMs = 0;
  private queue: Array<{ due: number; seq: number; run: () => void; cancelled: boolean }> = [];
  private seq = 0;

  constructor(private readonly startNs: bigint = 0n) {}

  get scheduler(): SchedulerLike {
    return this;
  }

  now(): number {
    return this.nowMs;
  }

  nowNs(): bigint {
    return this.startNs + BigInt(Math.round(this.nowMs * 1e6));
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    const clock = this;
    let current: (typeof this.queue)[number] | undefined;
    const subscription = new Subscription(() => {
      if (current) current.cancelled = true;
    });
    // A minimal SchedulerAction: rescheduling from inside `work` re-queues the same action, which
    // is how RxJS's own periodic actions behave.
    const action = Object.assign(subscription, {
      schedule(nextState?: T, nextDelay = 0): Subscription {
        if (current) current.cancelled = true;
        state = nextState;
        current = clock.enqueue(clock.nowMs + nextDelay, () => work.call(action as SchedulerAction<T>, state));
        return action;
      },
    }) as unknown as SchedulerAction<T>;
    current = this.enqueue(this.nowMs + delay, () => work.call(action, state));
    return action;
  }

  /** Runs every timer due up to `nowMs + ms`, advancing the clock to each timer's time. */
  advanceBy(ms: number): void {
    this.advanceTo(this.nowMs + ms);
  }

  advanceTo(targetMs: number): void {
    for (;;) {
      const next = this.queue.find((t) => !t.cancelled);
      this.queue = this.queue.filter((t) => !t.cancelled);
      if (!next || next.due > targetMs) break;
      this.queue.shift();
      this.nowMs = Math.max(this.nowMs, next.due);
      next.run();
    }
    this.nowMs = Math.max(this.nowMs, targetMs);
  }

  /** Runs every pending timer, however far in the future. */
  runAll(): void {
    for (let guard = 0; guard < 1_000_000; guard++) {
      const next = this.queue.find((t) => !t.cancelled);
      if (!next) return;
      this.advanceTo(next.due);
    }
  }

  pendingTimers(): number {
    return this.queue.filter((t) => !t.cancelled).length;
  }

  private enqueue(due: number, run: () => void) {
    const timer = { due, seq: this.seq++, run, cancelled: false };
    // Keep the queue sorted by due time, then by insertion order.
    let i = this.queue.length;
    while (i > 0 && this.queue[i - 1]!.due > due) i--;
    this.queue.splice(i, 0, timer);
    return timer;
  }
}
