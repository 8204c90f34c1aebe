import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileJmesPath } from '../../lib/jmespath.js';

const search = (expression: string, data: unknown = {}) => compileJmesPath(expression).search(data);

describe('JMESPath string functions as go-jmespath computes them', () => {
  it('maps case rune by rune, without special casing', () => {
    expect(search("upper('straße')")).toBe('STRAßE');
    expect(search("upper('ŉ')")).toBe('ŉ');
    expect(search("lower('İSTANBUL')")).toBe('istanbul');
    expect(search("lower('ΟΔΟΣ')")).toBe('οδοσ');
    expect(search("upper('mixed Case')")).toBe('MIXED CASE');
  });

  it('finds at byte offsets, within byte bounds', () => {
    expect(search("find_first('éxa', 'a')")).toBe(3);
    expect(search("find_last('aéa', 'a')")).toBe(3);
    expect(search("find_first('éxaa', 'a', `4`)")).toBe(4);
    expect(search("find_first('abc', 'c', `0`, `2`)")).toBe(null);
    expect(search("find_first('abc', 'b', `-5`)")).toBe(1);
    expect(search("find_first('abc', '')")).toBe(null);
    expect(search("find_first('', 'a')")).toBe(null);
    expect(() => search("find_first('abc', 'b', `1.5`)")).toThrow(
      "invalid value, the function 'find_first' expects its 'start' argument to be an integer",
    );
    expect(() => search("find_first('abc', 'b', `3`, `1`)")).toThrow('slice bounds out of range [3:1]');
  });

  it('pads to a width in bytes with a pad of at most one byte', () => {
    expect(search("pad_left('é', `3`, '*')")).toBe('*é');
    expect(search("pad_right('a', `3`)")).toBe('a  ');
    expect(search("pad_left('abc', `2`)")).toBe('abc');
    expect(search("pad_left('a', `3`, '')")).toBe('a');
    expect(() => search("pad_right('a', `3`, 'é')")).toThrow(
      "invalid value, the function 'pad_right' expects its 'pad' argument to be a string of length 1",
    );
    expect(() => search("pad_left('a', `-1`)")).toThrow(
      "the function 'pad_left' expects its 'width' argument to be a non-negative integer",
    );
  });

  it("trims Go's white space when no characters are given, else the characters given", () => {
    expect(search('trim(w)', { w: '\u0085 x\ufeff\u3000' })).toBe('x\ufeff');
    expect(search('trim_left(w)', { w: '\t x \t' })).toBe('x \t');
    expect(search('trim_right(w)', { w: '\t x \t' })).toBe('\t x');
    expect(search("trim('xxaxx', 'x')")).toBe('a');
    expect(search("trim_left('😀😀a😀', '😀')")).toBe('a😀');
  });

  it('splits runes on an empty separator, and counts parts as Go does', () => {
    expect(search("split('a😀b', '')")).toEqual(['a', '😀', 'b']);
    expect(search("split('a,b,c', ',', `1`)")).toEqual(['a', 'b,c']);
    expect(search("split('a,b', ',', `0`)")).toEqual(['a,b']);
    expect(search("split('', ',')")).toEqual([]);
    expect(search("split('a,,b', ',')")).toEqual(['a', '', 'b']);
  });

  it('replaces at most count times; an empty old text matches at every rune boundary', () => {
    expect(search("replace('aaa', 'a', 'b', `2`)")).toBe('bba');
    expect(search("replace('aaa', 'a', 'b')")).toBe('bbb');
    expect(search("replace('a😀', '', '-')")).toBe('-a-😀-');
  });

  it('pads any text to exactly the width in UTF-8 bytes, or leaves it when already as wide', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.nat({ max: 40 }), (text, width) => {
        const padded = search(`pad_left(s, \`${width}\`, '.')`, { s: text }) as string;
        expect(padded.endsWith(text)).toBe(true);
        expect(Buffer.byteLength(padded)).toBe(Math.max(width, Buffer.byteLength(text)));
      }),
    );
  });

  it('gives the offset of the first match in the UTF-8 bytes, or null', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
        (subject, needle) => {
          const offset = Buffer.from(subject).indexOf(Buffer.from(needle));
          expect(search('find_first(s, n)', { s: subject, n: needle })).toBe(offset === -1 ? null : offset);
        },
      ),
    );
  });
});
