/**
 * V8 can finish any regex match in linear time by switching to its experimental automaton engine
 * once a match backtracks too much — but only when asked, and only for patterns that engine can
 * run (no `u` or `i` flag, no lookarounds, small counted repetitions). Translations are written to
 * qualify; the `l` flag (also enabled here) lets us ask V8 whether a given source does.
 */
import v8 from 'node:v8';
import type { LinearTimeHost } from './compile.js';

// The first flag switches runaway matches to the linear engine; the second makes the `l` flag available
// so `runsInLinearTime` can ask V8 whether a source qualifies for that switch.
const V8_FLAGS = '--enable-experimental-regexp-engine-on-excessive-backtracks --enable-experimental-regexp-engine';

let state: 'unset' | 'enabled' | 'unavailable' = 'unset';

/**
 * Turns on V8's linear-time fallback for backtracking regexes: a process-wide V8 setting, so it is
 * never changed behind a caller's back. The CLI calls this at start; a program using the library
 * calls it once (exported as `enableLinearTimeRegex`) to let translatable patterns run on V8's
 * RegExp. Until then every user pattern runs on RE2, which is linear-time by construction. Flags
 * apply to RegExps compiled afterwards, so call it before building pipelines.
 */
export function ensureLinearTimeFallback(): void {
  if (state !== 'unset') return;
  try {
    v8.setFlagsFromString(V8_FLAGS);
    // Runtimes that freeze V8 flags after start-up ignore the call; the `l` flag shows whether it took.
    // biome-ignore lint/complexity/useRegexLiterals: a literal with the `l` flag is a syntax error where the flag is off
    new RegExp('(?:)', 'l');
    state = 'enabled';
  } catch {
    state = 'unavailable';
  }
}

/** Whether V8 switches runaway matches of eligible patterns to its linear-time engine. */
export function linearTimeFallbackEnabled(): boolean {
  return state === 'enabled';
}

/** The Node host, or null while the fallback is not on (every pattern then runs on RE2). */
export function nodeLinearTimeHost(): LinearTimeHost | null {
  return state === 'enabled' ? { runsInLinearTime } : null;
}

function runsInLinearTime(source: string, flags: string): boolean {
  try {
    new RegExp(source, flags + 'l');
    return true;
  } catch {
    return false;
  }
}
