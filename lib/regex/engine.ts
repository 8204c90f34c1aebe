/**
 * The RE2 engine a compiled pattern answers to: the `re2` package in Node, `re2js` in the browser.
 * It decides which patterns are valid (and with which message), runs the patterns that have no
 * exact JavaScript translation, and spells out the Unicode classes used in translations.
 */
import type { CodePointSet } from './code-point-set.js';
import type { RegexMatch } from './types.js';

export interface Re2Engine {
  /** Compiles `pattern` as users write it; throws `RegexSyntaxError` with the engine's message. */
  compile(pattern: string): Re2Program;
  /** Optional faster way to list the code points a one-code-point class accepts (see engine-code-points.ts). */
  codePoints?(classPattern: string): CodePointSet;
}

export interface Re2Program {
  /**
   * The leftmost-first match starting at or after `from` (a UTF-16 offset at a code point
   * boundary). Text before `from` still counts for `^`, `\b` and friends, as in Go's `regexp`.
   */
  search(input: string, from: number): RegexMatch | null;
}
