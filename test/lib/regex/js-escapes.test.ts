import { describe, expect, it } from 'vitest';
import { rewriteJsEscapes } from '../../../lib/regex/js-escapes.js';

describe('rewriteJsEscapes', () => {
  it.each([
    ['', '(?:)'],
    ['\\cJ\\cA', '\\x0A\\x01'],
    ['\\ca', '\\ca'],
    ['\\u0041\\u41x', '\\x{0041}\\x{41}x'],
    ['\\u{1F600}', '\\x{1F600}'],
    ['\\p{Letter}\\P{Uppercase_Letter}', '\\pL\\P{Lu}'],
    ['\\p{Script=Greek}\\p{sc=Latin}', '\\p{Greek}\\p{Latin}'],
    ['(?<name>a)(?<=b)(?<!c)', '(?P<name>a)(?<=b)(?<!c)'],
    ['a/b\\/c', 'a\\/b\\/c'],
    ['\\\\u0041', '\\\\u0041'],
    ['\\Q\\u0041\\E', '\\Q\\x{0041}\\E'],
    ['\\😀', '\\😀'],
  ])('rewrites %s to %s, as the re2 package does', (pattern, rewritten) => {
    expect(rewriteJsEscapes(pattern)).toBe(rewritten);
  });
});
