import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { atInputTime, InputBacklog, InputClock, sharedInputTime, wallInputTime } from '../../core/input-time.js';

describe('InputClock', () => {
  it('stands still while input is held and runs on once every hold is released', () => {
    const clock = new ManualClock();
    const input = new InputClock(clock.scheduler);
    clock.advanceBy(10);
    const first = input.hold();
    const second = input.hold();
    clock.advanceBy(50);
    expect([input.now(), input.queued()]).toEqual([10, true]);
    first();
    first();
    expect([input.now(), input.queued()]).toEqual([10, true]);
    second();
    clock.advanceBy(5);
    expect([input.now(), input.queued()]).toEqual([15, false]);
  });

  it('tells who waits for queued input to drain, once', () => {
    const clock = new ManualClock();
    const input = new InputClock(clock.scheduler);
    const calls: number[] = [];
    const release = input.hold();
    input.whenDrained(() => calls.push(clock.now()));
    input.whenDrained(() => calls.push(-1)).unsubscribe();
    clock.advanceBy(7);
    release();
    input.hold()();
    expect(calls).toEqual([7]);
  });

  it("follows a source's backlog while it waits, until the source closes it", () => {
    const clock = new ManualClock();
    const input = new InputClock(clock.scheduler);
    const backlog = new InputBacklog();
    const releaseEarly = backlog.hold();
    input.follow(backlog);
    input.follow(backlog);
    expect(input.queued()).toBe(true);
    releaseEarly();
    expect(input.queued()).toBe(false);
    backlog.hold();
    backlog.hold();
    expect(input.queued()).toBe(true);
    backlog.close();
    expect([input.queued(), backlog.waiting]).toEqual([false, false]);
    backlog.hold();
    expect(input.queued()).toBe(false);
  });

  it('lets a worker thread read the same time from shared memory, and notice the drain within a few milliseconds', () => {
    const clock = new ManualClock();
    const input = InputClock.shared(clock.scheduler);
    const worker = sharedInputTime(input.shared!, clock.scheduler);
    clock.advanceBy(20);
    const release = input.hold();
    clock.advanceBy(100);
    expect([worker.now(), worker.queued()]).toEqual([20, true]);
    const drained: number[] = [];
    worker.whenDrained(() => drained.push(clock.now()));
    clock.advanceBy(12);
    release();
    clock.advanceBy(10);
    expect(drained).toEqual([135]);
    expect([worker.now(), worker.queued()]).toEqual([30, false]);
  });
});

describe('atInputTime', () => {
  it('runs at the due input time with nothing queued, after one more turn of the scheduler', () => {
    const clock = new ManualClock();
    const runs: number[] = [];
    atInputTime(wallInputTime(clock.scheduler), clock.scheduler, 100, () => runs.push(clock.now()));
    clock.advanceBy(99);
    expect(runs).toEqual([]);
    expect(clock.pendingTimers()).toBe(1);
    clock.advanceBy(1);
    expect(runs).toEqual([100]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('waits out queued input and the time it pushed the due moment back', () => {
    const clock = new ManualClock();
    const input = new InputClock(clock.scheduler);
    const runs: number[] = [];
    atInputTime(input, clock.scheduler, 100, () => runs.push(clock.now()));
    clock.advanceBy(60);
    const release = input.hold();
    clock.advanceBy(1000);
    release();
    clock.advanceBy(39);
    expect(runs).toEqual([]);
    clock.advanceBy(1);
    expect(runs).toEqual([1100]);
  });

  it('does nothing once unsubscribed, queued input or not', () => {
    const clock = new ManualClock();
    const input = new InputClock(clock.scheduler);
    const runs: number[] = [];
    const release = input.hold();
    atInputTime(input, clock.scheduler, 10, () => runs.push(clock.now())).unsubscribe();
    clock.advanceBy(20);
    release();
    clock.runAll();
    expect(runs).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
