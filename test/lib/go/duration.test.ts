import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { DurationError, formatGoDuration, goTimeQuote, parseGoDuration } from '../../../lib/go/duration.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

function errorOf(text: string): string {
  try {
    parseGoDuration(text);
  } catch (err) {
    expect(err).toBeInstanceOf(DurationError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parseGoDuration', () => {
  const accepted: Array<[string, bigint]> = [
    ['0', 0n],
    ['-0', 0n],
    ['+0', 0n],
    ['0s', 0n],
    ['5s', 5_000_000_000n],
    ['30s', 30_000_000_000n],
    ['1478s', 1_478_000_000_000n],
    ['-5s', -5_000_000_000n],
    ['+5s', 5_000_000_000n],
    ['-0s', 0n],
    ['5.0s', 5_000_000_000n],
    ['5.6s', 5_600_000_000n],
    ['5.s', 5_000_000_000n],
    ['.5s', 500_000_000n],
    ['1.0s', 1_000_000_000n],
    ['1.00s', 1_000_000_000n],
    ['1.004s', 1_004_000_000n],
    ['100.00100s', 100_001_000_000n],
    ['10ns', 10n],
    ['11us', 11_000n],
    ['12µs', 12_000n],
    ['12μs', 12_000n],
    ['13ms', 13_000_000n],
    ['14s', 14_000_000_000n],
    ['15m', 900_000_000_000n],
    ['16h', 57_600_000_000_000n],
    ['3h30m', 12_600_000_000_000n],
    ['10.5s4m', 250_500_000_000n],
    ['-2m3.4s', -123_400_000_000n],
    ['1h2m3s4ms5us6ns', 3_723_004_005_006n],
    ['39h9m14.425s', 140_954_425_000_000n],
    ['52763797000ns', 52_763_797_000n],
    ['0.3333333333333333333h', 1_200_000_000_000n],
    ['9007199254740993ns', 9_007_199_254_740_993n],
    ['9223372036854775807ns', 9_223_372_036_854_775_807n],
    ['9223372036854775.807us', 9_223_372_036_854_775_807n],
    ['9223372036s854ms775us807ns', 9_223_372_036_854_775_807n],
    ['-9223372036854775808ns', -9_223_372_036_854_775_808n],
    ['-9223372036854775.808us', -9_223_372_036_854_775_808n],
    ['-2562047h47m16.854775808s', -9_223_372_036_854_775_808n],
    ['0.100000000000000000000h', 360_000_000_000n],
    ['0.830103483285477580700h', 2_988_372_539_827n],
  ];
  it.each(accepted)('reads %j as %s ns', (text, ns) => {
    expect(parseGoDuration(text)).toBe(ns);
  });

  const rejected: Array<[string, string]> = [
    ['', 'time: invalid duration ""'],
    ['3', 'time: missing unit in duration "3"'],
    ['10', 'time: missing unit in duration "10"'],
    ['-', 'time: invalid duration "-"'],
    ['s', 'time: invalid duration "s"'],
    ['.', 'time: invalid duration "."'],
    ['-.', 'time: invalid duration "-."'],
    ['.s', 'time: invalid duration ".s"'],
    ['+.s', 'time: invalid duration "+.s"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['1 s', 'time: unknown unit " s" in duration "1 s"'],
    [' 1s', 'time: invalid duration " 1s"'],
    ['1s ', 'time: unknown unit "s " in duration "1s "'],
    ['1.5', 'time: missing unit in duration "1.5"'],
    ['1h2', 'time: missing unit in duration "1h2"'],
    ['1sec', 'time: unknown unit "sec" in duration "1sec"'],
    ['1µ', 'time: unknown unit "\\xc2\\xb5" in duration "1\\xc2\\xb5"'],
    ['1"', 'time: unknown unit "\\"" in duration "1\\""'],
    ['3000000h', 'time: invalid duration "3000000h"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['9223372036854775.808us', 'time: invalid duration "9223372036854775.808us"'],
    ['9223372036854ms775us808ns', 'time: invalid duration "9223372036854ms775us808ns"'],
    ['-9223372036854775809ns', 'time: invalid duration "-9223372036854775809ns"'],
    ['99999999999999999999s', 'time: invalid duration "99999999999999999999s"'],
  ];
  it.each(rejected)("rejects %j with Go's message", (text, message) => {
    expect(errorOf(text)).toBe(message);
  });
});

describe('goTimeQuote', () => {
  it('escapes quotes and backslashes and writes non-ASCII and control characters as UTF-8 bytes', () => {
    expect(goTimeQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goTimeQuote('\n\t')).toBe('"\\x0a\\x09"');
    expect(goTimeQuote('é€')).toBe('"\\xc3\\xa9\\xe2\\x82\\xac"');
    expect(goTimeQuote('\x7f')).toBe('"\x7f"');
  });
});

describe('formatGoDuration', () => {
  const table: Array<[bigint, string]> = [
    [0n, '0s'],
    [1n, '1ns'],
    [1_100n, '1.1µs'],
    [2_200_000n, '2.2ms'],
    [1_500_000n, '1.5ms'],
    [3_300_000_000n, '3.3s'],
    [-1_000n, '-1µs'],
    [-60_000_000_000n, '-1m0s'],
    [4n * 60_000_000_000n + 5_000_000_000n, '4m5s'],
    [4n * 60_000_000_000n + 5_001_000_000n, '4m5.001s'],
    [5n * 3_600_000_000_000n + 6n * 60_000_000_000n + 7_001_000_000n, '5h6m7.001s'],
    [8n * 60_000_000_000n + 1n, '8m0.000000001s'],
    [3_600_000_000_000n, '1h0m0s'],
    [9_223_372_036_854_775_807n, '2562047h47m16.854775807s'],
    [-9_223_372_036_854_775_808n, '-2562047h47m16.854775808s'],
  ];
  it.each(table)('formats %s ns as %s', (ns, text) => {
    expect(formatGoDuration(ns)).toBe(text);
  });

  it('refuses values outside the int64 range', () => {
    expect(() => formatGoDuration(1n << 63n)).toThrow(RangeError);
  });

  it('prints text that parses back to the same duration', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (ns) => {
        expect(parseGoDuration(formatGoDuration(ns))).toBe(ns);
      }),
      { numRuns },
    );
  });
});
