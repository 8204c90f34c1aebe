import { describe, expect, it } from 'vitest';
import { foldAscii } from '../../../lib/regex/ascii-classes.js';
import { engineCodePoints } from '../../../lib/regex/engine-code-points.js';
import { CodePointSet } from '../../../lib/regex/code-point-set.js';
import type { Re2Engine } from '../../../lib/regex/engine.js';
import { nodeRe2Engine } from '../../../lib/regex/node-re2-engine.js';

/** The same engine without its fast path, so the generic UTF-16 scan is exercised. */
const genericEngine: Re2Engine = { compile: (p) => nodeRe2Engine.compile(p) };

describe('engineCodePoints', () => {
  it('lists the code points of a Unicode class as RE2 defines it', () => {
    const greek = engineCodePoints(nodeRe2Engine, '\\p{Greek}');
    expect(greek.has('λ'.codePointAt(0)!)).toBe(true);
    expect(greek.has('a'.codePointAt(0)!)).toBe(false);
    expect(greek.has(0x1d245)).toBe(true);
  });

  it('never lists surrogates, even for a class written over them', () => {
    expect(engineCodePoints(nodeRe2Engine, '[\\x{D000}-\\x{E000}]').equals(CodePointSet.fromRanges([0xd000, 0xd7ff, 0xe000, 0xe000]))).toBe(
      true,
    );
  });

  it('reads UTF-8 and UTF-16 scans the same way', () => {
    for (const query of ['\\pN', '(?i:\\x{3A3})', '[\\x{7F}-\\x{801}\\x{FFFF}-\\x{10001}\\x{10FFFF}]', '\\PL']) {
      expect(engineCodePoints(nodeRe2Engine, query).ranges).toEqual(engineCodePoints(genericEngine, query).ranges);
    }
  });

  it('agrees with RE2 on case folding of every ASCII character', () => {
    const ascii = CodePointSet.range(0, 0x7f);
    const foldsOntoAscii = engineCodePoints(nodeRe2Engine, '(?i:[\\x00-\\x7F])');
    expect(foldsOntoAscii.ranges).toEqual(foldAscii(ascii).ranges);
    // Every orbit lies inside that union, so each character is checked against it alone.
    const candidates = foldsOntoAscii.ranges.flatMap((lo, i, r) =>
      i % 2 === 0 ? Array.from({ length: r[i + 1]! - lo + 1 }, (_, k) => lo + k) : [],
    );
    for (let cp = 0; cp < 0x80; cp++) {
      const program = nodeRe2Engine.compile(`(?i:\\x{${cp.toString(16)}})`);
      const orbit = candidates.filter((c) => program.search(String.fromCodePoint(c), 0) !== null);
      expect(foldAscii(CodePointSet.of(cp)).ranges).toEqual(CodePointSet.of(...orbit).ranges);
    }
  });
});
