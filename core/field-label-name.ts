import { FieldError } from '../lib/config/errors.js';
import { isValidLabelName } from '../lib/go/values.js';

/**
 * Checks a label name a stage attribute gives, at build time; an invalid one is a config error at
 * that attribute, worded as the reference words it: `invalid label name: <name>`.
 */
export function checkFieldLabelName(field: string, name: string): void {
  if (!isValidLabelName(name)) throw new FieldError(field, `invalid label name: ${name}`);
}
