import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acquisitionOrder, fairShare } from '../../../receivers/jetstream/assignment.js';

describe('partition assignment', () => {
  it('gives the first instances in id order one partition more', () => {
    expect(['a', 'b', 'c'].map((me) => fairShare(['c', 'b', 'a'], me, 12))).toEqual([4, 4, 4]);
    expect(['a', 'b', 'c'].map((me) => fairShare(['a', 'b', 'c'], me, 13))).toEqual([5, 4, 4]);
    expect(fairShare([], 'a', 12)).toBe(12);
    expect(fairShare(['b'], 'a', 12)).toBe(6);
  });

  it('hands out every partition exactly once when the views agree', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 100 }),
        (members, partitions) => {
          const shares = members.map((me) => fairShare(members, me, partitions));
          expect(shares.reduce((a, b) => a + b, 0)).toBe(partitions);
          expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it('starts each instance’s tries at its own block', () => {
    expect(acquisitionOrder(['a', 'b', 'c'], 'b', 6)).toEqual([2, 3, 4, 5, 0, 1]);
  });
});
