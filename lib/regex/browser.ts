/**
 * The regex interface for the browser playground: the same pipeline, judged and run by `re2js` (a
 * pure JavaScript RE2) instead of the native `re2` package.
 *
 * Browsers offer no linear-time fallback for RegExp, so a translated pattern could backtrack for a
 * very long time on a hostile input; every pattern therefore runs on re2js here. Patterns are read
 * through the same JavaScript-escape rewrite as on the server, and syntax errors use the server's
 * wording where re2js reports the same error.
 */
import { compileWith } from './compile.js';
import { re2jsEngine } from './re2js-engine.js';
import type { CompileOptions, Regex } from './types.js';

export type { CompileOptions, Regex, RegexMatch } from './types.js';
export { RegexSyntaxError } from './types.js';

/** Compiles an RE2 pattern; see the Node entry (`index.ts`) for the options. */
export function compileRegex(pattern: string, options?: CompileOptions): Regex {
  return compileWith(re2jsEngine, null, pattern, options);
}
