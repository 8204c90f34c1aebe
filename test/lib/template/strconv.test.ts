import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canBackquote, quoteGoString as quoteString, quoteRune } from '../../../lib/go/gostring.js';
import { formatFloat, parseGoFloat, parseGoInt } from '../../../lib/go/strconv.js';

const RUNS = Number(process.env['FC_NUM_RUNS'] ?? 200);

describe('formatFloat', () => {
  it.each([
    [1234.5678, 'e', 2, '1.23e+03'],
    [1234.5678, 'f', 0, '1235'],
    [0.5, 'f', 0, '0'],
    [2.5, 'f', 0, '2'],
    [0.125, 'f', 2, '0.12'],
    [1e21, 'f', 1, '1000000000000000000000.0'],
    [1e-7, 'g', -1, '1e-07'],
    [123456, 'g', -1, '123456'],
    [1234567, 'g', -1, '1.234567e+06'],
    [100, 'g', 2, '1e+02'],
    [0, 'e', -1, '0e+00'],
    [-0, 'f', -1, '-0'],
    [1.5, 'x', -1, '0x1.8p+00'],
    [1, 'b', -1, '4503599627370496p-52'],
    [5e-324, 'g', -1, '5e-324'],
  ] as [number, string, number, string][])('formats %d with %s and precision %d as %s', (x, fmt, prec, want) => {
    expect(formatFloat(x, fmt, prec)).toBe(want);
  });

  it('rounds exact halves to even and everything else to nearest', () => {
    fc.assert(
      fc.property(fc.integer({ min: -100000, max: 100000 }), (n) => {
        const x = n / 8; // exact in binary, so ties are real ties
        const floor = Math.floor(x);
        const diff = x - floor;
        const want = diff > 0.5 ? floor + 1 : diff < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
        expect(Number(formatFloat(x, 'f', 0)) + 0).toBe(want + 0);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('parseGoInt and parseGoFloat', () => {
  it('reads Go integer literals with base prefixes and underscores', () => {
    expect(parseGoInt('0x1F', 0)).toEqual({ value: 31n });
    expect(parseGoInt('017', 0)).toEqual({ value: 15n });
    expect(parseGoInt('1_000', 0)).toEqual({ value: 1000n });
    expect(parseGoInt('-0b101', 0)).toEqual({ value: -5n });
    expect(parseGoInt('1__0', 0)).toEqual({ error: 'syntax', value: 0n });
    expect(parseGoInt('9223372036854775808', 10)).toEqual({ error: 'range', value: (1n << 63n) - 1n });
    expect(parseGoInt('1_0', 10)).toEqual({ error: 'syntax', value: 0n });
  });

  it('reads Go float syntax, including hex floats and Inf', () => {
    expect(parseGoFloat('1e3')).toEqual({ value: 1000 });
    expect(parseGoFloat('.5')).toEqual({ value: 0.5 });
    expect(parseGoFloat('0x1p-2')).toEqual({ value: 0.25 });
    expect(parseGoFloat('+Inf')).toEqual({ value: Infinity });
    expect(parseGoFloat('1_000.5')).toEqual({ value: 1000.5 });
    expect(parseGoFloat(' 1')).toEqual({ error: 'syntax', value: 0 });
    expect(parseGoFloat('1e400')).toEqual({ error: 'range', value: Infinity });
  });
});

describe('quoting', () => {
  it('quotes like strconv.Quote and QuoteToASCII', () => {
    expect(quoteString('a"b\\c\n\x01é\u200b')).toBe('"a\\"b\\\\c\\n\\x01é\\u200b"');
    expect(quoteString('é😀', true)).toBe('"\\u00e9\\U0001f600"');
    expect(quoteRune(0x27)).toBe("'\\''");
    expect(quoteRune(0x110000)).toBe("'�'");
  });

  it('knows which strings can be backquoted', () => {
    expect(canBackquote('a b\tc')).toBe(true);
    expect(canBackquote('a`b')).toBe(false);
    expect(canBackquote('a\nb')).toBe(false);
  });
});
