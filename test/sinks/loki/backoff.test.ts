import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff, retryAfterMs } from '../../../sinks/loki/backoff.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('backoff', () => {
  it('doubles the start of each delay range up to the maximum', () => {
    const low = new Backoff(100, 1000, 0, () => 0);
    expect(Array.from({ length: 6 }, () => low.nextDelay())).toEqual([100, 200, 400, 800, 1000, 1000]);
    const high = new Backoff(100, 1000, 0, () => 0.999);
    expect(Array.from({ length: 5 }, () => high.nextDelay())).toEqual([199, 399, 799, 999, 1000]);
  });

  it('keeps every delay within [min, max] whatever the jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.array(fc.double({ min: 0, max: 0.9999, noNaN: true }), { maxLength: 20 }),
        (min, extra, draws) => {
          const max = min + extra;
          let i = 0;
          const backoff = new Backoff(min, max, 0, () => draws[i++ % Math.max(1, draws.length)] ?? 0);
          for (let k = 0; k < draws.length; k++) {
            const d = backoff.nextDelay();
            expect(d).toBeGreaterThanOrEqual(min);
            expect(d).toBeLessThanOrEqual(max);
          }
        },
      ),
      { numRuns },
    );
  });

  it('counts attempts in total, 0 meaning no limit', () => {
    const three = new Backoff(1, 2, 3);
    const seen: number[] = [];
    do {
      three.attempted();
      seen.push(seen.length + 1);
    } while (three.ongoing());
    expect(seen).toEqual([1, 2, 3]);
    const endless = new Backoff(1, 2, 0);
    for (let i = 0; i < 1000; i++) endless.attempted();
    expect(endless.ongoing()).toBe(true);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('3', 0)).toBe(3000);
    expect(retryAfterMs(' 0 ', 0)).toBe(0);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(retryAfterMs('soon', 0)).toBeUndefined();
    expect(retryAfterMs(null, 0)).toBeUndefined();
  });
});
