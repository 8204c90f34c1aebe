import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatRFC3339Nano, RFC3339NanoFormatter } from '../../../lib/time/rfc3339.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

const NANOS_PER_SECOND = 1_000_000_000n;
const YEAR_0 = -62_167_219_200n * NANOS_PER_SECOND;
const YEAR_10000 = 253_402_300_800n * NANOS_PER_SECOND;

/** The same text from Date's own calendar, with no state kept between calls. */
function referenceFormat(epochNs: bigint): string {
  let seconds = epochNs / NANOS_PER_SECOND;
  let nanos = epochNs % NANOS_PER_SECOND;
  if (nanos < 0n) {
    nanos += NANOS_PER_SECOND;
    seconds -= 1n;
  }
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${String(nanos).padStart(9, '0')}Z`;
}

/** Steps that land just inside and just outside the second formatted before. */
const step = fc.oneof(
  fc.constantFrom(0n, 1n, -1n, NANOS_PER_SECOND, -NANOS_PER_SECOND, NANOS_PER_SECOND - 1n, 1n - NANOS_PER_SECOND),
  fc.bigInt({ min: -2n * NANOS_PER_SECOND, max: 2n * NANOS_PER_SECOND }),
);

describe('formatRFC3339Nano over a run of instants', () => {
  it('formats each instant alike whatever the instants before it', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: YEAR_0 + 100n * NANOS_PER_SECOND, max: YEAR_10000 - 100n * NANOS_PER_SECOND }),
        fc.boolean(),
        fc.array(step, { maxLength: 40 }),
        (start, onSecond, steps) => {
          let epochNs = onSecond ? start - (((start % NANOS_PER_SECOND) + NANOS_PER_SECOND) % NANOS_PER_SECOND) : start;
          for (const delta of steps) {
            epochNs += delta;
            expect(formatRFC3339Nano(epochNs)).toBe(referenceFormat(epochNs));
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('formats the seconds around the epoch and after a jump back', () => {
    for (const epochNs of [-1n, 0n, 999_999_999n, 1_000_000_000n, -1_000_000_000n, -1_000_000_001n, 1_704_164_645_000_000_001n, 5n]) {
      expect(formatRFC3339Nano(epochNs)).toBe(referenceFormat(epochNs));
    }
  });
});

describe('RFC3339NanoFormatter', () => {
  it('gives the second and the fraction that formatRFC3339Nano joins, over a run of instants', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: YEAR_0 + 100n * NANOS_PER_SECOND, max: YEAR_10000 - 100n * NANOS_PER_SECOND }),
        fc.array(step, { maxLength: 40 }),
        (start, steps) => {
          const formatter = new RFC3339NanoFormatter();
          let epochNs = start;
          for (const delta of steps) {
            epochNs += delta;
            const fraction = formatter.fraction(epochNs);
            expect(`${formatter.secondPrefix}${fraction}Z`).toBe(referenceFormat(epochNs));
            expect(formatter.format(epochNs)).toBe(referenceFormat(epochNs));
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('keeps the same second prefix string while the second stays', () => {
    const formatter = new RFC3339NanoFormatter();
    formatter.fraction(1_704_164_645_000_000_001n);
    const prefix = formatter.secondPrefix;
    expect(formatter.fraction(1_704_164_645_999_999_999n)).toBe('999999999');
    expect(formatter.secondPrefix).toBe(prefix);
    expect(formatter.fraction(0n)).toBe('000000000');
    expect(formatter.secondPrefix).toBe('1970-01-01T00:00:00.');
  });
});
