import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimeParseError } from '../../../lib/time/layout.js';
import { formatRFC3339Nano, msToNs, nsToMs, parseRFC3339 } from '../../../lib/time/rfc3339.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

const YEAR_0 = -62_167_219_200_000_000_000n;
const YEAR_10000 = 253_402_300_800_000_000_000n;

describe('formatRFC3339Nano', () => {
  it.each([
    [0n, '1970-01-01T00:00:00.000000000Z'],
    [1_704_164_645_000_000_000n, '2024-01-02T03:04:05.000000000Z'],
    [1_704_164_645_000_000_001n, '2024-01-02T03:04:05.000000001Z'],
    [-1n, '1969-12-31T23:59:59.999999999Z'],
    [YEAR_0, '0000-01-01T00:00:00.000000000Z'],
    [9_223_372_036_854_775_807n, '2262-04-11T23:47:16.854775807Z'],
  ])('formats %d as %s', (ns, text) => {
    expect(formatRFC3339Nano(ns)).toBe(text);
  });
});

describe('parseRFC3339', () => {
  it.each([
    ['2024-01-02T03:04:05Z', 1_704_164_645_000_000_000n],
    ['2024-01-02T04:04:05.5+01:00', 1_704_164_645_500_000_000n],
    ['2024-01-01T22:04:05.000000001-05:00', 1_704_164_645_000_000_001n],
    ['2024-01-02T03:04:05.1234567899Z', 1_704_164_645_123_456_789n],
    ['2024-01-02T03:04:05,25Z', 1_704_164_645_250_000_000n],
    // Go's general layout parser (behind the strict fast path) accepts a one-digit hour.
    ['2024-01-02T3:04:05Z', 1_704_164_645_000_000_000n],
    ['0000-01-01T00:00:00Z', YEAR_0],
  ])('parses %s', (text, ns) => {
    expect(parseRFC3339(text)).toBe(ns);
  });

  it.each([
    ['2024-01-02t03:04:05Z', 'parsing time "2024-01-02t03:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse "t03:04:05Z" as "T"'],
    ['2024-01-02T03:04:05z', 'parsing time "2024-01-02T03:04:05z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00"'],
    ['2024-01-02T03:04:05', 'parsing time "2024-01-02T03:04:05" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"'],
    ['2024-02-30T03:04:05Z', 'parsing time "2024-02-30T03:04:05Z": day out of range'],
    [
      '2024-01-02T03:04:05+0100',
      'parsing time "2024-01-02T03:04:05+0100" as "2006-01-02T15:04:05Z07:00": cannot parse "+0100" as "Z07:00"',
    ],
  ])('rejects %s', (text, message) => {
    let error: unknown;
    try {
      parseRFC3339(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TimeParseError);
    expect((error as Error).message).toBe(message);
  });

  it('parses back every formatted instant', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: YEAR_0, max: YEAR_10000 - 1n }), (ns) => {
        expect(parseRFC3339(formatRFC3339Nano(ns))).toBe(ns);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('formats strings that sort like their instants', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: YEAR_0, max: YEAR_10000 - 1n }), fc.bigInt({ min: YEAR_0, max: YEAR_10000 - 1n }), (a, b) => {
        const [sa, sb] = [formatRFC3339Nano(a), formatRFC3339Nano(b)];
        expect(Math.sign(sa.localeCompare(sb, 'en'))).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('ms and ns conversions', () => {
  it('converts milliseconds to nanoseconds', () => {
    expect(msToNs(1_700_000_000_123)).toBe(1_700_000_000_123_000_000n);
    expect(msToNs(1.5)).toBe(1_500_000n);
    expect(msToNs(-2n)).toBe(-2_000_000n);
  });

  it('floors nanoseconds to milliseconds', () => {
    expect(nsToMs(1_700_000_000_123_999_999n)).toBe(1_700_000_000_123);
    expect(nsToMs(-1n)).toBe(-1);
    expect(nsToMs(-1_000_000n)).toBe(-1);
  });

  it('round-trips whole milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(nsToMs(msToNs(ms))).toBe(ms);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
