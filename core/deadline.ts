/**
 * Deadlines carried by an AbortSignal (Go's `context.WithDeadline`): the signal aborts when the
 * deadline passes or its parent aborts, and the deadline it fires at is recorded beside it so a
 * writer can send the time left onward (Connect-Timeout-Ms) hop by hop.
 */
import { DeadlineExceededError } from '../lib/go/context-errors.js';
import { MAX_TIMER_MS } from './clock.js';

const deadlines = new WeakMap<AbortSignal, number>();

/** A deadline-bound signal and the means to let go of its timer early. */
export interface ScopedDeadline {
  readonly signal: AbortSignal;
  /** Clears the timer and the link to the parent; the signal stays as it is. */
  release(): void;
}

/**
 * A signal that aborts with DeadlineExceededError at `deadlineMs` (epoch milliseconds) or with
 * `parent`'s reason when `parent` aborts first. Its deadline is the earlier of the two. Call
 * `release` when the work it bounds is over, so no timer or listener outlives it.
 */
export function scopedDeadline(deadlineMs: number, parent?: AbortSignal): ScopedDeadline {
  const inherited = parent ? deadlineOf(parent) : undefined;
  const effective = inherited !== undefined ? Math.min(inherited, deadlineMs) : deadlineMs;
  const controller = new AbortController();
  deadlines.set(controller.signal, effective);
  let timer: NodeJS.Timeout | undefined;
  const onParentAbort = () => controller.abort(parent!.reason);
  const release = () => {
    if (timer !== undefined) clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release };
  }
  const left = effective - Date.now();
  if (left <= 0) {
    controller.abort(new DeadlineExceededError());
    return { signal: controller.signal, release };
  }
  const fire = () => {
    release();
    controller.abort(new DeadlineExceededError());
  };
  // Node cuts a delay past MAX_TIMER_MS down to 1 ms (with a TimeoutOverflowWarning), which would
  // fire a deadline days away at once: a far deadline waits in steps and re-arms until it is due.
  const arm = (ms: number) => {
    timer = ms > MAX_TIMER_MS ? setTimeout(() => arm(effective - Date.now()), MAX_TIMER_MS) : setTimeout(fire, ms);
    // A pending deadline must not keep a process alive on its own.
    timer.unref?.();
  };
  arm(left);
  parent?.addEventListener('abort', onParentAbort, { once: true });
  controller.signal.addEventListener('abort', release, { once: true });
  return { signal: controller.signal, release };
}

/** The deadline (epoch milliseconds) a signal made by `scopedDeadline` fires at. */
export function deadlineOf(signal: AbortSignal): number | undefined {
  return deadlines.get(signal);
}
