import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  civilFromDays,
  dayOfYear,
  daysFromCivil,
  daysInMonth,
  isLeapYear,
  joinEpochNs,
  splitEpochNs,
  weekdayOfDays,
} from '../../../lib/time/civil.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

function jsDays(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return Math.round(d.getTime() / 86_400_000);
}

describe('civil calendar arithmetic', () => {
  it('knows leap years and month lengths', () => {
    expect([1900, 2000, 2023, 2024, 0].map(isLeapYear)).toEqual([false, true, false, true, true]);
    expect(daysInMonth(2, 2024)).toBe(29);
    expect(daysInMonth(2, 1900)).toBe(28);
    expect(daysInMonth(12, 2023)).toBe(31);
    expect(dayOfYear(2024, 12, 31)).toBe(366);
  });

  it('counts days like the proleptic Gregorian calendar of JS dates', () => {
    fc.assert(
      fc.property(fc.integer({ min: -2000, max: 12000 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: -40, max: 70 }), (y, m, d) => {
        expect(daysFromCivil(y, m, d)).toBe(jsDays(y, m, d));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('turns day numbers back into dates', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 3_000_000 }), (days) => {
        const { year, month, day } = civilFromDays(days);
        expect(daysFromCivil(year, month, day)).toBe(days);
        expect(day).toBeGreaterThanOrEqual(1);
        expect(day).toBeLessThanOrEqual(daysInMonth(month, year));
        expect(weekdayOfDays(days)).toBe(new Date(days * 86_400_000).getUTCDay());
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('splits nanosecond instants into floored seconds and nanoseconds', () => {
    expect(splitEpochNs(-1n)).toEqual({ seconds: -1, nanos: 999_999_999 });
    expect(splitEpochNs(1_500_000_000n)).toEqual({ seconds: 1, nanos: 500_000_000 });
    expect(joinEpochNs(-1, 999_999_999)).toBe(-1n);
  });
});
