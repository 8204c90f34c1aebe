/**
 * The writer's label check, run before any request goes out: a set must not be empty, names must
 * not repeat, values must be valid UTF-8 and names other than `__name__` must use
 * `[A-Za-z0-9_.]`. The first problem found (in name order) is reported; an empty name is a
 * `duplicate label name: ` (sic).
 */
import { validateLabelName } from '../../lib/pyroscope/labelset.js';
import { sortLabels, type ProfileLabels } from '../../lib/pyroscope/labels.js';
import { isValidUtf8String } from '../../lib/go/values.js';

export class InvalidLabelsError extends Error {
  constructor(reason: string) {
    super(`invalid labels in profile: ${reason}`);
    this.name = 'InvalidLabelsError';
  }
}

/** Throws InvalidLabelsError for the first problem of `labels`. */
export function validateLabels(labels: ProfileLabels): void {
  if (labels.length === 0) throw new InvalidLabelsError('service name is required');
  // The reference's check starts from an empty "previous name", so an empty name is reported
  // as a duplicate before the name check could call it required.
  let previous = '';
  for (const { name, value } of sortLabels(labels)) {
    if (name === previous) throw new InvalidLabelsError(`duplicate label name: ${name}`);
    if (!isValidUtf8String(value)) throw new InvalidLabelsError(`invalid label value for ${name}: ${value}`);
    if (name !== '__name__') {
      try {
        validateLabelName(name);
      } catch (err) {
        throw new InvalidLabelsError(`invalid label name: ${(err as Error).message}`);
      }
    }
    previous = name;
  }
}
