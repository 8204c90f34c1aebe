import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { decodeLogfmt, encodeLogfmt, LogfmtError, type LogfmtPair } from '../../lib/logfmt.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('decodeLogfmt', () => {
  const decoded: Array<[string, LogfmtPair[]]> = [
    ['', []],
    ['   \t ', []],
    [
      'a=1 b="x y" c',
      [
        ['a', '1'],
        ['b', 'x y'],
        ['c', null],
      ],
    ],
    [
      'a= b=""',
      [
        ['a', null],
        ['b', null],
      ],
    ],
    [
      'k= x',
      [
        ['k', null],
        ['x', null],
      ],
    ],
    [
      'a="x"b=c',
      [
        ['a', 'x'],
        ['b', 'c'],
      ],
    ],
    [
      'not logfmt',
      [
        ['not', null],
        ['logfmt', null],
      ],
    ],
    [
      'a=1\x01b=2\x7fc',
      [
        ['a', '1'],
        ['b', '2\x7fc'],
      ],
    ],
    ['k=a/b?c&d', [['k', 'a/b?c&d']]],
    ["k='x'", [['k', "'x'"]]],
    [
      'k=é€ 😀=v',
      [
        ['k', 'é€'],
        ['😀', 'v'],
      ],
    ],
    [
      'dup=1 dup=2',
      [
        ['dup', '1'],
        ['dup', '2'],
      ],
    ],
    ['k="\\"\\\\\\/\\\'\\b\\f\\n\\r\\t"', [['k', '"\\/\'\b\f\n\r\t']]],
    ['k="\\u00e9\\u20AC"', [['k', 'é€']]],
    ['k="\\ud83d\\ude00"', [['k', '😀']]],
    [
      'k="\\ud800x" l="\\ude00" m="\\ud800\\u0041"',
      [
        ['k', '\uFFFDx'],
        ['l', '\uFFFD'],
        ['m', '\uFFFDA'],
      ],
    ],
    ['k="a\tb"', [['k', 'a\tb']]],
    [
      'time=2012-11-01T22:08:41+00:00 app=loki\tlevel=WARN',
      [
        ['time', '2012-11-01T22:08:41+00:00'],
        ['app', 'loki'],
        ['level', 'WARN'],
      ],
    ],
    [
      'a=1\nb=2',
      [
        ['a', '1'],
        ['b', '2'],
      ],
    ],
    [
      'a=1\r\nb=2\r\n',
      [
        ['a', '1'],
        ['b', '2'],
      ],
    ],
    ['a="x\r"\r', [['a', 'x\r']]],
    [
      '\n\ttime=t\n\tapp=loki\n\tnested="child=value"\n',
      [
        ['time', 't'],
        ['app', 'loki'],
        ['nested', 'child=value'],
      ],
    ],
  ];
  it.each(decoded)('decodes %j', (input, pairs) => {
    const result = decodeLogfmt(input);
    expect(result.error).toBeUndefined();
    expect(result.pairs).toEqual(pairs);
  });

  const failing: Array<[string, LogfmtPair[], string]> = [
    ['url=http://x?y=z', [], "logfmt syntax error at pos 15 on line 1: unexpected '='"],
    ['=a', [], "logfmt syntax error at pos 1 on line 1: unexpected '='"],
    ['a=1 "b"', [['a', '1']], "logfmt syntax error at pos 5 on line 1: unexpected '\"'"],
    ['{"invalid":"logfmt"}', [], "logfmt syntax error at pos 2 on line 1: unexpected '\"'"],
    ['k=a"b', [], "logfmt syntax error at pos 4 on line 1: unexpected '\"'"],
    ['a=1 k="abc', [['a', '1']], 'logfmt syntax error at pos 11 on line 1: unterminated quoted value'],
    ['k="\\q"', [], 'logfmt syntax error at pos 7 on line 1: invalid quoted value'],
    ['k="\\u12"', [], 'logfmt syntax error at pos 9 on line 1: invalid quoted value'],
    ['k="a\t\\n"', [], 'logfmt syntax error at pos 9 on line 1: invalid quoted value'],
    ['é=1 \uFFFD=2', [['é', '1']], 'logfmt syntax error at pos 9 on line 1: invalid key'],
    [
      'a=1\nb=2 x==y\nc=3',
      [
        ['a', '1'],
        ['b', '2'],
      ],
      "logfmt syntax error at pos 7 on line 2: unexpected '='",
    ],
    [
      '\n\t\ttime=2012-11-01T22:08:41+00:00 app=loki\tlevel=WARN duration=125 message="this is a log line" extra="user=foo""\n\t',
      [
        ['time', '2012-11-01T22:08:41+00:00'],
        ['app', 'loki'],
        ['level', 'WARN'],
        ['duration', '125'],
        ['message', 'this is a log line'],
        ['extra', 'user=foo'],
      ],
      "logfmt syntax error at pos 112 on line 2: unexpected '\"'",
    ],
  ];
  it.each(failing)('stops %j at the first syntax error, keeping earlier pairs', (input, pairs, message) => {
    const result = decodeLogfmt(input);
    expect(result.pairs).toEqual(pairs);
    expect(result.error).toBeInstanceOf(LogfmtError);
    expect(result.error?.message).toBe(message);
  });

  it('reports the syntax error parts separately', () => {
    expect(decodeLogfmt('a=1\nx==y').error?.syntax).toEqual({ reason: "unexpected '='", line: 2, pos: 3 });
  });

  it('reads a record just under 64 KiB', () => {
    const result = decodeLogfmt('k=' + 'x'.repeat(65533));
    expect(result.error).toBeUndefined();
    expect(result.pairs[0]![1]).toHaveLength(65533);
  });

  it('fails on a record of 64 KiB or more, keeping only earlier records', () => {
    expect(decodeLogfmt('k=' + 'x'.repeat(65534))).toEqual({
      pairs: [],
      error: new LogfmtError('bufio.Scanner: token too long'),
    });
    const multibyte = decodeLogfmt('a=1\nk=' + 'é'.repeat(32767));
    expect(multibyte.pairs).toEqual([['a', '1']]);
    expect(multibyte.error?.message).toBe('bufio.Scanner: token too long');
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '=', '"', '\\', ' ', '\n', 'u', '0', 'é', '\uD800', '\t') }), (s) => {
        const result = decodeLogfmt(s);
        expect(Array.isArray(result.pairs)).toBe(true);
      }),
      { numRuns },
    );
  });
});

describe('encodeLogfmt', () => {
  it('writes pairs separated by spaces and quotes values only when needed', () => {
    expect(
      encodeLogfmt([
        ['msg', 'hello world'],
        ['n', '1'],
        ['path', 'a/b?c&d'],
      ]),
    ).toBe('msg="hello world" n=1 path=a/b?c&d');
  });

  it('writes null as null and quotes the string null', () => {
    expect(
      encodeLogfmt([
        ['a', null],
        ['b', 'null'],
        ['c', ''],
      ]),
    ).toBe('a=null b="null" c=');
  });

  it('escapes like go-logfmt', () => {
    expect(encodeLogfmt([['q', 'a"b\\c\n\r\t\x01é\x7f=']])).toBe('q="a\\"b\\\\c\\n\\r\\t\\u0001é\x7f="');
    expect(
      encodeLogfmt([
        ['r', '\uFFFD'],
        ['s', 'x\uD800'],
      ]),
    ).toBe('r="\\ufffd" s="x\\ufffd"');
  });

  it('drops characters keys cannot hold and rejects keys left empty', () => {
    expect(encodeLogfmt([['a b="c\uFFFD', 'v']])).toBe('abc=v');
    expect(() => encodeLogfmt([[' =', 'v']])).toThrow(new LogfmtError('invalid key'));
  });

  it('round-trips through the decoder', () => {
    const key = fc.string({ unit: 'grapheme', minLength: 1 }).filter((k) => !/[\x00-\x20="\uFFFD]/.test(k));
    const value = fc.option(fc.string({ unit: 'grapheme' }), { nil: null }).filter((v) => v !== 'null' && !v?.includes('\uFFFD'));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value), { maxLength: 6 }), (pairs) => {
        const nonNull = pairs.filter(([, v]) => v !== null) as Array<[string, string]>;
        const result = decodeLogfmt(encodeLogfmt(nonNull));
        expect(result.error).toBeUndefined();
        expect(result.pairs).toEqual(nonNull.map(([k, v]) => [k, v === '' ? null : v]));
      }),
      { numRuns },
    );
  });
});
