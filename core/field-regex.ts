import { FieldError } from '../lib/config/errors.js';
import { compileRegex, regexErrorOffset, type Regex } from '../lib/regex/index.js';

/**
 * Compiles a stage attribute's RE2 pattern at build time; an invalid pattern is a config error at
 * that attribute, worded the way the reference words it.
 */
export function compileFieldRegex(field: string, pattern: string): Regex {
  try {
    return compileRegex(pattern);
  } catch (err) {
    const message = (err as Error).message;
    throw new FieldError(field, `could not compile regular expression: ${message}`, { offset: regexErrorOffset(pattern, message) });
  }
}
