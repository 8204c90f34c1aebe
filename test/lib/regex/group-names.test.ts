import { describe, expect, it } from 'vitest';
import { uniqueGroupNames } from '../../../lib/regex/group-names.js';

describe('uniqueGroupNames', () => {
  it('leaves a pattern without repeated names as it is', () => {
    const unique = uniqueGroupNames('(?P<a>x)(?<b>y)(z)');
    expect(unique.pattern).toBe('(?P<a>x)(?<b>y)(z)');
    expect(unique.restoreNames([undefined, 'a', 'b', undefined])).toEqual([undefined, 'a', 'b', undefined]);
    expect(unique.restoreMessage('missing )')).toBe('missing )');
  });

  it('renames every repeat after the first, in both spellings', () => {
    const unique = uniqueGroupNames('(?P<a>x)|(?<a>y)|(?P<a>z)');
    expect(unique.pattern).toBe('(?P<a>x)|(?<a__1>y)|(?P<a__2>z)');
    expect(unique.restoreNames([undefined, 'a', 'a__1', 'a__2'])).toEqual([undefined, 'a', 'a', 'a']);
  });

  it('picks internal names the pattern does not use already', () => {
    const unique = uniqueGroupNames('(?P<a__1>w)(?P<a>x)(?P<a>y)');
    expect(unique.pattern).toBe('(?P<a__1>w)(?P<a>x)(?P<a__2>y)');
    expect(unique.restoreNames([undefined, 'a__1', 'a', 'a__2'])).toEqual([undefined, 'a__1', 'a', 'a']);
  });

  it('ignores group-like text in escapes, \\Q…\\E quotes and character classes', () => {
    for (const pattern of [
      '\\(?P<a>x)(?P<a>y)',
      '\\Q(?P<a>x)\\E(?P<a>y)',
      '[(?P<a>x)](?P<a>y)',
      '[](?P<a>x)](?P<a>y)',
      '[^](?P<a>x)](?P<a>y)',
      '[[:alpha:](?P<a>x)](?P<a>y)',
      '[\\](?P<a>x)](?P<a>y)',
      '(?<=a)(?<!b)(?P<a>y)',
    ]) {
      expect(uniqueGroupNames(pattern).pattern).toBe(pattern);
    }
  });

  it('puts the written names back into an engine’s message', () => {
    const unique = uniqueGroupNames('(?P<a>x)(?<a>y');
    expect(unique.restoreMessage('missing ): (?P<a>x)(?<a__1>y')).toBe('missing ): (?P<a>x)(?<a>y');
  });
});
