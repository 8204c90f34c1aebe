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
 * Turns on V8's linear-time fallback for backtracking regexes. Flags apply to RegExps compiled
 * afterwards, so this runs before any user pattern is compiled; `compileRegex` calls it itself.
 */
export function ensureLinearTimeFallback(): void {
  if (state !== 'unset') return;
  try {
    v8.setFlagsFromString(V8_FLAGS);
    // Runtimes that freeze V8 flags after start-up ignore the call; the `l` flag shows whether it took.
    new RegExp('', 'l');
    state = 'enabled';
  } catch {
    state = 'unavailable';
  }
}

/** Whether V8 switches runaway matches of eligible patterns to its linear-time engine. */
export function linearTimeFallbackEnabled(): boolean {
  return state === 'enabled';
}

/** The Node host, or null when the fallback could not be turned on (every pattern then runs on RE2). */
export function nodeLinearTimeHost(): LinearTimeHost | null {
  ensureLinearTimeFallback();
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
