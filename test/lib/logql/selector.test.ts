import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { compileSelector, parseSelector, SelectorError, type Selector } from '../../../lib/logql/selector.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

function errorOf(text: string): string {
  try {
    parseSelector(text);
  } catch (err) {
    expect(err).toBeInstanceOf(SelectorError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parseSelector', () => {
  const parsed: Array<[string, Selector]> = [
    ['{foo="bar"}', { matchers: [{ name: 'foo', op: '=', value: 'bar' }], filters: [] }],
    ['{ foo = "bar" }', { matchers: [{ name: 'foo', op: '=', value: 'bar' }], filters: [] }],
    ['{ foo != "bar" }', { matchers: [{ name: 'foo', op: '!=', value: 'bar' }], filters: [] }],
    ['{ foo =~ "bar" }', { matchers: [{ name: 'foo', op: '=~', value: 'bar' }], filters: [] }],
    ['{ foo !~ "bar" }', { matchers: [{ name: 'foo', op: '!~', value: 'bar' }], filters: [] }],
    [
      '{ foo = "bar", bar != "baz" }',
      {
        matchers: [
          { name: 'foo', op: '=', value: 'bar' },
          { name: 'bar', op: '!=', value: 'baz' },
        ],
        filters: [],
      },
    ],
    ['{ foo = "ba\\"r" }', { matchers: [{ name: 'foo', op: '=', value: 'ba"r' }], filters: [] }],
    [
      '{foo="bar"} |= "baz" |~ "blip" != "flip" !~ "flap"',
      {
        matchers: [{ name: 'foo', op: '=', value: 'bar' }],
        filters: [
          { op: '|=', value: 'baz' },
          { op: '|~', value: 'blip' },
          { op: '!=', value: 'flip' },
          { op: '!~', value: 'flap' },
        ],
      },
    ],
    ['{a="\\t\\u00e9\\x41\\101"}', { matchers: [{ name: 'a', op: '=', value: '\té' + 'AA' }], filters: [] }],
    ['{ä_1="ü"}', { matchers: [{ name: 'ä_1', op: '=', value: 'ü' }], filters: [] }],
    ['/* c */ {a="b"} // trailing\n|= "x"\n', { matchers: [{ name: 'a', op: '=', value: 'b' }], filters: [{ op: '|=', value: 'x' }] }],
    ['{a=""}', { matchers: [{ name: 'a', op: '=', value: '' }], filters: [] }],
    // text/scanner returns raw strings as String tokens: no escapes, newlines kept, CRs dropped
    ['{foo=`bar`}', { matchers: [{ name: 'foo', op: '=', value: 'bar' }], filters: [] }],
    [
      '{a=~`\\d+\\.`, b!=``}',
      {
        matchers: [
          { name: 'a', op: '=~', value: '\\d+\\.' },
          { name: 'b', op: '!=', value: '' },
        ],
        filters: [],
      },
    ],
    [
      '{a="b"} |= `x"y` !~ `a\r\nb`',
      {
        matchers: [{ name: 'a', op: '=', value: 'b' }],
        filters: [
          { op: '|=', value: 'x"y' },
          { op: '!~', value: 'a\nb' },
        ],
      },
    ],
  ];
  it.each(parsed)('parses %j', (text, selector) => {
    expect(parseSelector(text)).toEqual(selector);
  });

  const rejected: Array<[string, string]> = [
    // the reference parser's own test cases
    ['{foo="bar}', 'parse error at line 1, col 6: literal not terminated'],
    ['{foo="bar"', 'parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,'],
    ['{foo="bar"} |~', 'parse error at line 1, col 15: syntax error: unexpected $end, expecting STRING'],
    ['{foo="bar"} "foo"', 'parse error at line 1, col 13: syntax error: unexpected STRING, expecting != or !~ or |~ or |='],
    ['{foo="bar"} foo', 'parse error at line 1, col 13: syntax error: unexpected IDENTIFIER, expecting != or !~ or |~ or |='],
    // grammar states
    ['', 'parse error at line 0, col 0: syntax error: unexpected $end, expecting {'],
    ['  ', 'parse error at line 1, col 3: syntax error: unexpected $end, expecting {'],
    ['foo', 'parse error at line 1, col 1: syntax error: unexpected IDENTIFIER, expecting {'],
    ['{}', 'parse error at line 1, col 2: syntax error: unexpected }, expecting IDENTIFIER'],
    ['{', 'parse error at line 1, col 2: syntax error: unexpected $end, expecting IDENTIFIER'],
    ['{foo}', 'parse error at line 1, col 5: syntax error: unexpected }, expecting = or != or =~ or !~'],
    ['{foo.bar="x"}', 'parse error at line 1, col 5: syntax error: unexpected ., expecting = or != or =~ or !~'],
    ['{app-name="x"}', 'parse error at line 1, col 5: syntax error: unexpected IDENTIFIER, expecting = or != or =~ or !~'],
    ['{foo=}', 'parse error at line 1, col 6: syntax error: unexpected }, expecting STRING'],
    ['{foo=1}', 'parse error at line 1, col 6: syntax error: unexpected IDENTIFIER, expecting STRING'],
    ['{`foo`="bar"}', 'parse error at line 1, col 2: syntax error: unexpected STRING, expecting IDENTIFIER'],
    ['{a="b"} `x`', 'parse error at line 1, col 9: syntax error: unexpected STRING, expecting != or !~ or |~ or |='],
    ['{a="b",}', 'parse error at line 1, col 8: syntax error: unexpected }, expecting IDENTIFIER'],
    ['{a="b" b="c"}', 'parse error at line 1, col 8: syntax error: unexpected IDENTIFIER, expecting } or ,'],
    ['{a=~"b"}}', 'parse error at line 1, col 9: syntax error: unexpected }, expecting != or !~ or |~ or |='],
    [
      '{foo="bar"} |= "foo" | status >= 200',
      'parse error at line 1, col 22: syntax error: unexpected IDENTIFIER, expecting != or !~ or |~ or |=',
    ],
    ['{foo="bar"} |> "x"', 'parse error at line 1, col 13: syntax error: unexpected IDENTIFIER, expecting != or !~ or |~ or |='],
    ['{foo="bar"} | json', 'parse error at line 1, col 13: syntax error: unexpected IDENTIFIER, expecting != or !~ or |~ or |='],
    ['{a="b"}\n|= 1', 'parse error at line 2, col 4: syntax error: unexpected IDENTIFIER, expecting STRING'],
    ['{a="b"\n', 'parse error at line 2, col 1: syntax error: unexpected $end, expecting } or ,'],
    // a two-character operator is completed with text/scanner's Next(), which sets Line to 0
    ['{foo |= "x"}', 'parse error at line 0, col 6: syntax error: unexpected |=, expecting = or != or =~ or !~'],
    ['|= "foo"', 'parse error at line 0, col 1: syntax error: unexpected |=, expecting {'],
    ['{a="b"} != != "x"', 'parse error at line 0, col 12: syntax error: unexpected !=, expecting STRING'],
    ['{a=~"b"}\n  =~ "c"', 'parse error at line 0, col 3: syntax error: unexpected =~, expecting != or !~ or |~ or |='],
    ['{a="b"} |= "x" !~', 'parse error at line 1, col 18: syntax error: unexpected $end, expecting STRING'],
    ['{a="b"} ! = "x"', 'parse error at line 1, col 9: syntax error: unexpected IDENTIFIER, expecting != or !~ or |~ or |='],
    // lexical errors
    ["{foo='bar'}", 'parse error at line 1, col 6: invalid char literal'],
    ['{a="\\q"}', 'parse error at line 1, col 4: invalid char escape'],
    ['{a="\\x4"}', 'parse error at line 1, col 4: invalid char escape'],
    ['{a="\\ud800"}', 'parse error at line 1, col 4: invalid syntax'],
    ['{a="\\400"}', 'parse error at line 1, col 4: invalid syntax'],
    ['{a="b\nc"}', 'parse error at line 1, col 4: literal not terminated'],
    ['{a=`b', 'parse error at line 1, col 4: literal not terminated'],
    ['{a="b"}\n|= `x\ny', 'parse error at line 2, col 4: literal not terminated'],
    ['{a="b"} /* x', 'parse error at line 1, col 9: comment not terminated'],
    ['{a=0x}', 'parse error at line 1, col 4: hexadecimal literal has no digits'],
    ['{a=09}', "parse error at line 1, col 4: invalid digit '9' in octal literal"],
    ['{a=1e}', 'parse error at line 1, col 4: exponent has no digits'],
    ['{a=1__0}', "parse error at line 1, col 4: '_' must separate successive digits"],
    ['{a=0b1.0}', 'parse error at line 1, col 4: invalid radix point in binary literal'],
  ];
  it.each(rejected)('rejects %j', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('reports the position of the error', () => {
    try {
      parseSelector('{a="b"}\n  x');
    } catch (err) {
      expect(err).toMatchObject({ line: 2, col: 3 });
    }
    expect.assertions(1);
  });

  it('reports line 0 but keeps the column when the offending token is a two-character operator', () => {
    try {
      parseSelector('{a="b"}\n  |~ |~ "x"');
    } catch (err) {
      expect(err).toMatchObject({ line: 0, col: 6 });
    }
    expect.assertions(1);
  });

  it('never throws anything but SelectorError', () => {
    const text = fc.string({
      unit: fc.constantFrom('{', '}', '"', '`', "'", '=', '!', '~', '|', ',', ' ', '\n', 'a', '1', '\\', '/', '*', '.', 'x', 'é'),
    });
    fc.assert(
      fc.property(text, (s) => {
        try {
          parseSelector(s);
        } catch (err) {
          expect(err).toBeInstanceOf(SelectorError);
        }
      }),
      { numRuns },
    );
  });
});

describe('compileSelector', () => {
  const matches = (selector: string, labels: Record<string, string>, line = 'foo') =>
    compileSelector(parseSelector(selector))(labels, line);

  it('compares label values exactly, a missing label being empty', () => {
    expect(matches('{foo="bar"}', { foo: 'bar' })).toBe(true);
    expect(matches('{foo=""}', { foo: 'bar' })).toBe(false);
    expect(matches('{foo=""}', {})).toBe(true);
    expect(matches('{foo!="bar"}', { foo: 'bar' })).toBe(false);
    expect(matches('{foo!="bar"}', {})).toBe(true);
    expect(matches('{foo="bar",bar!="test"}', { foo: 'bar', bar: 'test' })).toBe(false);
    expect(matches('{constructor=""}', {})).toBe(true);
  });

  it('anchors label regexes and lets . match newlines', () => {
    expect(matches('{app=~"lok"}', { app: 'loki' })).toBe(false);
    expect(matches('{app=~"lok."}', { app: 'loki' })).toBe(true);
    expect(matches('{app=~"a.b"}', { app: 'a\nb' })).toBe(true);
    expect(matches('{app=~"a|b"}', { app: 'b' })).toBe(true);
    expect(matches('{app!~"te.*"}', { app: 'test' })).toBe(false);
    expect(matches('{app=~".*"}', {})).toBe(true);
    expect(matches('{app=~".+"}', {})).toBe(false);
  });

  it('applies line filters as substring and unanchored regex tests, all of them', () => {
    expect(matches('{foo="bar"} |= "foo"', { foo: 'bar' })).toBe(true);
    expect(matches('{foo="bar"} |= "bar"', { foo: 'bar' })).toBe(false);
    expect(matches('{foo="bar"} |~ "o+"', { foo: 'bar' })).toBe(true);
    expect(matches('{foo="bar"} != "bar"', { foo: 'bar' })).toBe(true);
    expect(matches('{foo="bar"} !~ "f"', { foo: 'bar' })).toBe(false);
    expect(matches('{foo="bar"} |= "" != ""', { foo: 'bar' })).toBe(false);
    expect(matches('{foo="bar"} |= "f" |~ "^fo" !~ "x"', { foo: 'bar' })).toBe(true);
    expect(matches('{foo="bar"} |~ ".*noisy error.*"', { foo: 'bar' }, 'a noisy error here')).toBe(true);
  });

  it('takes raw strings verbatim, backslashes included', () => {
    expect(matches('{app=`foo`}', { app: 'foo' })).toBe(true);
    expect(matches('{app=~`\\d+`}', { app: '404' })).toBe(true);
    expect(matches('{app=~`\\d+`}', { app: 'd' })).toBe(false);
    expect(matches('{app="x"} |= `a\\b`', { app: 'x' }, 'a\\b')).toBe(true);
    expect(matches('{app="x"} |= `a\\b`', { app: 'x' }, 'ab')).toBe(false);
  });

  it('rejects invalid label and line regexes', () => {
    expect(() => compileSelector(parseSelector('{a=~"("}'))).toThrow(SelectorError);
    expect(() => compileSelector(parseSelector('{a!~"[z-a]"}'))).toThrow(/^invalid regular expression in label matcher a!~"\[z-a\]": /);
    expect(() => compileSelector(parseSelector('{foo="bar"} !~ "[]"'))).toThrow(/^invalid regular expression in line filter !~"\[\]": /);
    expect(() => compileSelector(parseSelector('{foo="bar"} |~ "(?=x)"'))).toThrow(SelectorError);
  });
});
