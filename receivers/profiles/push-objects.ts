/**
 * The bound on what one Push may build besides its bytes: every series, sample, label and
 * annotation it carries is an object, empty ones included. A 16 KiB gzipped body can hold 8
 * million empty series (two bytes each once inflated), each of which would become a message of
 * three lists; counting them as they are decoded refuses such a body at the first object past the
 * bound, having built no more than that.
 *
 * The reference reads any Push whole and has no such bound, nor a setting one could hang it on,
 * so it is fixed: far above what clients send (the reference's own writer sends one series per
 * Push, a few dozen objects), far below what hurts the process (about 20 MB of decoded messages,
 * decoded in a few tens of milliseconds, a slice at a time).
 */
import { ItemSlices } from '../../lib/slices.js';

/** Most series, samples, labels and annotations, together, one Push may carry. */
export const MAX_PUSH_OBJECTS = 100_000;

/** Objects decoded between two yields. */
export const PUSH_SLICE_OBJECTS = 1024;

/** A Push that carries more objects than the bound; thrown as soon as the next one starts. */
export class ObjectLimitError extends Error {
  readonly status = 413;

  constructor(readonly limit: number) {
    super(`message has more than ${limit} objects (series, samples, labels and annotations)`);
    this.name = 'ObjectLimitError';
  }
}

/** Counts the objects a decode builds, stops it past the bound and says when a slice is full. */
export class PushObjects extends ItemSlices {
  private objects = 0;

  constructor(
    private readonly maxObjects = MAX_PUSH_OBJECTS,
    sliceObjects = PUSH_SLICE_OBJECTS,
  ) {
    super(sliceObjects);
  }

  /** One more series, sample, label or annotation. Throws ObjectLimitError past the bound. */
  object(): void {
    if (this.objects === this.maxObjects) throw new ObjectLimitError(this.maxObjects);
    this.objects++;
    this.count();
  }

  /** Whether there is a bound to stop at. */
  get bounded(): boolean {
    return this.maxObjects !== Number.POSITIVE_INFINITY;
  }

  /** Counts from zero again, for a second decode of the same bytes. */
  restart(): void {
    this.objects = 0;
  }
}
