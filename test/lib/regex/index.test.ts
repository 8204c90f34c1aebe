import { describe, expect, it } from 'vitest';
import { compileRegex, linearTimeFallbackEnabled, regexErrorOffset, RegexSyntaxError } from '../../../lib/regex/index.js';

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

const spans = (pattern: string, input: string) =>
  compileRegex(pattern)
    .findAll(input)
    .map((m) => [m.index, m.end]);

describe('compileRegex', () => {
  it('reports the group names and count of a pattern', () => {
    const re = compileRegex('(?P<year>\\d{4})-(\\d{2})-(?<day>\\d{2})');
    expect(re.source).toBe('(?P<year>\\d{4})-(\\d{2})-(?<day>\\d{2})');
    expect(re.numGroups).toBe(3);
    expect(re.groupNames).toEqual([undefined, 'year', undefined, 'day']);
  });

  it('returns the leftmost-first match with group texts and offsets', () => {
    const m = compileRegex('(?P<k>\\w+)=(?P<v>\\S*)(x)?').exec('-- level=info x');
    expect(m).not.toBeNull();
    expect([m!.index, m!.end]).toEqual([3, 13]);
    expect(m!.groups).toEqual(['level=info', 'level', 'info', undefined]);
    expect(m!.indices).toEqual([[3, 13], [3, 8], [9, 13], undefined]);
  });

  it('gives the exact group offsets whether each group text stands once in the match or not', () => {
    const offsets = (pattern: string, input: string) => compileRegex(pattern).exec(input)!.indices;
    // Each text once: read off the text.
    expect(offsets('"(\\S+) (\\S+)"', 'x "GET /a" y')).toEqual([
      [2, 10],
      [3, 6],
      [7, 9],
    ]);
    // A text twice, a repeated group, an empty text in a longer match, nested groups: asked of RE2.
    expect(offsets('(\\S+) (\\S+)', 'GET GET')).toEqual([
      [0, 7],
      [0, 3],
      [4, 7],
    ]);
    expect(offsets('(a)+', 'baaa')).toEqual([
      [1, 4],
      [3, 4],
    ]);
    expect(offsets('x(\\d*)(y)', 'axy')).toEqual([
      [1, 3],
      [2, 2],
      [2, 3],
    ]);
    expect(offsets('((a)b)(a)', 'aba')).toEqual([
      [0, 3],
      [0, 2],
      [0, 1],
      [2, 3],
    ]);
    expect(offsets('(\\d*)', 'x')).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });

  it('prefers the first alternative that matches, not the longest', () => {
    expect(compileRegex('a|ab').exec('ab')!.groups).toEqual(['a']);
    expect(compileRegex('(a|ab)(c|bcd)(d*)').exec('abcd')!.groups).toEqual(['abcd', 'a', 'bcd', '']);
  });

  describe('a group name used more than once, which Go accepts', () => {
    const re = compileRegex('(?:(?P<code>\\d{3})|(?P<code>[A-Z_]+))');

    it('lists the name once per group and matches each group on its own', () => {
      expect(re.groupNames).toEqual([undefined, 'code', 'code']);
      expect(re.exec('404')!.groups).toEqual(['404', '404', undefined]);
      expect(re.exec('NOT_FOUND')!.indices).toEqual([[0, 9], undefined, [0, 9]]);
    });

    it('expands $name to the first group of that name that took part, as Go’s Expand does', () => {
      expect(re.replaceAll('404 NOT_FOUND', '<$code>')).toBe('<404> <NOT_FOUND>');
      expect(re.replaceAll('404 NOT_FOUND', '<${code}>')).toBe('<404> <NOT_FOUND>');
    });

    it('runs on V8 like any other pattern, and keeps the user’s own name__1 apart', () => {
      const twice = compileRegex('(?P<a>\\d+)-(?P<a>[a-z]+)-(?P<a__1>x)');
      expect(twice.engine).toBe('v8');
      expect(twice.groupNames).toEqual([undefined, 'a', 'a', 'a__1']);
      expect(twice.exec('12-ab-x')!.groups).toEqual(['12-ab-x', '12', 'ab', 'x']);
      expect(twice.replaceAll('12-ab-x', '$a $a__1')).toBe('12 x');
    });
  });

  it('returns null when nothing matches', () => {
    expect(compileRegex('x+').exec('abc')).toBeNull();
    expect(compileRegex('x+').test('abc')).toBe(false);
  });

  describe('syntax errors', () => {
    it.each([
      ['(?=x)', 'invalid perl operator: (?='],
      ['(?<!x)', 'invalid perl operator: (?<!'],
      ['\\1', 'invalid escape sequence: \\1'],
      ['a**', 'bad repetition operator: **'],
      ['a{1001}', 'invalid repetition size: {1001}'],
      ['(a', 'missing ): (a'],
      ['[a', 'missing ]: [a'],
      ['*', 'no argument for repetition operator: *'],
      ['\\p{Klingon}', 'invalid character class range: \\p{Klingon}'],
      // a repeated name is fine (Go), but the message quotes the pattern as written
      ['(?P<n>a)(?P<n>b', 'missing ): (?P<n>a)(?P<n>b'],
    ])('rejects %s with RE2’s message', (pattern, message) => {
      const error = thrownBy(() => compileRegex(pattern));
      expect(error).toBeInstanceOf(RegexSyntaxError);
      expect((error as Error).message).toBe(message);
    });

    it('reports the error of the pattern as written when options wrap it', () => {
      expect((thrownBy(() => compileRegex('a(', { anchored: true })) as Error).message).toBe('missing ): a(');
    });
  });

  describe('RE2 character semantics', () => {
    it('matches \\s without the vertical tab, unlike JavaScript', () => {
      expect(compileRegex('\\s').test('\v')).toBe(false);
      expect(compileRegex('[[:space:]]').test('\v')).toBe(true);
    });

    it('keeps \\d, \\w and \\b to ASCII', () => {
      expect(compileRegex('\\d').test('٣')).toBe(false);
      expect(compileRegex('\\w').test('é')).toBe(false);
      expect(spans('\\b', 'é a')).toEqual([
        [2, 2],
        [3, 3],
      ]);
    });

    it('does not let . match a newline unless (?s) is on', () => {
      expect(compileRegex('a.b').test('a\nb')).toBe(false);
      expect(compileRegex('(?s)a.b').test('a\nb')).toBe(true);
      expect(compileRegex('a.b').test('a\rb')).toBe(true);
      expect(compileRegex('a.b').test('a\u2028b')).toBe(true);
    });

    it('matches $ only at the very end without (?m), even before a final newline', () => {
      expect(compileRegex('a$').test('a\n')).toBe(false);
      expect(compileRegex('(?m)a$').test('a\n')).toBe(true);
    });

    it('treats only \\n as a line end in multi-line mode', () => {
      expect(compileRegex('(?m)^b').test('a\rb')).toBe(false);
      expect(compileRegex('(?m)a$').test('a\r\nb')).toBe(false);
      expect(compileRegex('(?m)a$').test('a\u2028')).toBe(false);
      expect(spans('(?m)^\\w', 'a\nb\rc\u2029d')).toEqual([
        [0, 1],
        [2, 3],
      ]);
    });

    it('folds case with Unicode simple folding under (?i), including KELVIN SIGN and long s', () => {
      expect(compileRegex('(?i)k').test('\u212A')).toBe(true);
      expect(compileRegex('(?i)S').test('ſ')).toBe(true);
      expect(compileRegex('(?i)\\w').test('\u212A')).toBe(true);
      expect(compileRegex('(?i)[^k]').test('\u212A')).toBe(false);
      expect(
        compileRegex('(?i)σ')
          .findAll('ΣσςS')
          .map((m) => m.groups[0]),
      ).toEqual(['Σ', 'σ', 'ς']);
      expect(compileRegex('(?i)é').test('É')).toBe(true);
    });

    it('applies flags set in the middle of a pattern to the rest of its group', () => {
      const re = compileRegex('a(?i)b|c');
      expect(['ab', 'aB', 'AB', 'C'].map((s) => re.test(s))).toEqual([true, true, false, true]);
      expect(compileRegex('(?:(?i)a)b').test('AB')).toBe(false);
    });

    it('swaps greediness under (?U)', () => {
      expect(compileRegex('(?U)a+').exec('aaa')!.groups[0]).toBe('a');
      expect(compileRegex('(?U)a+?').exec('aaa')!.groups[0]).toBe('aaa');
    });

    it('understands Unicode classes, POSIX classes, \\Q…\\E, octal and hex escapes', () => {
      expect(compileRegex('^\\pL+$').test('Grüße')).toBe(true);
      expect(compileRegex('^\\p{Greek}+$').test('λόγος')).toBe(true);
      expect(compileRegex('\\PL').exec('ab1')!.index).toBe(2);
      expect(compileRegex('^[[:alpha:]]+$').test('abc')).toBe(true);
      expect(compileRegex('\\Qa.b*\\E').test('a.b*')).toBe(true);
      expect(compileRegex('\\Qa.b*\\E').test('axbb')).toBe(false);
      expect(compileRegex('\\101\\x42\\x{43}').test('ABC')).toBe(true);
    });

    it('accepts the JavaScript escapes the re2 package rewrites', () => {
      expect(compileRegex('\\u0041\\u{1F600}\\cJ').test('A😀\n')).toBe(true);
      expect(compileRegex('\\p{Letter}+').exec('12ab')!.groups[0]).toBe('ab');
    });
  });

  describe('text outside the Basic Multilingual Plane', () => {
    it('matches a surrogate pair as one character', () => {
      expect(compileRegex('^.$').test('😀')).toBe(true);
      expect(compileRegex('^..$').test('😀')).toBe(false);
      expect(compileRegex('[^a]').exec('😀')!.groups[0]).toBe('😀');
      expect(compileRegex('😀+').exec('x😀😀')!.indices[0]).toEqual([1, 5]);
    });

    it('never finds an empty match between the halves of a pair', () => {
      expect(spans('x*', '😀')).toEqual([
        [0, 0],
        [2, 2],
      ]);
      expect(compileRegex('\\B').exec('a😀')!.index).toBe(3);
    });

    it('reads a lone surrogate in the input as U+FFFD, as the re2 package does', () => {
      expect(compileRegex('\\x{FFFD}').exec('a\uD800b')!.indices[0]).toEqual([1, 2]);
      expect(compileRegex('.+').exec('a\uDC00')!.groups[0]).toBe('a\uFFFD');
    });
  });

  describe('findAll', () => {
    it('skips an empty match right after the previous match, as Go does', () => {
      expect(spans('(x*)', 'abc')).toEqual([
        [0, 0],
        [1, 1],
        [2, 2],
        [3, 3],
      ]);
      expect(spans('(a*)', 'baaac')).toEqual([
        [0, 0],
        [1, 4],
        [5, 5],
      ]);
    });

    it('stops after limit matches and treats a negative limit as none', () => {
      const re = compileRegex('\\d');
      expect(re.findAll('1a2b3', 2).map((m) => m.groups[0])).toEqual(['1', '2']);
      expect(re.findAll('1a2b3', 0)).toEqual([]);
      expect(re.findAll('1a2b3', -1)).toHaveLength(3);
    });

    it('keeps the text before each search start as context for ^ and \\b', () => {
      expect(spans('^a', 'aaa')).toEqual([[0, 1]]);
      expect(spans('\\ba', 'aa a')).toEqual([
        [0, 1],
        [3, 4],
      ]);
    });
  });

  describe('replaceAll', () => {
    const re = compileRegex('(?P<key>\\w+)=(?P<value>\\w*)');

    it('expands numbered and named groups in both spellings', () => {
      expect(re.replaceAll('a=1 b=2', '$2:$1')).toBe('1:a 2:b');
      expect(re.replaceAll('a=1 b=2', '${value}_${key}')).toBe('1_a 2_b');
      expect(re.replaceAll('a=1', '$value-$key')).toBe('1-a');
    });

    it('takes the longest name after $, so $1x names a group "1x" that does not exist', () => {
      expect(re.replaceAll('a=1', '$1x')).toBe('');
      expect(re.replaceAll('a=1', '${1}x')).toBe('ax');
      expect(re.replaceAll('a=1', '$keyword')).toBe('');
    });

    it('writes $$ as a dollar and keeps a $ that starts no valid name', () => {
      expect(re.replaceAll('a=1', '$$1')).toBe('$1');
      expect(re.replaceAll('a=1', 'cost: $')).toBe('cost: $');
      expect(re.replaceAll('a=1', '${key')).toBe('${key');
      expect(re.replaceAll('a=1', '$-')).toBe('$-');
    });

    it('inserts nothing for unknown, out-of-range, leading-zero or non-participating groups', () => {
      expect(re.replaceAll('a=1', '[$9][$01][${nope}]')).toBe('[][][]');
      expect(compileRegex('(a)|(b)').replaceAll('b', '[$1]')).toBe('[]');
      expect(re.replaceAll('a=1', '$0!')).toBe('a=1!');
    });

    it('does not replace an empty match right after a match', () => {
      expect(compileRegex('a*').replaceAll('baaac', 'X')).toBe('XbXcX');
      expect(compileRegex('x*').replaceAll('😀', '-')).toBe('-😀-');
    });

    it('inserts the replacement literally with replaceAllLiteral', () => {
      expect(re.replaceAllLiteral('a=1 b=2', '$1')).toBe('$1 $1');
    });
  });

  describe('split', () => {
    it('follows Go’s Split, including its limit', () => {
      const re = compileRegex('a*');
      expect(re.split('abaabaccadaaae', 5)).toEqual(['', 'b', 'b', 'c', 'cadaaae']);
      expect(compileRegex('').split('abc')).toEqual(['a', 'b', 'c']);
      expect(compileRegex(',').split('a,b,,c')).toEqual(['a', 'b', '', 'c']);
      expect(compileRegex(',').split('')).toEqual(['']);
      expect(compileRegex(',').split('a,b', 0)).toEqual([]);
    });
  });

  describe('options', () => {
    it('anchors the whole input like ^(?s:…)$ when anchored', () => {
      const re = compileRegex('a.c|x', { anchored: true });
      expect(re.test('abc')).toBe(true);
      expect(re.test('a\nc')).toBe(true);
      expect(re.test('abcd')).toBe(false);
      expect(re.test('zx')).toBe(false);
      expect(re.source).toBe('a.c|x');
    });

    it('keeps . from matching newlines in an anchored pattern when dotAll is false', () => {
      expect(compileRegex('a.c', { anchored: true, dotAll: false }).test('a\nc')).toBe(false);
    });

    it('lets . match newlines with dotAll', () => {
      expect(compileRegex('a.c', { dotAll: true }).exec('xa\nc')!.index).toBe(1);
    });

    it('anchors a pattern whose \\Q quote runs to its end', () => {
      const re = compileRegex('a\\Q.*', { anchored: true });
      expect(re.test('a.*')).toBe(true);
      expect(re.test('a.*)$')).toBe(false);
    });

    it('anchors patterns that run on RE2 the same way', () => {
      const re = compileRegex('(a|(b))+', { anchored: true });
      expect(re.engine).toBe('re2');
      expect(re.test('abab')).toBe(true);
      expect(re.test('abc')).toBe(false);
    });
  });

  describe('backend choice', () => {
    it.each([
      '\\S+ (\\d+) "[^"]*"',
      'a(?i)b',
      '(?i)error|warn',
      '(a+)+$',
      '(?m)^\\w+$',
      '\\pL+',
      '(\\d{1,3}\\.){3}\\d{1,3}',
      '[0-9a-f]{32}',
    ])('runs %s on V8', (pattern) => {
      expect(compileRegex(pattern).engine).toBe('v8');
    });

    it.each(['(a|(b))+', '(a*)*', '(?:|a)??', '(a)?b*(?:c(d)?)+', '(?m)^a\\z', '\\C', '(a){20}'])('runs %s on RE2', (pattern) => {
      expect(compileRegex(pattern).engine).toBe('re2');
    });

    it('gives RE2’s answers for the patterns V8 would answer differently', () => {
      expect(compileRegex('(a|(b))+').exec('ba')!.groups).toEqual(['ba', 'a', 'b']);
      expect(compileRegex('(a*)?').exec('b')!.groups).toEqual(['', '']);
      expect(compileRegex('(?:|a)?').exec('a')!.groups).toEqual(['']);
      expect(compileRegex('(?:|a)??').exec('a')!.groups).toEqual(['']);
      expect(compileRegex('"(?P<agent>[^"]*)?"').exec('""')!.groups).toEqual(['""', '']);
    });

    it('has switched on V8’s linear-time fallback', () => {
      compileRegex('a');
      expect(linearTimeFallbackEnabled()).toBe(true);
    });
  });
});

describe('regexErrorOffset', () => {
  const offsetOf = (pattern: string): number | undefined =>
    regexErrorOffset(pattern, (thrownBy(() => compileRegex(pattern)) as Error).message);

  it('finds the parenthesis left open or closing nothing, skipping escapes and classes', () => {
    expect(offsetOf('(?P<a>x')).toBe(0);
    expect(offsetOf('a(b(c)')).toBe(1);
    expect(offsetOf('\\((x')).toBe(2);
    expect(offsetOf('[(](x')).toBe(3);
    expect(offsetOf('ab)c')).toBe(2);
  });

  it('finds the quoted part when it occurs once, and gives up otherwise', () => {
    expect(offsetOf('x\\qy')).toBe(1);
    expect(offsetOf('a[bc')).toBe(1);
    expect(offsetOf('[z-a]')).toBe(1);
    expect(offsetOf('a{2,1}')).toBe(1);
    expect(offsetOf('\\q\\q')).toBeUndefined();
    expect(regexErrorOffset('abc', 'something went wrong')).toBeUndefined();
  });
});
