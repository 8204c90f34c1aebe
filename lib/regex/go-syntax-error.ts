/**
 * Go's `regexp.Compile` error text for a pattern the `re2` package rejected:
 * `error parsing regexp: <code>: \`<fragment>\``.
 *
 * Go's regexp/syntax parser is a port of RE2's, so both reject the same patterns and blame the
 * same fragment, but they word the codes differently (`missing ]` is Go's `missing closing ]`),
 * and Go blames the whole pattern for an unbalanced parenthesis and nothing (an empty fragment) for
 * a trailing backslash. The `re2` package also quotes the pattern it rewrote (`/` as `\/`, `(?<` as
 * `(?P<`), so the fragment is found again in the text the user wrote.
 *
 * @example
 * goRegexpError('(?P<ts[0-9]+).*', 'invalid named capture group: (?P<ts[0-9]+).*')
 * // 'error parsing regexp: invalid named capture: `(?P<ts[0-9]+).*`'
 */

/** How Go blames a pattern for an error: the fragment RE2 names, the whole pattern, or nothing. */
type Blame = 'fragment' | 'pattern' | 'nothing';

/** RE2's error codes (re2/regexp.cc) with Go's (regexp/syntax/parse.go); longer codes first. */
const CODES: readonly (readonly [re2: string, go: string, blame: Blame])[] = [
  ['invalid character class range', 'invalid character class range', 'fragment'],
  ['invalid character class', 'invalid character class', 'fragment'],
  ['invalid escape sequence', 'invalid escape sequence', 'fragment'],
  ['invalid named capture group', 'invalid named capture', 'fragment'],
  ['invalid perl operator', 'invalid or unsupported Perl syntax', 'fragment'],
  ['bad repetition operator', 'invalid nested repetition operator', 'fragment'],
  ['invalid repetition size', 'invalid repeat count', 'fragment'],
  ['no argument for repetition operator', 'missing argument to repetition operator', 'fragment'],
  ['invalid UTF-8', 'invalid UTF-8', 'fragment'],
  ['missing ]', 'missing closing ]', 'fragment'],
  ['missing )', 'missing closing )', 'pattern'],
  ['unexpected )', 'unexpected )', 'pattern'],
  ['trailing \\', 'trailing backslash at end of expression', 'nothing'],
  // RE2's program-size limit; Go's parser has its own, reported against the whole pattern.
  ['pattern too large - compile failed', 'expression too large', 'pattern'],
  ['pattern too large - reverse compile failed', 'expression too large', 'pattern'],
];

/** Go's regexp/syntax error (code and offending text) for a message `re2` rejected `pattern` with. */
export interface GoSyntaxError {
  readonly code: string;
  readonly expr: string;
}

/** Go's error for `pattern`, or undefined for a message that names no RE2 error code. */
export function goSyntaxError(pattern: string, re2Message: string): GoSyntaxError | undefined {
  for (const [re2, code, blame] of CODES) {
    if (re2Message !== re2 && !re2Message.startsWith(`${re2}: `)) continue;
    const expr = blame === 'pattern' ? pattern : blame === 'nothing' ? '' : writtenFragment(pattern, re2Message.slice(re2.length + 2));
    return { code, expr };
  }
  return undefined;
}

/** Go's error text for `pattern`, given the message `re2` rejected it with. */
export function goRegexpError(pattern: string, re2Message: string): string {
  const error = goSyntaxError(pattern, re2Message);
  return error ? `error parsing regexp: ${error.code}: \`${error.expr}\`` : `error parsing regexp: ${re2Message}`;
}

/**
 * The re2 package's rewrites whose quoted form differs from what was written: `\/` (written `/`
 * or `\/`) and `(?P<` (written `(?P<` or `(?<`), which a fragment may end inside (`(?P`).
 */
const REWRITTEN = /(\\\/|\(\?P<?)/;
const SPELLINGS: Readonly<Record<string, string>> = {
  '\\/': '\\\\?\\/',
  '(?P<': '\\(\\?P?<',
  '(?P': '\\(\\?[P<]',
};

/** `fragment` as the user wrote it: each spelling the package's rewrite may hide is tried against the pattern. */
function writtenFragment(pattern: string, fragment: string): string {
  if (pattern.includes(fragment)) return fragment;
  const source = fragment
    .split(REWRITTEN)
    .map((part, i) => (i % 2 === 0 ? escapeRegExp(part) : SPELLINGS[part]!))
    .join('');
  return new RegExp(source).exec(pattern)?.[0] ?? fragment;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}
