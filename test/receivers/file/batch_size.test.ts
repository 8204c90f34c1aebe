import { describe, expect, it } from 'vitest';
import { BatchSize } from '../../../receivers/file/batch_size.js';

describe('BatchSize', () => {
  it('doubles while batches are taken over within the target, up to the largest size', () => {
    const size = new BatchSize(100, 1000, 64);
    const seen = [size.lines];
    for (let i = 0; i < 5; i++) {
      size.taken(size.lines, 10);
      seen.push(size.lines);
    }
    expect(seen).toEqual([64, 128, 256, 512, 1000, 1000]);
  });

  it('shrinks a slow batch to the lines taken over in the target at the pace seen', () => {
    const size = new BatchSize(32, 1000, 1000);
    // 1000 lines in 1s: 32 lines in 32ms.
    size.taken(1000, 1000);
    expect(size.lines).toBe(32);
    size.taken(32, 32);
    expect(size.lines).toBe(64);
    size.taken(64, 64);
    expect(size.lines).toBe(32);
    // A slow batch never more than halves the size, and never below one line.
    size.taken(32, 40);
    expect(size.lines).toBe(16);
    const smallest = new BatchSize(1, 1000, 1);
    smallest.taken(1, 1_000_000);
    expect(smallest.lines).toBe(1);
  });

  it('goes back to the largest size when a smaller batch takes about as long: the time is latency, not lines', () => {
    const size = new BatchSize(3, 1000, 64);
    size.taken(64, 150);
    expect(size.lines).toBe(1);
    size.taken(1, 150);
    expect(size.lines).toBe(1000);
    size.taken(1000, 150);
    expect(size.lines).toBe(1000);
    // Until a batch is taken over in time again.
    size.taken(1000, 2);
    expect(size.lines).toBe(1000);
    size.taken(1000, 500);
    expect(size.lines).toBe(6);
  });
});
