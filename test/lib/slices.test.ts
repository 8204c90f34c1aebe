import { describe, expect, it } from 'vitest';
import { finishSteps, ItemSlices, runSteps } from '../../lib/slices.js';

/** Counts `items` one by one, yielding the count whenever a slice of `slices` is full. */
function* counting(items: number, slices: ItemSlices): Generator<number, string, void> {
  for (let i = 1; i <= items; i++) {
    slices.count();
    if (slices.sliceFull()) yield i;
  }
  return 'done';
}

describe('ItemSlices', () => {
  it('is full once per slice of items', () => {
    expect([...counting(10, new ItemSlices(3))]).toEqual([3, 6, 9]);
  });

  it('starts a new slice when asked', () => {
    const slices = new ItemSlices(3);
    slices.count(2);
    slices.restartSlice();
    slices.count(2);
    expect(slices.sliceFull()).toBe(false);
    slices.count();
    expect(slices.sliceFull()).toBe(true);
  });
});

describe('finishSteps and runSteps', () => {
  it('finishSteps runs a sliced decoder to its end at once', () => {
    expect(finishSteps(counting(10, new ItemSlices(3)))).toBe('done');
  });

  it('runSteps gives the event loop a turn after every slice', async () => {
    let turns = 0;
    let finished = false;
    const tick = () => {
      if (finished) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    expect(await runSteps(counting(10, new ItemSlices(3)))).toBe('done');
    finished = true;
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
