/**
 * sprig v3.3.0 regular-expression functions over the project's RE2 interface. The plain forms
 * panic on an invalid pattern (Go's `regexp.MustCompile`), which the executor reports as an
 * execution error; the `must…` forms return the compile error instead; `regexMatch` answers
 * false.
 */
import { compileRegex, type Regex } from '../../regex/index.js';
import { goRegexpError } from '../../regex/go-syntax-error.js';
import { currentMeter } from '../budget.js';
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { canBackquote, quoteGoString } from '../../go/gostring.js';
import { type GoInt, T_INT, T_SLICE_STRING, T_STRING, tagType } from '../values.js';

const S = T_STRING;
const CACHE_LIMIT = 256;
const cache = new Map<string, Regex | GoError>();

/** Go's regexp.Compile error for a pattern the engine rejected. */
function compileError(pattern: string, err: unknown): GoError {
  return new GoError(goRegexpError(pattern, err instanceof Error ? err.message : String(err)));
}

/** Compiles (and caches) a pattern; returns the Go compile error instead of throwing. */
export function compileCached(pattern: string): Regex | GoError {
  let entry = cache.get(pattern);
  if (entry === undefined) {
    try {
      entry = compileRegex(pattern);
    } catch (err) {
      entry = compileError(pattern, err);
    }
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(pattern, entry);
  }
  return entry;
}

/** Go's regexp.MustCompile: a panic with the quoted pattern on error. */
export function mustCompile(pattern: string): Regex {
  const re = compileCached(pattern);
  if (re instanceof GoError) {
    const quoted = canBackquote(pattern) ? '`' + pattern + '`' : quoteGoString(pattern);
    throw new GoError(`regexp: Compile(${quoted}): ${re.message}`);
  }
  return re;
}

function compileOrThrow(pattern: string): Regex {
  const re = compileCached(pattern);
  if (re instanceof GoError) throw re;
  return re;
}

const strings = (items: string[]): string[] => tagType(items, T_SLICE_STRING);
const findAll = (re: Regex, s: string, n: GoInt): string[] =>
  strings(withinListBudget(Number(n.value), (limit) => re.findAll(s, limit)).map((m) => m.groups[0] ?? ''));
const findFirst = (re: Regex, s: string): string => re.exec(s)?.groups[0] ?? '';
const split = (re: Regex, s: string, n: GoInt): string[] => strings(withinListBudget(Number(n.value), (limit) => re.split(s, limit)));

/**
 * Runs a find or split that takes Go's count argument (negative: all) with at most one element
 * more than the budget allows, which gives the same result whenever the whole one is within it.
 */
function withinListBudget<T>(n: number, run: (limit: number) => T[]): T[] {
  const meter = currentMeter();
  const max = meter.budget.maxListLength;
  const items = run(n < 0 || n > max ? max + 1 : n);
  if (items.length > max) meter.checkLength(undefined);
  return items;
}

/** Go's regexp.QuoteMeta. */
export function quoteMeta(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, (c) => '\\' + c);
}

/** sprig's regex functions (the reference replaces regexReplaceAll/regexReplaceAllLiteral). */
export const sprigRegexFuncs: FuncMap = {
  regexMatch: defineFunc([S, S], (regex: string, s: string) => {
    const re = compileCached(regex);
    return re instanceof GoError ? false : re.test(s);
  }),
  mustRegexMatch: defineFunc([S, S], (regex: string, s: string) => compileOrThrow(regex).test(s)),
  regexFindAll: defineFunc([S, S, T_INT], (regex: string, s: string, n: GoInt) => findAll(mustCompile(regex), s, n)),
  mustRegexFindAll: defineFunc([S, S, T_INT], (regex: string, s: string, n: GoInt) => findAll(compileOrThrow(regex), s, n)),
  regexFind: defineFunc([S, S], (regex: string, s: string) => findFirst(mustCompile(regex), s)),
  mustRegexFind: defineFunc([S, S], (regex: string, s: string) => findFirst(compileOrThrow(regex), s)),
  regexReplaceAll: defineFunc([S, S, S], (regex: string, s: string, repl: string) => mustCompile(regex).replaceAll(s, repl)),
  mustRegexReplaceAll: defineFunc([S, S, S], (regex: string, s: string, repl: string) => compileOrThrow(regex).replaceAll(s, repl)),
  regexReplaceAllLiteral: defineFunc([S, S, S], (regex: string, s: string, repl: string) => mustCompile(regex).replaceAllLiteral(s, repl)),
  mustRegexReplaceAllLiteral: defineFunc([S, S, S], (regex: string, s: string, repl: string) =>
    compileOrThrow(regex).replaceAllLiteral(s, repl),
  ),
  regexSplit: defineFunc([S, S, T_INT], (regex: string, s: string, n: GoInt) => split(mustCompile(regex), s, n)),
  mustRegexSplit: defineFunc([S, S, T_INT], (regex: string, s: string, n: GoInt) => split(compileOrThrow(regex), s, n)),
  regexQuoteMeta: defineFunc([S], quoteMeta),
};
