import { FieldError } from '../lib/config/errors.js';
import { compileRegex, type Regex } from '../lib/regex/index.js';

/**
 * Compiles a stage attribute's RE2 pattern at build time; an invalid pattern is a config error at
 * that attribute, worded the way the reference words it.
 */
export function compileFieldRegex(field: string, pattern: string): Regex {
  try {
    return compileRegex(pattern);
  } catch (err) {
    throw new FieldError(field, `could not compile regular expression: ${(err as Error).message}`);
  }
}
