import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Sprint, Sprintf, Sprintln } from '../../../lib/template/gofmt.js';
import { T_INT64, T_SLICE_STRING, T_UINT8, goInt, intOf, tagType } from '../../../lib/template/values.js';

const RUNS = Number(process.env['FC_NUM_RUNS'] ?? 200);

describe('Sprint and Sprintln', () => {
  it('puts spaces only between operands that are not strings', () => {
    expect(Sprint(intOf(1), intOf(2), 'a', 'b', intOf(3))).toBe('1 2ab3');
    expect(Sprint('a', intOf(1), intOf(2), 'b')).toBe('a1 2b');
    expect(Sprint(null, intOf(1))).toBe('<nil> 1');
  });

  it('separates every operand and ends with a newline in Sprintln', () => {
    expect(Sprintln(intOf(1), 'a', 'b')).toBe('1 a b\n');
    expect(Sprintln()).toBe('\n');
  });

  it('prints floats in %v form: shortest digits, exponent from 1e21 and below 1e-4', () => {
    expect(Sprint(3)).toBe('3');
    expect(Sprint(1.5)).toBe('1.5');
    expect(Sprint(1e6)).toBe('1e+06');
    expect(Sprint(123456789.0)).toBe('1.23456789e+08');
    expect(Sprint(0.0001)).toBe('0.0001');
    expect(Sprint(0.00001)).toBe('1e-05');
    expect(Sprint(-0)).toBe('-0');
  });

  it('prints slices and maps in Go form with sorted keys', () => {
    expect(Sprint(['a', 1, true, null, { k: 'v' }])).toBe('[a 1 true <nil> map[k:v]]');
    expect(Sprint({ b: [1, 2], a: 'x', é: 1, z: 2 })).toBe('map[a:x b:[1 2] z:2 é:1]');
  });
});

describe('Sprintf', () => {
  it.each([
    ['%v|%+v|%#v|%T', [intOf(1), intOf(1), intOf(1), intOf(1)], '1|1|1|int'],
    ['%#v %#v %#v', [['a', null], { k: 1 }, 'q'], '[]interface {}{"a", interface {}(nil)} map[string]interface {}{"k":1} "q"'],
    ['%#v %T', [tagType(['a'], T_SLICE_STRING), tagType(['a'], T_SLICE_STRING)], '[]string{"a"} []string'],
    ['%d|%5d|%-5d|%05d|%+d|% d', [intOf(42), intOf(42), intOf(42), intOf(42), intOf(42), intOf(42)], '42|   42|42   |00042|+42| 42'],
    [
      '%x|%X|%o|%O|%b|%#x|%#o|%#b',
      [intOf(255), intOf(255), intOf(8), intOf(8), intOf(5), intOf(255), intOf(8), intOf(5)],
      'ff|FF|10|0o10|101|0xff|010|0b101',
    ],
    ['%.3d|%8.3d|%.0d|', [intOf(7), intOf(-7), intOf(0)], '007|    -007||'],
    ['%c|%q|%U|%#U', [intOf(0x1f600), intOf(65), intOf(0x41), intOf(0xe9)], "😀|'A'|U+0041|U+00E9 'é'"],
    ['%#v %d', [goInt(T_UINT8, 97), goInt(T_INT64, -5)], '0x61 -5'],
    ['%e|%E|%f|%g|%G', [1234.5678, 1234.5678, 1234.5678, 1234.5678, 1e-7], '1.234568e+03|1.234568E+03|1234.567800|1234.5678|1E-07'],
    ['%.2f|%8.2f|%-8.2f|%08.2f|%+.1e', [3.14159, 3.14159, 3.14159, -3.14159, 12345.678], '3.14|    3.14|3.14    |-0003.14|+1.2e+04'],
    ['%.0f %.0f %.0f %.2f %.2f', [0.5, 1.5, 2.5, 1.005, 2.675], '0 2 2 1.00 2.67'],
    ['%#g|%#.3g|%#.0f|%x|%.3x|%b', [1.0, 1.0, 1.0, 1.5, 1.0, 1.0], '1.00000|1.00|1.|0x1.8p+00|0x1.000p+00|4503599627370496p-52'],
    ['%v %v %v', [NaN, Infinity, -Infinity], 'NaN +Inf -Inf'],
    ['%5.1f|%-6v|%06v', [Infinity, NaN, -Infinity], ' +Inf|NaN   |  -Inf'],
    [
      '%s|%10s|%-10s|%.2s|%q|%+q|%#q',
      ['héllo', 'héllo', 'héllo', 'héllo', 'héllo', 'héllo', 'héllo'],
      'héllo|     héllo|héllo     |hé|"héllo"|"h\\u00e9llo"|`héllo`',
    ],
    ['%x|% x|%#x|%# X', ['hé', 'hé', 'hé', 'hé'], '68c3a9|68 c3 a9|0x68c3a9|0X68 0XC3 0XA9'],
    ['%q %#q', ['a\nb', 'a`b'], '"a\\nb" "a`b"'],
    ['%t|%5t|%v', [true, false, true], 'true|false|true'],
    ['%05s|%-05s|', ['ab', 'ab'], '000ab|ab   |'],
  ] as [string, unknown[], string][])('formats %j', (format, args, want) => {
    expect(Sprintf(format, ...args)).toBe(want);
  });

  it('marks wrong verbs, missing and extra operands the way Go does', () => {
    expect(Sprintf('%d %s %t', 'x', 1.5, intOf(1))).toBe('%!d(string=x) %!s(float64=1.5) %!t(int=1)');
    expect(Sprintf('%z', intOf(5))).toBe('%!z(int=5)');
    expect(Sprintf('%d %d', intOf(1))).toBe('1 %!d(MISSING)');
    expect(Sprintf('%d', intOf(1), 'x', null)).toBe('1%!(EXTRA string=x, <nil>)');
    expect(Sprintf('%s %d', null, null)).toBe('%!s(<nil>) %!d(<nil>)');
    expect(Sprintf('%d', ['a', intOf(1)])).toBe('[%!d(string=a) 1]');
    expect(Sprintf('%')).toBe('%!(NOVERB)');
    expect(Sprintf('%5%|%%')).toBe('%|%');
  });

  it('takes widths, precisions and operands from argument indexes and stars', () => {
    expect(Sprintf('%[2]d %[1]d', intOf(1), intOf(2))).toBe('2 1');
    expect(Sprintf('%[3]d', intOf(1), intOf(2))).toBe('%!d(BADINDEX)');
    expect(Sprintf('%*d|%-*d', intOf(5), intOf(1), intOf(5), intOf(1))).toBe('    1|1    ');
    expect(Sprintf('%.*f', intOf(2), 3.14159)).toBe('3.14');
    expect(Sprintf('%*d', 'x', intOf(1))).toBe('%!(BADWIDTH)1');
  });

  it('prints any int64 with %d exactly as its decimal text', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (n) => {
        expect(Sprintf('%d', goInt(T_INT64, n))).toBe(n.toString());
      }),
      { numRuns: RUNS },
    );
  });

  it('prints every finite float with %v in a form that reads back to the same float', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(Number(Sprintf('%v', x))).toBe(x);
      }),
      { numRuns: RUNS },
    );
  });
});
