import { map, type SchedulerAction, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { epochMs, MAX_TIMER_MS, ManualClock, scheduleAt, stopwatch, systemClock } from '../../core/clock.js';

describe('systemClock', () => {
  it("follows the program's TestScheduler.run: frame n is n ms after the epoch, in nanoseconds", () => {
    const clock = systemClock();
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ cold, expectObservable }) => {
      const times = cold('a 9ms b 90ms c|').pipe(map(() => clock.nowNs()));
      expectObservable(times).toBe('a 9ms b 90ms c|', { a: 0n, b: 10_000_000n, c: 101_000_000n });
    });
  });

  it('reads the real wall clock with sub-millisecond steps outside virtual time, before and after a TestScheduler.run', () => {
    const clock = systemClock();
    const wallNs = () => BigInt(Date.now()) * 1_000_000n;
    const before = clock.nowNs();
    const next = clock.nowNs();
    new TestScheduler(() => {}).run(() => {
      expect(clock.nowNs()).toBe(0n);
    });
    const after = clock.nowNs();
    // hrtime advances between two reads a moment apart; a millisecond clock would mostly repeat.
    expect(next).toBeGreaterThan(before);
    expect(after).toBeGreaterThan(next);
    const gapMs = Number(after - wallNs()) / 1e6;
    expect(Math.abs(gapMs)).toBeLessThan(1_000);
  });
});

describe('epochMs and stopwatch', () => {
  it('read the clock: whole epoch milliseconds, and seconds passed with the fraction kept', () => {
    const clock = new ManualClock(1_700_000_000_123_456_789n);
    expect(epochMs(clock)).toBe(1_700_000_000_123);
    const elapsed = stopwatch(clock);
    clock.advanceBy(1_500.25);
    expect(elapsed()).toBe(1.50025);
    expect(epochMs(clock)).toBe(1_700_000_001_623);
  });
});

describe('scheduleAt', () => {
  it('runs the work when the clock reaches the due time, not before', () => {
    const clock = new ManualClock(5_000_000_000n);
    const ran: number[] = [];
    scheduleAt(clock, 5_000 + 250, () => ran.push(epochMs(clock)));
    clock.advanceBy(249);
    expect(ran).toEqual([]);
    clock.advanceBy(1);
    expect(ran).toEqual([5_250]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('runs at once (on the scheduler) for a due time already passed, and not at all once cancelled', () => {
    const clock = new ManualClock(10_000_000_000n);
    const ran: string[] = [];
    scheduleAt(clock, 9_000, () => ran.push('late'));
    const cancel = scheduleAt(clock, 10_100, () => ran.push('cancelled'));
    clock.advanceBy(0);
    expect(ran).toEqual(['late']);
    cancel();
    clock.runAll();
    expect(ran).toEqual(['late']);
  });

  it('waits for a due time past what a timer holds in steps of at most MAX_TIMER_MS, and fires on time', () => {
    const delays: number[] = [];
    const clock = new (class extends ManualClock {
      override schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
        delays.push(delay);
        return super.schedule(work, delay, state);
      }
    })(0n);
    const dueMs = 2 * MAX_TIMER_MS + 5;
    let firedAt: number | undefined;
    scheduleAt(clock, dueMs, () => {
      firedAt = epochMs(clock);
    });
    clock.runAll();
    expect(firedAt).toBe(dueMs);
    expect(delays).toEqual([MAX_TIMER_MS, MAX_TIMER_MS, 5]);
  });
});
