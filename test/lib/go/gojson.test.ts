import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { goJsonMarshal, goJsonNumber, goJsonQuote, GoJsonError, marshalForJsonStage, parseGoJson } from '../../../lib/go/gojson.js';
import { parseJsonObject } from '../../../lib/go/jsoniter.js';
import { compareUtf8 } from '../../../lib/go/gostring.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('goJsonQuote', () => {
  it('escapes quotes, backslashes and the short control characters', () => {
    expect(goJsonQuote('a"b\\c\nd\re\tf')).toBe('"a\\"b\\\\c\\nd\\re\\tf"');
  });

  it('writes the other control characters as \\u00XX, including backspace and form feed', () => {
    expect(goJsonQuote('\x00\x01\b\f\x1f')).toBe('"\\u0000\\u0001\\u0008\\u000c\\u001f"');
  });

  it('leaves DEL and non-ASCII text raw', () => {
    expect(goJsonQuote('\x7fé€😀')).toBe('"\x7fé€😀"');
  });

  it('escapes < > & by default and keeps them raw without HTML escaping', () => {
    expect(goJsonQuote('<a>&')).toBe('"\\u003ca\\u003e\\u0026"');
    expect(goJsonQuote('<a>&', false)).toBe('"<a>&"');
  });

  it('always escapes U+2028 and U+2029', () => {
    expect(goJsonQuote('a\u2028b\u2029')).toBe('"a\\u2028b\\u2029"');
    expect(goJsonQuote('\u2028', false)).toBe('"\\u2028"');
  });

  it('replaces lone surrogates with \\ufffd', () => {
    expect(goJsonQuote('a\uD800b\uDC00')).toBe('"a\\ufffdb\\ufffd"');
    expect(goJsonQuote('\uDC00\uD800')).toBe('"\\ufffd\\ufffd"');
    expect(goJsonQuote('\uD800')).toBe('"\\ufffd"');
  });

  it('matches the packed line of the reference', () => {
    const line = '\n{\n\t"time":"2012-11-01T22:08:41+00:00",\n\t"app":"loki"\n}\n';
    expect(goJsonQuote(line)).toBe('"\\n{\\n\\t\\"time\\":\\"2012-11-01T22:08:41+00:00\\",\\n\\t\\"app\\":\\"loki\\"\\n}\\n"');
  });

  it('produces JSON that parses back to the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.boolean(), (s, html) => {
        expect(JSON.parse(goJsonQuote(s, html))).toBe(s);
      }),
      { numRuns },
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0x3000 }).map((c) => String.fromCharCode(c)) }), (s) => {
        expect(JSON.parse(goJsonQuote(s))).toBe(s.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
      }),
      { numRuns },
    );
  });
});

describe('goJsonNumber', () => {
  const table: Array<[number, string]> = [
    [0, '0'],
    [-0, '-0'],
    [1, '1'],
    [125, '125'],
    [12.34, '12.34'],
    [-1.5, '-1.5'],
    [1e-6, '0.000001'],
    [1e20, '100000000000000000000'],
    // biome-ignore lint/correctness/noPrecisionLoss: the rounding to a double is what this case checks
    [123456789012345678, '123456789012345680'],
    [1e21, '1e+21'],
    [1.5e21, '1.5e+21'],
    [1e-7, '1e-7'],
    [1.25e-9, '1.25e-9'],
    [1e-10, '1e-10'],
    [1e100, '1e+100'],
    [-1e-100, '-1e-100'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
  ];
  it.each(table)('writes %s as %s', (n, text) => {
    expect(goJsonNumber(n)).toBe(text);
  });

  it('refuses NaN and infinities with Go messages', () => {
    expect(() => goJsonNumber(NaN)).toThrow(new GoJsonError('json: unsupported value: NaN'));
    expect(() => goJsonNumber(Infinity)).toThrow('json: unsupported value: +Inf');
    expect(() => goJsonNumber(-Infinity)).toThrow('json: unsupported value: -Inf');
  });

  it('writes numbers that parse back to themselves', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(Object.is(JSON.parse(goJsonNumber(x)), x)).toBe(true);
      }),
      { numRuns },
    );
  });
});

describe('goJsonMarshal', () => {
  it('writes compact JSON with keys sorted bytewise', () => {
    expect(goJsonMarshal({ b: 1, a: [true, null, 'x<'], c: { z: false, y: 2n } })).toBe(
      '{"a":[true,null,"x\\u003c"],"b":1,"c":{"y":2,"z":false}}',
    );
  });

  it('sorts keys by UTF-8 bytes, putting astral characters after the rest of the BMP', () => {
    expect(goJsonMarshal({ '\uFF01': 1, '😀': 2, a: 3, B: 4 })).toBe('{"B":4,"a":3,"！":1,"😀":2}');
    expect(compareUtf8('\uFF01', '😀')).toBeLessThan(0);
  });

  it('escapes object keys like values', () => {
    expect(goJsonMarshal({ 'ex"tr2': '"fd"' })).toBe('{"ex\\"tr2":"\\"fd\\""}');
  });

  it('encodes Maps, undefined and empty containers', () => {
    expect(goJsonMarshal(new Map([['k', [1, 2]]]))).toBe('{"k":[1,2]}');
    expect(goJsonMarshal(undefined)).toBe('null');
    expect(goJsonMarshal([])).toBe('[]');
    expect(goJsonMarshal({})).toBe('{}');
  });

  it('refuses values Go cannot encode', () => {
    expect(() => goJsonMarshal([NaN])).toThrow(GoJsonError);
    expect(() => goJsonMarshal({ f: () => 1 })).toThrow('json: unsupported type: function');
  });

  it('gives stage.json the HTML-escaping compact form', () => {
    expect(marshalForJsonStage(['parser', 'type'])).toBe('["parser","type"]');
    expect(marshalForJsonStage({ child: 'value' })).toBe('{"child":"value"}');
    expect(marshalForJsonStage({ h: '<b>&' })).toBe('{"h":"\\u003cb\\u003e\\u0026"}');
  });

  it('produces text that JSON.parse reads back to an equal value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (v) => {
        expect(JSON.parse(goJsonMarshal(v))).toEqual(v);
      }),
      { numRuns },
    );
  });
});

describe('parseGoJson', () => {
  it('turns lone surrogates, escaped or raw, into U+FFFD in strings and keys, as Go decodes them', () => {
    expect(parseGoJson('{"a":"\\ud800z","b":["x\\udc00"],"c":{"\\ud83d":"\ud800"}}')).toEqual({
      a: '\ufffdz',
      b: ['x\ufffd'],
      c: { '\ufffd': '\ufffd' },
    });
    expect(parseGoJson('"\\ud83d\\ude00"')).toBe('😀');
    expect(parseJsonObject('{"msg":"bad \\udfff end"}')).toEqual({ msg: 'bad \ufffd end' });
  });

  it('keeps the order of keys, a later key made equal to an earlier one winning', () => {
    expect(JSON.stringify(parseGoJson('{"\\ud800":1,"k":2,"\\udbff":3}'))).toBe('{"\ufffd":3,"k":2}');
  });

  it('gives what JSON.parse gives for any well-formed text', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(parseGoJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns },
    );
  });

  it('leaves no lone surrogate in what it gives, whatever the strings held', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' })), (object) => {
        const text = JSON.stringify(object);
        const wellFormed = (s: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
        const parsed = parseGoJson(text) as Record<string, string>;
        for (const [key, value] of Object.entries(parsed)) expect(wellFormed(key) && wellFormed(value)).toBe(true);
      }),
      { numRuns },
    );
  });
});

describe('parseJsonObject', () => {
  it('takes an object or a literal null (as an empty object) after any JSON white space, and nothing else', () => {
    expect(parseJsonObject(' \t\r\n{"a":1}')).toEqual({ a: 1 });
    expect(parseJsonObject('\nnull ')).toEqual({});
    for (const text of ['', ' ', '2024-05-01T10:00:00Z stdout F hello', '[1]', '"s"', '12', 'true', 'nul', 'nulls', '\u00a0{}', '{'])
      expect([text, parseJsonObject(text)]).toEqual([text, undefined]);
  });

  it('accepts exactly the texts whose value JSON.parse reads as an object or null', () => {
    const padding = fc.array(fc.constantFrom(' ', '\t', '\r', '\n'), { maxLength: 3 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(padding, fc.json(), padding, (before, text, after) => {
        const value: unknown = JSON.parse(text);
        const isObject = value === null || (typeof value === 'object' && !Array.isArray(value));
        expect(parseJsonObject(before + text + after) !== undefined).toBe(isObject);
      }),
      { numRuns },
    );
  });
});
