import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatLabelSet, parseLabelSet, validateLabelName } from '../../../lib/pyroscope/labelset.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);
const parse = (s: string) => Object.fromEntries(parseLabelSet(s));
const failure = (s: string) => {
  try {
    parseLabelSet(s);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
};

describe('parseLabelSet', () => {
  it('reads the app name and the pairs, trimming both', () => {
    expect(parse(' test.app { env = prod , region=us-east }')).toEqual({ __name__: 'test.app', env: 'prod', region: 'us-east' });
    expect(parse('my-app/with.path_1')).toEqual({ __name__: 'my-app/with.path_1' });
  });

  it('ignores a brace segment without = and drops a pair left open', () => {
    expect(parse('test.app{invalid-label-syntax}')).toEqual({ __name__: 'test.app' });
    expect(parse('app{a=1,b=2')).toEqual({ __name__: 'app', a: '1' });
  });

  it('keeps values unchecked and empty ones as empty strings', () => {
    expect(parse('app{url=http://x/y?a=b,env=}')).toEqual({ __name__: 'app', url: 'http://x/y?a=b', env: '' });
  });

  it('lets __name__ override the app name without the name check', () => {
    expect(parse('app{__name__=other}')).toEqual({ __name__: 'other' });
  });

  it('keeps reading pairs after a closing brace, as the reference parser does', () => {
    expect(parse('a{x=1}y=2}')).toEqual({ __name__: 'a', x: '1', y: '2' });
  });

  it('rejects a missing or invalid app name and invalid keys with the reference messages', () => {
    expect(failure('{env=prod}')).toBe('service name is required');
    expect(failure('my app')).toBe("invalid service name: my app: character is not allowed: ' '");
    expect(failure('app{bad-key=1}')).toBe("invalid label name: bad-key: character is not allowed: '-'");
    expect(failure('app{=1}')).toBe('label name is required');
  });

  it('reads back what formatLabelSet writes for valid label sets', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_.]{1,8}$/).filter((n) => n !== '__name__');
    const value = fc.stringMatching(/^[A-Za-z0-9_.\-/:]{1,8}$/);
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_.\-/]{1,12}$/), fc.dictionary(name, value), (app, labels) => {
        const set = new Map([['__name__', app], ...Object.entries(labels)]);
        expect(parseLabelSet(formatLabelSet(set))).toEqual(set);
      }),
      { numRuns },
    );
  });
});

describe('formatLabelSet', () => {
  it('writes the app name then the other labels sorted by key', () => {
    expect(
      formatLabelSet(
        new Map([
          ['z', '1'],
          ['__name__', 'app'],
          ['a', '2'],
        ]),
      ),
    ).toBe('app{a=2,z=1}');
    expect(formatLabelSet(new Map([['a', '2']]))).toBe('{a=2}');
  });
});

describe('validateLabelName', () => {
  it('accepts dots and leading digits and rejects other characters', () => {
    expect(() => validateLabelName('otel.scope.name')).not.toThrow();
    expect(() => validateLabelName('1abc')).not.toThrow();
    expect(() => validateLabelName('a b')).toThrow("invalid label name: a b: character is not allowed: ' '");
    expect(() => validateLabelName('__name__')).toThrow('label name is reserved: __name__');
  });
});

/** The rune a rejected name is quoted with, as the error message shows it. */
const quotedIn = (name: string) => {
  try {
    validateLabelName(name);
  } catch (err) {
    return /character is not allowed: (.*)$/s.exec((err as Error).message)?.[1];
  }
  return undefined;
};

/** Reads a Go rune literal back: the inverse of strconv.QuoteRune. */
function unquoteRune(literal: string): number {
  const inner = literal.slice(1, -1);
  if (!inner.startsWith('\\')) return inner.codePointAt(0)!;
  const short: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 0x5c, "'": 0x27 };
  if (inner[1]! in short) return short[inner[1]!]!;
  return Number.parseInt(inner.slice(2), 16);
}

describe("the quoted character of a label name error (Go's %q of a rune)", () => {
  // Each output is what Go's strconv.QuoteRune gives for the rune.
  it.each([
    ['\x07', "'\\a'"],
    ['\b', "'\\b'"],
    ['\f', "'\\f'"],
    ['\v', "'\\v'"],
    ['\n', "'\\n'"],
    ['\r', "'\\r'"],
    ['\t', "'\\t'"],
    ['\x00', "'\\x00'"],
    ['\x1b', "'\\x1b'"],
    ['\x7f', "'\\x7f'"],
    ["'", "'\\''"],
    ['\\', "'\\\\'"],
    ['"', `'"'`],
    ['-', "'-'"],
    ['\u0080', "'\\u0080'"],
    ['\u0085', "'\\u0085'"],
    ['\u00a0', "'\\u00a0'"],
    ['\u00ad', "'\\u00ad'"],
    ['é', "'é'"],
    ['世', "'世'"],
    ['\u0378', "'\\u0378'"],
    ['\u200b', "'\\u200b'"],
    ['\u2028', "'\\u2028'"],
    ['\u3000', "'\\u3000'"],
    ['\ufeff', "'\\ufeff'"],
    ['\ue000', "'\\ue000'"],
    ['\ufffd', "'\ufffd'"],
    ['😀', "'😀'"],
    ['\u{e0001}', "'\\U000e0001'"],
    ['\u{10ffff}', "'\\U0010ffff'"],
    // No Go string holds a lone surrogate: it arrives as U+FFFD, which is printable.
    ['\ud800', "'\ufffd'"],
  ])('quotes %j as %s', (ch, quoted) => {
    expect(quotedIn(`a${ch}b`)).toBe(quoted);
    expect(() => validateLabelName(`a${ch}b`)).toThrow(`invalid label name: a${ch}b: character is not allowed: ${quoted}`);
  });

  it('quotes every rejected code point so that it reads back as itself', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x10ffff }), (code) => {
        const ch = code >= 0xd800 && code < 0xe000 ? String.fromCharCode(code) : String.fromCodePoint(code);
        const quoted = quotedIn(`x${ch}`);
        if (/^[A-Za-z0-9_.]$/.test(ch)) return quoted === undefined;
        return unquoteRune(quoted!) === (code >= 0xd800 && code < 0xe000 ? 0xfffd : code);
      }),
      { numRuns },
    );
  });
});
