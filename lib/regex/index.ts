/**
 * The project's regex interface: RE2 (Go `regexp`) semantics for every user pattern.
 *
 * The `re2` package judges each pattern: it accepts or rejects it (its message becomes the
 * `RegexSyntaxError`). A pattern with an exact JavaScript equivalent then runs on V8's RegExp,
 * which is about ten times faster on short log lines than the native binding, with V8's
 * linear-time fallback switched on so no input can make it backtrack for long. Everything else
 * runs on `re2` itself. Which one was picked is visible as `regex.engine`.
 *
 * @example
 * const re = compileRegex('(?P<level>[a-z]+)=(?P<value>\\S+)');
 * re.exec('level=info')?.groups; // ['level=info', 'level', 'info']
 * re.replaceAll('a=1 b=2', '${value}:$level'); // '1:a 2:b'
 */
import { compileWith } from './compile.js';
import { nodeLinearTimeHost } from './linear-time.js';
import { nodeRe2Engine } from './node-re2-engine.js';
import type { CompileOptions, Regex } from './types.js';

export type { CompileOptions, Regex, RegexMatch } from './types.js';
export { RegexSyntaxError } from './types.js';
export { ensureLinearTimeFallback, linearTimeFallbackEnabled } from './linear-time.js';
export { regexErrorOffset } from './error-offset.js';

/**
 * Compiles an RE2 pattern. Throws `RegexSyntaxError` (with RE2's message) when it is invalid.
 * `anchored` makes it a whole-input match written `^(?s:…)$`, as LogQL label matchers use.
 */
export function compileRegex(pattern: string, options?: CompileOptions): Regex {
  return compileWith(nodeRe2Engine, nodeLinearTimeHost(), pattern, options);
}
