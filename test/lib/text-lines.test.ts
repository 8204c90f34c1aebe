import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextLineSplitter } from '../../lib/text-lines.js';
import { charactersScanned } from '../support/characters-scanned.js';

function split(pieces: readonly string[], loneCarriageReturn: boolean): string[] {
  const splitter = new TextLineSplitter(loneCarriageReturn);
  const lines: string[] = [];
  for (const piece of pieces) splitter.push(piece, lines);
  const last = splitter.end();
  if (last !== undefined) lines.push(last);
  return lines;
}

/** `text` cut at the given offsets. */
function cut(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let start = 0;
  for (const p of points) {
    pieces.push(text.slice(start, p));
    start = p;
  }
  pieces.push(text.slice(start));
  return pieces;
}

describe('TextLineSplitter', () => {
  it('splits at \\n only, dropping the \\r of a \\r\\n split across pieces, when lone \\r is text', () => {
    expect(split(['a\r', '\nb\rc\n', '\nd\r'], false)).toEqual(['a', 'b\rc', '', 'd']);
    expect(split(['x\n'], false)).toEqual(['x']);
    expect(split([''], false)).toEqual([]);
  });

  it('splits at \\n, \\r\\n and a lone \\r when asked, a \\r\\n split across pieces being one break', () => {
    expect(split(['a\r', '\nb\rc\n', '\nd\r'], true)).toEqual(['a', 'b', 'c', '', 'd']);
    expect(split(['\r', '', '\r'], true)).toEqual(['', '']);
  });

  it('gives the same lines however the text is cut into pieces', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '\n', '\r', '\r\n', ' ') });
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), (t, cuts, lone) => {
        expect(split(cut(t, cuts), lone)).toEqual(split([t], lone));
      }),
    );
    fc.assert(
      fc.property(text, (t) => {
        const expected = t.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
        if (t.endsWith('\n') || t === '') expected.pop();
        expect(split([t], false)).toEqual(expected);
      }),
    );
  });

  it('looks at each character of a line of many pieces a bounded number of times', async () => {
    const piece = 'x'.repeat(64 * 1024);
    for (const lone of [false, true]) {
      let lines: string[] = [];
      const scanned = await charactersScanned(() => {
        lines = split([...Array.from({ length: 128 }, () => piece), '\n'], lone);
      });
      expect(lines.map((l) => l.length)).toEqual([128 * piece.length]);
      expect(scanned).toBeLessThanOrEqual(2 * 128 * piece.length);
    }
  });
});
