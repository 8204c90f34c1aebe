/** Public shapes of the regex interface, shared by the Node and browser entries. */

/** One match. Offsets are UTF-16 code units, like JavaScript string indices. */
export interface RegexMatch {
  /** Start of the whole match. */
  readonly index: number;
  /** End of the whole match (exclusive). */
  readonly end: number;
  /** `[0]` is the whole match, `[i]` group i; `undefined` when the group did not take part. */
  readonly groups: readonly (string | undefined)[];
  /** The same as `[start, end)` pairs. */
  readonly indices: readonly (readonly [number, number] | undefined)[];
}

/** A compiled pattern with RE2 (Go `regexp`) semantics. */
export interface Regex {
  /** The pattern as the user wrote it. */
  readonly source: string;
  /** Index i = name of group i; index 0 is always undefined. */
  readonly groupNames: readonly (string | undefined)[];
  readonly numGroups: number;
  /** Which backend runs this pattern. */
  readonly engine: 'v8' | 're2';
  /** Whether the pattern matches anywhere in `input`. */
  test(input: string): boolean;
  /** The leftmost-first match, like Go's `FindStringSubmatchIndex`. */
  exec(input: string): RegexMatch | null;
  /**
   * Successive non-overlapping matches, like Go's `FindAllStringSubmatchIndex`; an empty match
   * right after the previous match is skipped. A negative or missing `limit` means no limit.
   */
  findAll(input: string, limit?: number): RegexMatch[];
  /** Go's `ReplaceAllString`: `$1`, `${1}`, `$name`, `${name}` and `$$` are expanded as Go's `Expand` does. */
  replaceAll(input: string, replacement: string): string;
  /** Go's `ReplaceAllLiteralString`: `replacement` is inserted as is. */
  replaceAllLiteral(input: string, replacement: string): string;
  /** Go's `Split`: the text between matches, at most `limit` pieces when `limit` is positive. */
  split(input: string, limit?: number): string[];
}

export interface CompileOptions {
  /**
   * The whole input must match: the pattern runs as `^(?s:…)$`, the way Prometheus and LogQL label
   * matchers anchor theirs. `.` then also matches `\n`, unless `dotAll: false` is given.
   */
  readonly anchored?: boolean;
  /** `.` matches `\n` too, as if the pattern began with `(?s)`. Defaults to `anchored`. */
  readonly dotAll?: boolean;
}

/** The pattern is not valid RE2 syntax; the message is the RE2 engine's own. */
export class RegexSyntaxError extends Error {
  override readonly name = 'RegexSyntaxError';
}
