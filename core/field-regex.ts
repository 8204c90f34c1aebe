import { FieldError } from '../lib/config/errors.js';
import { compileRegex, regexErrorOffset, type Regex } from '../lib/regex/index.js';
import { goRegexpError, goSyntaxError } from '../lib/regex/go-syntax-error.js';

/**
 * Compiles a stage attribute's RE2 pattern at build time; an invalid pattern is a config error at
 * that attribute, in Go's regexp/syntax wording after the stage's `prefix`. The reference wraps
 * the error per attribute: by default the `regex` attributes (json, logfmt, structured_metadata)
 * return regexp.Compile's error as it is, the others (regex's and replace's `expression`, luhn's
 * `skip_regex`) prefix `could not compile regular expression: `; drop and multiline pass their own.
 */
export function compileFieldRegex(
  field: string,
  pattern: string,
  prefix = field === 'regex' ? '' : 'could not compile regular expression: ',
): Regex {
  try {
    return compileRegex(pattern);
  } catch (err) {
    const message = (err as Error).message;
    throw new FieldError(field, prefix + goRegexpError(pattern, message), { offset: errorOffset(pattern, message) });
  }
}

/**
 * Where the error is in the pattern: read off the engine's message, or else where the fragment Go
 * blames stands, when it stands there once (the engine quotes its rewrite of `/` and `(?<`).
 */
function errorOffset(pattern: string, message: string): number | undefined {
  const offset = regexErrorOffset(pattern, message);
  if (offset !== undefined) return offset;
  const expr = goSyntaxError(pattern, message)?.expr;
  if (!expr) return undefined;
  const at = pattern.indexOf(expr);
  return at >= 0 && pattern.indexOf(expr, at + 1) < 0 ? at : undefined;
}
