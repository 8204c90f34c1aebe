/**
 * Deadlines carried by an AbortSignal (Go's `context.WithDeadline`): the signal aborts when the
 * deadline passes or its parent aborts, and the deadline it fires at is recorded beside it so a
 * writer can send the time left onward (Connect-Timeout-Ms) hop by hop.
 */
import { DeadlineExceededError } from '../lib/go/context-errors.js';
import { type Clock, epochMs, scheduleAt, systemClock } from './clock.js';

const deadlines = new WeakMap<AbortSignal, number>();

/** A deadline-bound signal and the means to let go of its timer early. */
export interface ScopedDeadline {
  readonly signal: AbortSignal;
  /** Clears the timer and the link to the parent; the signal stays as it is. */
  release(): void;
}

/** The real clock, for deadlines made without a component's. */
const realClock = systemClock();

/**
 * A signal that aborts with DeadlineExceededError at `deadlineMs` (epoch milliseconds on `clock`,
 * the component's; the real one when none is given) or with `parent`'s reason when `parent`
 * aborts first. Its deadline is the earlier of the two. Call `release` when the work it bounds is
 * over, so no timer or listener outlives it: the timer is the clock scheduler's, which keeps a
 * process alive while it is pending.
 */
export function scopedDeadline(deadlineMs: number, parent?: AbortSignal, clock: Clock = realClock): ScopedDeadline {
  const inherited = parent ? deadlineOf(parent) : undefined;
  const effective = inherited !== undefined ? Math.min(inherited, deadlineMs) : deadlineMs;
  const controller = new AbortController();
  deadlines.set(controller.signal, effective);
  let cancelTimer: (() => void) | undefined;
  const onParentAbort = () => controller.abort(parent!.reason);
  const release = () => {
    cancelTimer?.();
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release };
  }
  if (effective <= epochMs(clock)) {
    controller.abort(new DeadlineExceededError());
    return { signal: controller.signal, release };
  }
  cancelTimer = scheduleAt(clock, effective, () => {
    release();
    controller.abort(new DeadlineExceededError());
  });
  parent?.addEventListener('abort', onParentAbort, { once: true });
  controller.signal.addEventListener('abort', release, { once: true });
  return { signal: controller.signal, release };
}

/** The deadline (epoch milliseconds) a signal made by `scopedDeadline` fires at. */
export function deadlineOf(signal: AbortSignal): number | undefined {
  return deadlines.get(signal);
}
