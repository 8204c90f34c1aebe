/**
 * Idle means no input waiting. A stage that acts on idleness (stage.multiline's `max_wait_time`)
 * asks an `InputTime` instead of the bare scheduler: its clock stands still while input is
 * queued — entries a source received and has not sent yet (a JetStream reader's undecoded
 * messages, the rest of a file being read), a batch being pushed through the stages — and runs
 * again once that input is consumed. A process that stalls with a block's next lines already
 * waiting therefore does not see the block as idle, while input that is genuinely idle keeps the
 * reference's wall-clock meaning: a block is flushed `max_wait_time` after its stream's last line
 * when nothing was waiting meanwhile.
 *
 * The time is kept for the whole pipeline, not per stream: which streams a queued message holds
 * is not known before it is decoded. Queued input is short-lived except while the pipeline cannot
 * keep up (a backlog being caught up), when holding idle blocks is what keeps them whole.
 */
import { Subscription, type SchedulerLike } from 'rxjs';
import { MAX_TIMER_MS } from './clock.js';

/** The time idleness is measured on (see the module doc). */
export interface InputTime {
  /** Milliseconds on the scheduler's scale, standing still while input is queued. */
  now(): number;
  /** Whether input is queued now. */
  queued(): boolean;
  /** Calls `callback` once no input is queued any more (not at once when none is). */
  whenDrained(callback: () => void): Subscription;
}

/** The scheduler's own time: nothing is ever queued (a stage used outside a processor). */
export function wallInputTime(scheduler: SchedulerLike): InputTime {
  return {
    now: () => scheduler.now(),
    queued: () => false,
    whenDrained: () => Subscription.EMPTY,
  };
}

/**
 * What a source tells the pipelines it sends to: it holds input it received and has not sent yet
 * (`SendOptions.backlog`). A pipeline follows the backlog from the first send that names it until
 * the source closes it. Holds are counted, so one backlog may serve several readers of a source.
 */
export class InputBacklog {
  private holds = 0;
  private closed = false;
  private readonly watchers = new Set<(waiting: boolean) => void>();

  /** Whether input is waiting. */
  get waiting(): boolean {
    return this.holds > 0;
  }

  /** Input is waiting until the returned release is called (once; later calls do nothing). */
  hold(): () => void {
    if (this.closed) return () => {};
    if (this.holds++ === 0) this.tell(true);
    let released = false;
    return () => {
      if (released || this.closed) return;
      released = true;
      if (--this.holds === 0) this.tell(false);
    };
  }

  /** Follows the backlog: `watcher` hears every change, and false once it closes. */
  watch(watcher: (waiting: boolean) => void): () => void {
    if (this.closed) return () => {};
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** The source is done with it: nothing waits any more, and followers let it go. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.holds = 0;
    const watchers = [...this.watchers];
    this.watchers.clear();
    // Told even when nothing waited, so that followers let it go.
    for (const watcher of watchers) watcher(false);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private tell(waiting: boolean): void {
    for (const watcher of [...this.watchers]) watcher(waiting);
  }
}

/** A backlog an `InputClock` follows: how to stop, and the hold it has while the backlog waits. */
interface Following {
  release: (() => void) | undefined;
  unwatch: () => void;
}

/** Byte size of the shared form of an `InputClock` (see `sharedInputTime`). */
const SHARED_BYTES = 24;

/**
 * The `InputTime` a pipeline's owner keeps (logs.process): input is queued while anyone holds it —
 * the processor while it pushes a batch, a followed source backlog while it waits. With `shared`,
 * the state is also written to a SharedArrayBuffer that worker threads read (`sharedInputTime`),
 * so a worker's stages see input queued the moment the main thread does, whichever of a message
 * and a timer the worker's event loop takes first.
 */
export class InputClock implements InputTime {
  private holds = 0;
  /** Time spent with input queued before the current spell. */
  private pausedMs = 0;
  /** When the current spell of queued input began; undefined while none is queued. */
  private pausedAt: number | undefined;
  private readonly drained = new Set<() => void>();
  private readonly followed = new Map<InputBacklog, Following>();
  private readonly sharedSeq: Int32Array | undefined;
  private readonly sharedTimes: Float64Array | undefined;

  constructor(
    private readonly scheduler: SchedulerLike,
    /** Set to publish the state to worker threads (see `sharedInputTime`). */
    readonly shared?: SharedArrayBuffer,
  ) {
    if (shared) {
      this.sharedSeq = new Int32Array(shared, 0, 2);
      this.sharedTimes = new Float64Array(shared, 8, 2);
      this.publish();
    }
  }

  /** A clock whose state worker threads can read. */
  static shared(scheduler: SchedulerLike): InputClock {
    return new InputClock(scheduler, new SharedArrayBuffer(SHARED_BYTES));
  }

  now(): number {
    return (this.pausedAt ?? this.scheduler.now()) - this.pausedMs;
  }

  queued(): boolean {
    return this.holds > 0;
  }

  whenDrained(callback: () => void): Subscription {
    const once = () => {
      this.drained.delete(once);
      callback();
    };
    this.drained.add(once);
    return new Subscription(() => this.drained.delete(once));
  }

  /** Input is queued until the returned release is called (once; later calls do nothing). */
  hold(): () => void {
    if (this.holds++ === 0) {
      this.pausedAt = this.scheduler.now();
      this.publish();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds > 0) return;
      this.pausedMs += this.scheduler.now() - this.pausedAt!;
      this.pausedAt = undefined;
      this.publish();
      for (const callback of [...this.drained]) callback();
    };
  }

  /** Counts a source's backlog as queued input whenever it waits, until the source closes it. */
  follow(backlog: InputBacklog): void {
    if (this.followed.has(backlog) || backlog.isClosed) return;
    const following: Following = { release: undefined, unwatch: () => {} };
    const watcher = (waiting: boolean) => {
      if (waiting) following.release ??= this.hold();
      else {
        following.release?.();
        following.release = undefined;
      }
      if (backlog.isClosed) this.followed.delete(backlog);
    };
    following.unwatch = backlog.watch(watcher);
    this.followed.set(backlog, following);
    if (backlog.waiting) watcher(true);
  }

  /** Stops following every backlog (the pipeline's owner stops). */
  unfollowAll(): void {
    const followed = [...this.followed.values()];
    this.followed.clear();
    for (const following of followed) {
      following.unwatch();
      following.release?.();
    }
  }

  /** Writes the state for readers on other threads: a sequence lock, odd while writing. */
  private publish(): void {
    if (!this.sharedSeq || !this.sharedTimes) return;
    Atomics.add(this.sharedSeq, 0, 1);
    this.sharedTimes[0] = this.pausedMs;
    this.sharedTimes[1] = this.pausedAt ?? Number.NaN;
    Atomics.add(this.sharedSeq, 0, 1);
  }
}

/** How often a worker thread looks whether queued input has drained. */
const DRAIN_POLL_MS = 5;

/**
 * A worker thread's view of the main thread's `InputClock` (its `shared` buffer). Both threads
 * read the same wall clock through their schedulers. Drained input is noticed by polling, a few
 * milliseconds late at most, only while input is queued and a stage waits for it.
 */
export function sharedInputTime(shared: SharedArrayBuffer, scheduler: SchedulerLike): InputTime {
  const seq = new Int32Array(shared, 0, 2);
  const times = new Float64Array(shared, 8, 2);
  const read = (): { pausedMs: number; pausedAt: number } => {
    for (;;) {
      const before = Atomics.load(seq, 0);
      const pausedMs = times[0]!;
      const pausedAt = times[1]!;
      if (before % 2 === 0 && Atomics.load(seq, 0) === before) return { pausedMs, pausedAt };
    }
  };
  const queued = () => !Number.isNaN(read().pausedAt);
  return {
    now: () => {
      const { pausedMs, pausedAt } = read();
      return (Number.isNaN(pausedAt) ? scheduler.now() : pausedAt) - pausedMs;
    },
    queued,
    whenDrained: (callback) => {
      const subscription = new Subscription();
      const look = () => {
        if (queued()) subscription.add(scheduler.schedule(look, DRAIN_POLL_MS));
        else callback();
      };
      subscription.add(scheduler.schedule(look, DRAIN_POLL_MS));
      return subscription;
    },
  };
}

/**
 * Runs `work` once the input time reaches `dueMs` with no input queued: a timer on the scheduler
 * for the input time still to go, waiting while input is queued and re-armed when queued spells
 * pushed the moment back. Before `work` runs, the event loop gets one more turn, so input that
 * arrived while the process stalled (data in a socket, a message to a worker thread) is taken in
 * first — on virtual time that turn takes no time. Unsubscribing cancels it.
 */
export function atInputTime(input: InputTime, scheduler: SchedulerLike, dueMs: number, work: () => void): Subscription {
  const subscription = new Subscription();
  let current: Subscription | undefined;
  let looked = false;
  const replace = (next: Subscription) => {
    if (current) subscription.remove(current);
    current = next;
    subscription.add(next);
  };
  const attempt = () => {
    if (subscription.closed) return;
    if (input.queued()) {
      looked = false;
      replace(input.whenDrained(attempt));
      return;
    }
    const left = dueMs - input.now();
    if (left > 0) {
      looked = false;
      replace(scheduler.schedule(attempt, Math.min(left, MAX_TIMER_MS)));
      return;
    }
    if (!looked) {
      looked = true;
      replace(scheduler.schedule(attempt, 0));
      return;
    }
    subscription.unsubscribe();
    work();
  };
  replace(scheduler.schedule(attempt, Math.max(0, Math.min(dueMs - input.now(), MAX_TIMER_MS))));
  return subscription;
}
