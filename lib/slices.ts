/**
 * Work done in slices: a decoder written as a generator counts the items it builds and yields
 * once a slice is full, so whoever runs it can give the event loop a turn before asking for more.
 * A small hostile body that decodes into millions of items then never holds the loop for long.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Counts items and says when a slice of them is full. */
export class ItemSlices {
  private items = 0;
  private yieldAt: number;

  /** `sliceItems`: items between two yields (Infinity: never full). */
  constructor(private readonly sliceItems: number) {
    this.yieldAt = sliceItems;
  }

  /** `n` more items done. */
  count(n = 1): void {
    this.items += n;
  }

  /** True once per full slice; the caller then yields. */
  sliceFull(): boolean {
    if (this.items < this.yieldAt) return false;
    this.yieldAt = this.items + this.sliceItems;
    return true;
  }

  /** Starts a new slice now (a caller that also slices by other measures, such as bytes scanned). */
  restartSlice(): void {
    this.yieldAt = this.items + this.sliceItems;
  }
}

/** Runs a sliced decoder to its end at once: for callers that bound its input some other way. */
export function finishSteps<R>(steps: Generator<unknown, R, void>): R {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs a sliced decoder to its end, giving the event loop a turn after every slice. */
export async function runSteps<R>(steps: Generator<unknown, R, void>): Promise<R> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}
