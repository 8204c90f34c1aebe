/**
 * The Go string helpers that can build a result far larger than their input (`strings.Repeat`,
 * `strings.Replace` with a longer replacement, `strings.Split` into many pieces), wrapped so the
 * size of the result is checked against the render's execution budget before it is built.
 */
import { currentMeter, utf8Length } from '../budget.js';
import { goRepeat, goReplace, goSplitN } from './gostrings.js';

/** Go's strings.Repeat; Go's own panics (a negative count) come first. */
export function budgetedRepeat(s: string, count: number): string {
  if (count > 0 && s !== '') currentMeter().checkBytes(utf8Length(s) * count);
  return goRepeat(s, count);
}

/** Go's strings.Replace (see goReplace). */
export function budgetedReplace(s: string, old: string, replacement: string, n: number): string {
  checkReplacedSize(s, old, replacement, n);
  return goReplace(s, old, replacement, n);
}

/** Checks the size `goReplace(s, old, replacement, n)` would have, without building it. */
export function checkReplacedSize(s: string, old: string, replacement: string, n: number): void {
  const meter = currentMeter();
  const grows = replacement.length > old.length && old !== replacement && n !== 0;
  // At most one replacement per code unit and one more at the end: a quick bound first.
  if (grows && meter.mayExceedBytes(s.length + (s.length + 1) * (replacement.length - old.length))) {
    let replacements = old === '' ? runeCount(s) + 1 : occurrences(s, old);
    if (n >= 0 && n < replacements) replacements = n;
    meter.checkBytes(utf8Length(s) + replacements * (utf8Length(replacement) - utf8Length(old)));
  }
}

/**
 * Go's strings.SplitN (see goSplitN). At most one piece more than the budget allows is built:
 * asking for that many pieces gives the same result whenever the whole result is within budget.
 */
export function budgetedSplitN(s: string, sep: string, n: number): string[] {
  const meter = currentMeter();
  const max = meter.budget.maxListLength;
  // An empty separator splits into runes, all of them built at once.
  if (sep === '' && s.length > max) meter.checkLength(runeCount(s));
  const parts = goSplitN(s, sep, n < 0 || n > max ? max + 1 : n);
  if (parts.length > max) meter.checkLength(undefined);
  return parts;
}

/** Non-overlapping occurrences of a non-empty `old` in `s`. */
function occurrences(s: string, old: string): number {
  let count = 0;
  for (let i = s.indexOf(old); i >= 0; i = s.indexOf(old, i + old.length)) count++;
  return count;
}

function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i + 1 < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}
