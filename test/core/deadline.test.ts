import { describe, expect, it } from 'vitest';
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
