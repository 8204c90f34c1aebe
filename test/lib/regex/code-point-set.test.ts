import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodePointSet, MAX_CODE_POINT } from '../../../lib/regex/code-point-set.js';

const codePoint = fc.integer({ min: 0, max: MAX_CODE_POINT });
const set = fc
  .array(fc.tuple(codePoint, codePoint), { maxLength: 6 })
  .map((pairs) => CodePointSet.fromRanges(pairs.flatMap(([a, b]) => [Math.min(a, b), Math.max(a, b)])));

describe('CodePointSet', () => {
  it('merges overlapping and adjacent ranges', () => {
    expect(CodePointSet.fromRanges([5, 9, 1, 3, 4, 4, 20, 30, 25, 26]).ranges).toEqual([1, 9, 20, 30]);
  });

  it('finds members, complements and intersects', () => {
    const s = CodePointSet.fromRanges([10, 20, 40, 50]);
    expect([9, 10, 20, 21, 45].map((cp) => s.has(cp))).toEqual([false, true, true, false, true]);
    expect(s.complement().ranges).toEqual([0, 9, 21, 39, 51, MAX_CODE_POINT]);
    expect(s.intersect(CodePointSet.range(15, 45)).ranges).toEqual([15, 20, 40, 45]);
    expect(CodePointSet.of(7).singleCodePoint).toBe(7);
  });

  it('has complement as an involution and set algebra that agrees with membership', () => {
    fc.assert(
      fc.property(set, set, codePoint, (a, b, cp) => {
        expect(a.complement().complement().equals(a)).toBe(true);
        expect(a.union(b).has(cp)).toBe(a.has(cp) || b.has(cp));
        expect(a.intersect(b).has(cp)).toBe(a.has(cp) && b.has(cp));
        expect(a.minus(b).has(cp)).toBe(a.has(cp) && !b.has(cp));
      }),
      { numRuns: Number(process.env.FC_NUM_RUNS ?? 200) },
    );
  });
});
