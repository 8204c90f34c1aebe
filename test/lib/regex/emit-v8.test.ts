import { describe, expect, it } from 'vitest';
import { planPattern } from '../../../lib/regex/compile.js';
import { nodeLinearTimeHost } from '../../../lib/regex/linear-time.js';
import { nodeRe2Engine } from '../../../lib/regex/node-re2-engine.js';

function translation(pattern: string) {
  const { plan } = planPattern(nodeRe2Engine, nodeLinearTimeHost(), pattern);
  if (plan.engine !== 'v8') throw new Error(`${pattern} was sent to RE2: ${plan.reason}`);
  return plan.translation;
}

const ANY_ASTRAL = '[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]';

describe('translation to V8 RegExp source', () => {
  it.each([
    ['abc', 'abc'],
    ['a.b', 'a[^\\x0A]b'],
    ['(?s).', '[^]'],
    ['\\d\\s\\w', '[0-9][\\x09\\x0A\\x0C\\x0D ][0-9A-Z_a-z]'],
    ['\\D\\S\\W', '[^0-9][^\\x09\\x0A\\x0C\\x0D ][^0-9A-Z_a-z]'],
    ['[[:alpha:]][[:^digit:]][[:space:]]', '[A-Za-z][^0-9][\\x09-\\x0D ]'],
    ['[^"]*', '[^"]*'],
    ['[a-c-]', '[\\x2Da-c]'],
    ['(?i)k', '[Kk\\u212A]'],
    ['(?i)s', '[Ss\\u017F]'],
    ['(?i)\\w', '[0-9A-Z_a-z\\u017F\\u212A]'],
    ['(?i)\\W', '[^0-9A-Z_a-z\\u017F\\u212A]'],
    ['(?i)[^k]', '[^Kk\\u212A]'],
    ['(?i)[a-c]', '[A-Ca-c]'],
    ['(?i)é', '[\\xC9\\xE9]'],
    ['a(?i)b', 'a[Bb]'],
    ['(?P<n>a)(?<m>b)(?:c|d)e', '(a)(b)(?:c|d)e'],
    ['a|b|', 'a|b|(?:)'],
    ['a{2,}', 'a{2,}'],
    ['x{2,4}?', 'x{2,4}?'],
    ['x{20}', 'x'.repeat(20)],
    ['x{0,17}', '(?:x'.repeat(17) + ')?'.repeat(17)],
    ['(?U)a+b*?', 'a+?b*'],
    ['\\Aa\\z', '^a$'],
    ['\\bx\\B', '\\bx\\B'],
    ['\\Q.*\\E', '\\x2E\\x2A'],
    ['\\101\\x{42}\\u0043\\cJ', 'ABC\\x0A'],
    ['\\pN', '[0-9\\xB2\\xB3\\xB9\\xBC-\\xBE\\u0660-\\u0669'],
    ['é', '\\xE9'],
    ['[^\\x00-\\x{10FFFF}]', '[]'],
  ])('writes %s as %s', (pattern, source) => {
    expect(translation(pattern).bmpSource.startsWith(source)).toBe(true);
    if (pattern !== '\\pN') expect(translation(pattern).bmpSource).toBe(source);
  });

  it('uses the m flag for multi-line anchors', () => {
    expect(translation('(?m)^a$')).toMatchObject({ bmpSource: '^a$', flags: 'm' });
    expect(translation('^a$').flags).toBe('');
  });

  it('writes code points beyond the BMP as surrogate pairs in the full variant', () => {
    expect(translation('😀').fullSource).toBe('(?:\\uD83D\\uDE00)');
    expect(translation('[😀-😂😈]').fullSource).toBe('(?:\\uD83D[\\uDE00-\\uDE02\\uDE08])');
    expect(translation('.').fullSource).toBe(`(?:[^\\x0A\\uD800-\\uDFFF]|${ANY_ASTRAL})`);
    expect(translation('[^"]').fullSource).toBe(`(?:[^"\\uD800-\\uDFFF]|${ANY_ASTRAL})`);
  });

  it('keeps the BMP variant for every input when no class reaches beyond the BMP', () => {
    expect(translation('\\d+-[a-z]+').surrogatesNeedFullSource).toBe(false);
    expect(translation('[^"]+').surrogatesNeedFullSource).toBe(true);
    expect(translation('x*').surrogatesNeedFullSource).toBe(true);
  });

  it('produces sources V8 accepts in linear-time mode', () => {
    for (const pattern of ['(a+)+$', '\\pL{3}', '(?i)K+σ', '[^\\n]{1,40}', '(\\d{1,3}\\.){3}']) {
      const t = translation(pattern);
      expect(() => new RegExp(t.bmpSource, t.flags + 'l')).not.toThrow();
      expect(() => new RegExp(t.fullSource, t.flags + 'l')).not.toThrow();
    }
  });
});
