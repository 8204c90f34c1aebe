import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { deadlineOf, scopedDeadline } from '../../core/deadline.js';
import { CanceledError, DeadlineExceededError } from '../../lib/go/context-errors.js';

describe('scopedDeadline', () => {
  it('fires with DeadlineExceededError at its deadline and records it', async () => {
    const deadline = Date.now() + 30;
    const scoped = scopedDeadline(deadline);
    expect(deadlineOf(scoped.signal)).toBe(deadline);
    await new Promise((resolve) => scoped.signal.addEventListener('abort', resolve));
    expect(scoped.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect((scoped.signal.reason as Error).message).toBe('context deadline exceeded');
  });

  it('keeps the earlier deadline of a parent and follows its abort', () => {
    const parent = scopedDeadline(Date.now() + 1_000);
    const child = scopedDeadline(Date.now() + 60_000, parent.signal);
    expect(deadlineOf(child.signal)).toBe(deadlineOf(parent.signal));
    const controller = new AbortController();
    const linked = scopedDeadline(Date.now() + 60_000, controller.signal);
    controller.abort(new CanceledError());
    expect(linked.signal.reason).toBeInstanceOf(CanceledError);
    for (const s of [parent, child, linked]) s.release();
  });

  it('is already aborted when the deadline has passed', () => {
    const scoped = scopedDeadline(Date.now() - 1);
    expect(scoped.signal.aborted).toBe(true);
    expect(scoped.signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('waits out a deadline years away instead of firing at once, without overflowing a timer', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const scoped = scopedDeadline(Date.UTC(2100, 0, 1));
      // Node reports an overflowing delay on the next tick and fires it after 1 ms.
      await new Promise((r) => setTimeout(r, 30));
      expect(scoped.signal.aborted).toBe(false);
      scoped.release();
      expect(warnings.map((w) => w.name)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('lets go of its timer and parent listener on release', async () => {
    const controller = new AbortController();
    const scoped = scopedDeadline(Date.now() + 20, controller.signal);
    scoped.release();
    await new Promise((r) => setTimeout(r, 40));
    controller.abort();
    expect(scoped.signal.aborted).toBe(false);
  });
});

describe('scopedDeadline on a component clock', () => {
  const at = (ms: number) => new ManualClock(BigInt(ms) * 1_000_000n);

  it('fires when its clock reaches the deadline, on virtual time', () => {
    const clock = at(1_000_000);
    const scoped = scopedDeadline(1_000_500, undefined, clock);
    clock.advanceBy(499);
    expect(scoped.signal.aborted).toBe(false);
    clock.advanceBy(1);
    expect(scoped.signal.aborted).toBe(true);
    expect(scoped.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('is already aborted when its clock is past the deadline, whatever the wall clock says', () => {
    const clock = at(Date.UTC(2100, 0, 1));
    const scoped = scopedDeadline(Date.UTC(2099, 0, 1), undefined, clock);
    expect(scoped.signal.aborted).toBe(true);
    expect(scoped.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("takes its parent's earlier deadline and fires at it; release cancels the clock's timer", () => {
    const clock = at(0);
    const parent = scopedDeadline(200, undefined, clock);
    const child = scopedDeadline(10_000, parent.signal, clock);
    expect(deadlineOf(child.signal)).toBe(200);
    const released = scopedDeadline(100, undefined, clock);
    released.release();
    clock.advanceBy(200);
    expect(released.signal.aborted).toBe(false);
    expect(child.signal.aborted).toBe(true);
    expect(child.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(clock.pendingTimers()).toBe(0);
  });
});
