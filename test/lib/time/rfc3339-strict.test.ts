import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRFC3339Strict } from '../../../lib/time/rfc3339-strict.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 200);
const ms = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;

describe('parseRFC3339Strict', () => {
  it('parses nanoseconds and a Z zone', () => {
    expect(parseRFC3339Strict('2019-01-01T01:00:00.000000001Z')).toBe(ms('2019-01-01T01:00:00Z') + 1n);
  });

  it('scales short fractions', () => {
    expect(parseRFC3339Strict('2019-04-30T02:12:41.8443515Z')).toBe(ms('2019-04-30T02:12:41Z') + 844_351_500n);
    expect(parseRFC3339Strict('2019-04-30T02:12:41.5Z')).toBe(ms('2019-04-30T02:12:41.500Z'));
  });

  it('honours numeric offsets', () => {
    expect(parseRFC3339Strict('2019-05-07T18:57:50.904275087+00:00')).toBe(ms('2019-05-07T18:57:50Z') + 904_275_087n);
    expect(parseRFC3339Strict('2024-01-02T04:04:05+01:00')).toBe(ms('2024-01-02T03:04:05Z'));
    expect(parseRFC3339Strict('2024-01-01T23:30:00-01:30')).toBe(ms('2024-01-02T01:00:00Z'));
  });

  it('accepts years before 1970 and leap days', () => {
    expect(parseRFC3339Strict('1969-12-31T23:59:59.5Z')).toBe(-500_000_000n);
    expect(parseRFC3339Strict('2024-02-29T00:00:00Z')).toBe(ms('2024-02-29T00:00:00Z'));
  });

  it.each([
    ['ten fraction digits', '2019-01-01T01:00:00.0000000001Z'],
    ['a comma before the fraction', '2019-01-01T01:00:00,5Z'],
    ['a dot without digits', '2019-01-01T01:00:00.Z'],
    ['a lower-case t', '2019-01-01t01:00:00Z'],
    ['a lower-case z', '2019-01-01T01:00:00z'],
    ['a space separator', '2019-01-01 01:00:00Z'],
    ['an offset without colon', '2019-01-01T01:00:00+0100'],
    ['a missing zone', '2019-01-01T01:00:00'],
    ['hour 24', '2019-01-01T24:00:00Z'],
    ['second 60', '2019-01-01T23:59:60Z'],
    ['February 29 of a common year', '2023-02-29T00:00:00Z'],
    ['an offset hour of 24', '2019-01-01T01:00:00+24:00'],
    ['a one-digit hour', '2019-01-01T1:00:00Z'],
    ['trailing text', '2019-01-01T01:00:00Zx'],
    ['the empty string', ''],
    ['a number', '3242'],
  ])('rejects %s', (_what, value) => {
    expect(parseRFC3339Strict(value)).toBeUndefined();
  });

  it('agrees with Date.parse on millisecond timestamps (property)', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        (date) => {
          const iso = date.toISOString();
          expect(parseRFC3339Strict(iso)).toBe(BigInt(date.getTime()) * 1_000_000n);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
