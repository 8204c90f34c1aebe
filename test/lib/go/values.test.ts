import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { formatGoFloat, isLegacyLabelName, isValidLabelName, isValidUtf8String, stringify, toFloat } from '../../../lib/go/values.js';
import { parseGoFloatOrUndefined as parseGoFloat } from '../../../lib/go/strconv.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('stringify', () => {
  it('returns strings unchanged', () => {
    expect(stringify('')).toBe('');
    expect(stringify('a b')).toBe('a b');
  });

  it('writes booleans as true and false', () => {
    expect(stringify(true)).toBe('true');
    expect(stringify(false)).toBe('false');
  });

  it('writes bigints in decimal', () => {
    expect(stringify(12345678901234567890n)).toBe('12345678901234567890');
    expect(stringify(-5n)).toBe('-5');
  });

  it('writes numbers like Go formats float64 values', () => {
    expect(stringify(10)).toBe('10');
    expect(stringify(1.5)).toBe('1.5');
    expect(stringify(1e21)).toBe('1000000000000000000000');
  });

  it('treats null, undefined, arrays and objects as not convertible', () => {
    for (const v of [null, undefined, [], ['a'], {}, { a: 1 }, () => 1, Symbol('x')]) {
      expect(stringify(v)).toBeUndefined();
    }
  });
});

describe('formatGoFloat', () => {
  const table: Array<[number, string]> = [
    [0, '0'],
    [-0, '-0'],
    [10, '10'],
    [1.5, '1.5'],
    [-2.25, '-2.25'],
    [0.1, '0.1'],
    [1e21, '1000000000000000000000'],
    [1e-7, '0.0000001'],
    [1e-6, '0.000001'],
    [1.23456e-8, '0.0000000123456'],
    // biome-ignore lint/correctness/noPrecisionLoss: the rounding to a double is what this case checks
    [123456789012345678, '123456789012345680'],
    // biome-ignore lint/correctness/noPrecisionLoss: the rounding to a double is what this case checks
    [12345678901234567890, '12345678901234567000'],
    [5e-324, '0.' + '0'.repeat(323) + '5'],
    [1.7976931348623157e308, '17976931348623157' + '0'.repeat(292)],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ];
  it.each(table)('formats %s as %s', (n, text) => {
    expect(formatGoFloat(n)).toBe(text);
  });

  it('never writes an exponent and reads back as the same number', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = stringify(x)!;
        expect(text).not.toMatch(/e/i);
        expect(Object.is(Number(text), x)).toBe(true);
      }),
      { numRuns },
    );
  });
});

describe('parseGoFloat', () => {
  const accepted: Array<[string, number]> = [
    ['1', 1],
    ['1e3', 1000],
    ['1E+2', 100],
    ['.5', 0.5],
    ['5.', 5],
    ['+3', 3],
    ['-0', -0],
    ['0x1p-2', 0.25],
    ['0X1.8P1', 3],
    ['0x.8p1', 1],
    ['0x_1p0', 1],
    ['Inf', Infinity],
    ['+inf', Infinity],
    ['-Infinity', -Infinity],
    ['iNfInItY', Infinity],
    ['1_000', 1000],
    ['1_000.000_1', 1000.0001],
    ['0_1', 1],
    ['1e1_0', 1e10],
    ['1e-400', 0],
    ['0x1p-1074', 5e-324],
    ['0x1p-1075', 0],
    ['0x1.8p-1074', 1e-323],
    ['0x1.fffffffffffffp1023', 1.7976931348623157e308],
    ['9007199254740993', 9007199254740992],
    ['0x20000000000001p0', 9007199254740992],
    ['0x20000000000003p0', 9007199254740996],
  ];
  it.each(accepted)('reads %j as %s', (text, value) => {
    expect(Object.is(parseGoFloat(text), value)).toBe(true);
  });

  it('reads NaN without a sign in any case', () => {
    expect(parseGoFloat('NaN')).toBeNaN();
    expect(parseGoFloat('nan')).toBeNaN();
  });

  const rejected = [
    '',
    ' 1',
    '1 ',
    '+',
    '-',
    '.',
    'e5',
    '1e',
    '1e+',
    '1.5.3',
    '0x',
    '0x1',
    '0xp1',
    '0x1.8',
    '1__0',
    '_1',
    '1_',
    '1_.5',
    '1._5',
    '1_e5',
    '1e_5',
    '-nan',
    '+NaN',
    'infin',
    'infinityy',
    'in',
    '1,5',
    '0b101',
    '0o7',
    '١',
    // out of range: Go returns ±Inf together with an error
    '1e400',
    '-1e400',
    '0x1p1024',
    '0x1.fffffffffffff8p1023',
  ];
  it.each(rejected)('rejects %j', (text) => {
    expect(parseGoFloat(text)).toBeUndefined();
  });

  it('reads back every finite number printed by JS or by formatGoFloat', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(parseGoFloat(String(x)) === x).toBe(true);
        expect(Object.is(parseGoFloat(formatGoFloat(x)), x)).toBe(true);
      }),
      { numRuns },
    );
  });
});

describe('toFloat', () => {
  it('keeps numbers and converts booleans to 1 and 0', () => {
    expect(toFloat(2.5)).toBe(2.5);
    expect(toFloat(true)).toBe(1);
    expect(toFloat(false)).toBe(0);
    expect(toFloat(7n)).toBe(7);
  });

  it('reads strings as Go floats first', () => {
    expect(toFloat('1e3')).toBe(1000);
    expect(toFloat('0x1p-2')).toBe(0.25);
    expect(toFloat('1_000')).toBe(1000);
  });

  it('falls back to a Go duration in seconds', () => {
    expect(toFloat('1.5ms')).toBe(0.0015);
    expect(toFloat('1h2m')).toBe(3720);
    expect(toFloat('-1m30s')).toBe(-90);
    expect(toFloat('2µs')).toBe(0.000002);
  });

  it('gives undefined for anything else', () => {
    for (const v of [' 1', '10 ', 'abc', '1d', '1e400', null, undefined, [], {}]) expect(toFloat(v)).toBeUndefined();
  });
});

describe('label names', () => {
  it('accepts any non-empty well-formed name under the UTF-8 scheme', () => {
    for (const name of ['a', 'k8s.io/app', '1abc', 'a-b', 'Package(NTLMonly)', 'ünï', '\u{1F600}', '\uFFFD']) {
      expect(isValidLabelName(name)).toBe(true);
    }
  });

  it('rejects the empty name and lone surrogates under the UTF-8 scheme', () => {
    for (const name of ['', '\uD800', 'a\uDC00', '\uDC00\uD800']) expect(isValidLabelName(name)).toBe(false);
  });

  it('accepts only [a-zA-Z_][a-zA-Z0-9_]* under the legacy scheme', () => {
    for (const name of ['a', '_', '__name__', 'A1_b']) expect(isLegacyLabelName(name)).toBe(true);
    for (const name of ['', '1a', 'a-b', 'a.b', 'ü', 'a\n']) expect(isLegacyLabelName(name)).toBe(false);
  });
});

describe('isValidUtf8String', () => {
  it('accepts well-formed text including U+FFFD', () => {
    expect(isValidUtf8String('')).toBe(true);
    expect(isValidUtf8String('a\uFFFDb')).toBe(true);
    expect(isValidUtf8String('\uD83D\uDE00')).toBe(true);
  });

  it('rejects lone surrogates', () => {
    expect(isValidUtf8String('\uD83D')).toBe(false);
    expect(isValidUtf8String('x\uDE00')).toBe(false);
  });
});
