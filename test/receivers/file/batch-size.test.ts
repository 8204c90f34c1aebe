import { describe, expect, it } from 'vitest';
import { BatchSize } from '../../../receivers/file/batch-size.js';

/** The sizes a BatchSize picks for `count` batches, each taking `tookMs(lines)`. */
function sizes(size: BatchSize, count: number, tookMs: (lines: number) => number): number[] {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) {
    seen.push(size.lines);
    size.taken(size.lines, tookMs(size.lines));
  }
  return seen;
}

describe('BatchSize', () => {
  it('doubles while batches are taken over within the target, up to the largest size', () => {
    expect(sizes(new BatchSize(100, 1000, 64), 6, () => 10)).toEqual([64, 128, 256, 512, 1000, 1000]);
  });

  it('shrinks batches to what is taken over in the target when the time goes per line', () => {
    // 1 ms a line (a rate limit of 1000 lines/s), a target of 32 ms.
    expect(sizes(new BatchSize(32, 1000, 1000), 6, (lines) => lines)).toEqual([1000, 32, 64, 32, 64, 32]);
    // A fixed 10 ms per batch on top: the lines that fit in the 22 ms left.
    expect(sizes(new BatchSize(32, 1000, 64), 6, (lines) => 10 + lines)).toEqual([64, 27, 22, 44, 22, 44]);
    // Never below one line.
    expect(sizes(new BatchSize(1, 1000, 4), 4, (lines) => 100 * lines)).toEqual([4, 1, 1, 1]);
  });

  it('grows batches instead when the time is per batch: smaller ones would only cut throughput', () => {
    const seen = sizes(new BatchSize(3, 1000, 64), 30, () => 150);
    expect(seen.slice(0, 14)).toEqual([64, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000, 1000]);
    // Every 16th slow batch is a smaller one, to notice the time turning per line again.
    expect(seen.slice(14)).toEqual([1000, 1000, 1000, 500, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]);
  });

  it('goes back to pacing by lines once a batch is taken over in time', () => {
    const size = new BatchSize(32, 1000, 64);
    size.taken(64, 150);
    size.taken(size.lines, 150);
    expect(size.lines).toBe(26);
    size.taken(26, 1);
    expect(size.lines).toBe(52);
    // 59 ms more for 26 lines more: all of it per line, so 32 ms take 14 lines.
    size.taken(52, 60);
    expect(size.lines).toBe(14);
  });
});
