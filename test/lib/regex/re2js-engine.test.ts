import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRegex, type Regex, RegexSyntaxError } from '../../../lib/regex/index.js';
import { inputsFor, re2Pattern } from './support/pattern-arbitrary.js';
import { compileOnRe2js } from './support/re2js-engine.js';

function compileOrMessage(compile: (p: string) => Regex, pattern: string): Regex | string {
  try {
    return compile(pattern);
  } catch (error) {
    expect(error).toBeInstanceOf(RegexSyntaxError);
    return (error as Error).message;
  }
}

describe('the regex pipeline on re2js', () => {
  it('runs every pattern on re2js, which has no backtracking', () => {
    expect(compileOnRe2js('(a+)+$').engine).toBe('re2');
  });

  it('matches, replaces and splits like the Node entry', () => {
    const re = compileOnRe2js('(?P<k>\\w+)=(?<v>\\S*)');
    expect(re.groupNames).toEqual([undefined, 'k', 'v']);
    expect(re.exec('x a=1')!.indices).toEqual([
      [2, 5],
      [2, 3],
      [4, 5],
    ]);
    expect(re.replaceAll('a=1 b=2', '${v}$k')).toBe('1a 2b');
    expect(compileOnRe2js('a*').split('abaabaccadaaae', 5)).toEqual(['', 'b', 'b', 'c', 'cadaaae']);
    expect(compileOnRe2js('\\u0041\\p{Letter}').test('Aé')).toBe(true);
    expect(compileOnRe2js('.').exec('\uD800')!.groups[0]).toBe('\uFFFD');
  });

  it.each([
    ['(?=x)', 'invalid perl operator: (?='],
    ['a**', 'bad repetition operator: **'],
    ['\\1', 'invalid escape sequence: \\1'],
    ['(a', 'missing ): (a'],
    ['(?P<n>a)(?P<n>b', 'missing ): (?P<n>a)(?P<n>b'],
    ['(?<!a)b', 'invalid perl operator: (?<!'],
  ])('reports %s in the re2 package’s words', (pattern, message) => {
    expect(compileOrMessage(compileOnRe2js, pattern)).toBe(message);
  });

  it('accepts a group name used twice, as Go does', () => {
    const re = compileOnRe2js('(?:(?P<code>\\d{3})|(?P<code>[A-Z_]+))');
    expect(re.groupNames).toEqual([undefined, 'code', 'code']);
    expect(re.exec('404')!.groups).toEqual(['404', '404', undefined]);
    expect(re.replaceAll('404 NOT_FOUND', '<$code>')).toBe('<404> <NOT_FOUND>');
  });

  it('rejects \\C, which Go’s regexp does not have either', () => {
    expect(compileOrMessage(compileOnRe2js, 'a\\C')).toBe('invalid escape sequence: \\C');
  });

  it('agrees with the Node entry on random patterns, syntax errors included', () => {
    const runs = Math.max(1, Math.ceil(Number(process.env.REGEX_DIFF_RUNS ?? process.env.FC_NUM_RUNS ?? 1000) / 5));
    fc.assert(
      fc.property(
        re2Pattern.filter((p) => !p.includes('\\C')).chain((p) => fc.tuple(fc.constant(p), inputsFor(p, 3))),
        ([pattern, inputs]) => {
          const node = compileOrMessage(compileRegex, pattern);
          const onRe2js = compileOrMessage(compileOnRe2js, pattern);
          if (typeof node === 'string' || typeof onRe2js === 'string') {
            expect(onRe2js).toBe(node);
            return;
          }
          expect(onRe2js.groupNames).toEqual(node.groupNames);
          for (const input of inputs) {
            // `\B` can hold inside a multi-byte character for the re2 package; neither entry reports that.
            const view = (r: Regex) => r.findAll(input).map((m) => [m.groups, m.indices]);
            expect(view(onRe2js)).toEqual(view(node));
          }
        },
      ),
      { numRuns: runs },
    );
  });
});
