import { describe, expect, it } from 'vitest';
import { formatFloat } from '../../../lib/go/strconv.js';
import { goSprintf, type FmtValue } from '../../../lib/config/sprintf.js';

const int = (value: number): FmtValue => ({ kind: 'int', value });
const float = (value: number): FmtValue => ({ kind: 'float', value });
const str = (value: string): FmtValue => ({ kind: 'string', value });
const bool = (value: boolean): FmtValue => ({ kind: 'bool', value });
const nil: FmtValue = { kind: 'nil' };

describe('goSprintf', () => {
  it('formats integers with width, flags and precision', () => {
    expect(goSprintf('%d|%5d|%-5d|%05d', [int(42), int(42), int(42), int(-42)])).toBe('42|   42|42   |-0042');
    expect(goSprintf('%+d|% d|%8.3d|%.0d|', [int(5), int(5), int(7), int(0)])).toBe('+5| 5|     007||');
    expect(goSprintf('%x %X %o %O %b %x', [int(255), int(255), int(255), int(8), int(5), int(-255)])).toBe('ff FF 377 0o10 101 -ff');
    expect(goSprintf('%#x %#o %#b %#08x', [int(255), int(255), int(5), int(255)])).toBe('0xff 0377 0b101 0x000000ff');
  });

  it('formats characters and code points', () => {
    expect(goSprintf('%c%c %U %#U %q %q', [int(72), int(0x1f600), int(0x1f600), int(65), int(65), int(39)])).toBe(
      "H😀 U+1F600 U+0041 'A' 'A' '\\''",
    );
  });

  it('formats floats like Go, rounding half to even on exact ties', () => {
    expect(goSprintf('%v %v %v %v', [float(1.5), float(1e6), float(123456), float(1e-5)])).toBe('1.5 1e+06 123456 1e-05');
    expect(goSprintf('%f %.2f %08.3f %.0f %.0f', [float(3.14159), float(0.125), float(3.14159), float(2.5), float(3.5)])).toBe(
      '3.141590 0.12 0003.142 2 4',
    );
    expect(goSprintf('%e %E %.2e', [float(123456.789), float(123456.789), float(0)])).toBe('1.234568e+05 1.234568E+05 0.00e+00');
    expect(goSprintf('%g %.3g %G %g', [float(0.000012345), float(1234.5678), float(1e-10), float(100)])).toBe(
      '1.2345e-05 1.23e+03 1E-10 100',
    );
    expect(goSprintf('%+.1f|% .1f|%6.2f|%-7.1f|', [float(1), float(1), float(-1.005), float(2.25)])).toBe('+1.0| 1.0| -1.00|2.2    |');
  });

  it('writes infinities and NaN the way Go does', () => {
    expect(
      goSprintf('%v %v %f %+v %5.1f|%05.1f', [
        float(Infinity),
        float(-Infinity),
        float(NaN),
        float(NaN),
        float(-Infinity),
        float(Infinity),
      ]),
    ).toBe('+Inf -Inf NaN +NaN  -Inf| +Inf');
  });

  it('formats strings with width, precision and quoting', () => {
    expect(goSprintf('%s|%10s|%-10s|%.2s|%v', [str('hi'), str('hi'), str('hi'), str('héllo'), str('x')])).toBe(
      'hi|        hi|hi        |hé|x',
    );
    expect(goSprintf('%q %#q %#q %+q %#v', [str('a"b\n'), str('ab'), str('a`b'), str('é'), str('x')])).toBe(
      '"a\\"b\\n" `ab` "a`b" "\\u00e9" "x"',
    );
    expect(goSprintf('%x|% x|%#x|% #X', [str('hi'), str('hi'), str('hi'), str('hi')])).toBe('6869|68 69|0x6869|0X68 0X69');
  });

  it('formats bools and nil', () => {
    expect(goSprintf('%t %v %v', [bool(true), bool(false), nil])).toBe('true false <nil>');
  });

  it('formats arrays and objects as Go slices and maps, keys sorted', () => {
    const slice: FmtValue = { kind: 'slice', items: [int(1), str('a'), nil, float(2.5)] };
    const map: FmtValue = {
      kind: 'map',
      entries: [
        ['b', str('x')],
        ['a', int(1)],
      ],
    };
    expect(goSprintf('%v %v', [slice, map])).toBe('[1 a <nil> 2.5] map[a:1 b:x]');
    expect(goSprintf('%#v', [slice])).toBe('[]interface {}{1, "a", interface {}(nil), 2.5}');
    expect(goSprintf('%#v', [map])).toBe('map[string]interface {}{"a":1, "b":"x"}');
    expect(goSprintf('%d', [map])).toBe('map[%!d(string=a):1 %!d(string=b):%!d(string=x)]');
    expect(goSprintf('%q', [{ kind: 'slice', items: [str('a'), str('b')] }])).toBe('["a" "b"]');
  });

  it('names argument types with %T', () => {
    expect(
      goSprintf('%T %T %T %T %T %T %T', [
        int(1),
        float(1),
        str(''),
        bool(true),
        nil,
        { kind: 'slice', items: [] },
        { kind: 'map', entries: [] },
      ]),
    ).toBe('int float64 string bool <nil> []interface {} map[string]interface {}');
  });

  it('takes width and precision from arguments with *', () => {
    expect(goSprintf('%*d|%-*d|%.*f', [int(5), int(42), int(5), int(42), int(2), float(3.14159)])).toBe('   42|42   |3.14');
    expect(goSprintf('%*d', [str('x'), int(1)])).toBe('%!(BADWIDTH)1');
  });

  it('writes problems inline the way Go does', () => {
    expect(goSprintf('%d', [str('x')])).toBe('%!d(string=x)');
    expect(goSprintf('%s', [int(1)])).toBe('%!s(int=1)');
    expect(goSprintf('%d', [float(2)])).toBe('%!d(float64=2)');
    expect(goSprintf('%d', [bool(true)])).toBe('%!d(bool=true)');
    expect(goSprintf('%d', [nil])).toBe('%!d(<nil>)');
    expect(goSprintf('%z', [int(1)])).toBe('%!z(int=1)');
    expect(goSprintf('%d %s', [int(1)])).toBe('1 %!s(MISSING)');
    expect(goSprintf('%d', [int(1), int(2), str('x'), nil])).toBe('1%!(EXTRA int=2, string=x, <nil>)');
    expect(goSprintf('100%', [])).toBe('100%!(NOVERB)');
    expect(goSprintf('100%%', [])).toBe('100%');
    expect(goSprintf('no verbs', [])).toBe('no verbs');
  });
});

describe('formatFloat', () => {
  const cases: [number, 'e' | 'E' | 'f' | 'g' | 'G', number, string][] = [
    [1e6, 'g', -1, '1e+06'],
    [123456, 'g', -1, '123456'],
    [0.0001, 'g', -1, '0.0001'],
    [0.00001, 'g', -1, '1e-05'],
    [1e21, 'f', -1, '1000000000000000000000'],
    [1e-7, 'f', -1, '0.0000001'],
    [0, 'e', -1, '0e+00'],
    [-0, 'g', -1, '-0'],
    [2.5, 'f', 0, '2'],
    [0.125, 'f', 2, '0.12'],
    [1.005, 'f', 2, '1.00'],
    [0.9, 'f', 0, '1'],
    [0.009, 'f', 2, '0.01'],
    [0.0009, 'f', 2, '0.00'],
    [99.99, 'f', 1, '100.0'],
    [123456789, 'g', 4, '1.235e+08'],
    [100, 'g', 3, '100'],
    [0.000123, 'G', 2, '0.00012'],
    [5e-324, 'g', -1, '5e-324'],
    [1.7976931348623157e308, 'e', 3, '1.798e+308'],
    [NaN, 'f', 2, 'NaN'],
    [Infinity, 'g', -1, '+Inf'],
  ];
  it.each(cases)('formats %d with %s and precision %d as %s', (value, format, precision, expected) => {
    expect(formatFloat(value, format, precision)).toBe(expected);
  });
});
