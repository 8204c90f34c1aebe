import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';

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
