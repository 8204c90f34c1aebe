import { describe, expect, it } from 'vitest';
import type { RegexNode } from '../../../lib/regex/ast.js';
import { CodePointSet } from '../../../lib/regex/code-point-set.js';
import { parseRe2, UnexpectedSyntax } from '../../../lib/regex/parser.js';

const chars = (s: string): RegexNode => ({ kind: 'chars', set: CodePointSet.of(...[...s].map((c) => c.codePointAt(0)!)) });

describe('parseRe2', () => {
  it('numbers capture groups in order of their opening parenthesis and keeps their names', () => {
    const parsed = parseRe2('(?P<a>x(y))(?:z)(?P<b>w)');
    expect(parsed.numGroups).toBe(3);
    expect(parsed.groupNames).toEqual([undefined, 'a', undefined, 'b']);
  });

  it('applies a repetition to the last literal only', () => {
    expect(parseRe2('ab*').root).toEqual({
      kind: 'concat',
      items: [chars('a'), { kind: 'repeat', min: 0, max: Infinity, greedy: true, body: chars('b') }],
    });
  });

  it('lets a repetition after a flag group apply to the atom before it, as RE2 does', () => {
    expect(parseRe2('a(?i)*').root).toEqual({ kind: 'repeat', min: 0, max: Infinity, greedy: true, body: chars('a') });
  });

  it('reads {…} as a literal unless it is a valid repetition', () => {
    for (const [pattern, text] of [
      ['x{,3}', 'x{,3}'],
      ['x{01}', 'x{01}'],
      ['x{2', 'x{2'],
      ['x{a}', 'x{a}'],
    ] as const) {
      expect(parseRe2(pattern).root).toEqual({ kind: 'concat', items: [...text].map(chars) });
    }
    expect(parseRe2('x{2,5}?').root).toEqual({ kind: 'repeat', min: 2, max: 5, greedy: false, body: chars('x') });
  });

  it('reads \\Q…\\E as separate literals and notes a quote left open', () => {
    expect(parseRe2('\\Q.*\\E').root).toEqual({ kind: 'concat', items: [chars('.'), chars('*')] });
    expect(parseRe2('\\Q\\\\E').root).toEqual(chars('\\'));
    expect(parseRe2('a\\Qb').endsInQuote).toBe(true);
    expect(parseRe2('a\\Qb\\E').endsInQuote).toBe(false);
  });

  it('decodes octal escapes of up to three digits', () => {
    expect(parseRe2('\\0101').root).toEqual({ kind: 'concat', items: [chars('\b'), chars('1')] });
    expect(parseRe2('\\101').root).toEqual(chars('A'));
  });

  it('keeps - literal anywhere in a class where it cannot form a range', () => {
    expect(parseRe2('[a-b-c]').root).toEqual(chars('-abc'));
    expect(parseRe2('[\\d-z]').root).toEqual({ kind: 'chars', set: CodePointSet.fromRanges([0x2d, 0x2d, 0x30, 0x39, 0x7a, 0x7a]) });
  });

  it('leaves Unicode classes and non-ASCII case folding to the engine', () => {
    expect(parseRe2('\\p{Greek}').root).toEqual({ kind: 'engineChars', query: '\\p{Greek}' });
    expect(parseRe2('(?i)[\\pL\\d]').root).toEqual({ kind: 'engineChars', query: '(?i:[\\pL\\d])' });
    expect(parseRe2('(?i)é').root).toEqual({ kind: 'engineChars', query: '(?i:\\x{E9})' });
  });

  it('turns ^ and $ into line anchors under (?m) and back at the end of the group', () => {
    const root = parseRe2('(?m:^)^').root as Extract<RegexNode, { kind: 'concat' }>;
    expect(root.items).toEqual([
      { kind: 'assert', assertion: 'beginLine' },
      { kind: 'assert', assertion: 'beginText' },
    ]);
  });

  it('throws UnexpectedSyntax for text RE2 would not have accepted', () => {
    expect(() => parseRe2('a)')).toThrow(UnexpectedSyntax);
    expect(() => parseRe2('\\1')).toThrow(UnexpectedSyntax);
  });
});
