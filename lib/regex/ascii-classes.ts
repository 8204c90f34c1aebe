/**
 * RE2's ASCII-only character classes (Perl `\d \s \w` and POSIX `[:name:]`) and its case folding
 * restricted to ASCII. Anything beyond ASCII is asked of the RE2 engine itself (see engine-code-points.ts).
 */
import { CodePointSet } from './code-point-set.js';

const chars = (s: string): number[] => [...s].map((c) => c.codePointAt(0)!);
const span = (from: string, to: string): number[] => [from.codePointAt(0)!, to.codePointAt(0)!];

/** RE2's `\d`, `\s`, `\w`; note `\s` has no `\v`, unlike JavaScript and POSIX `[:space:]`. */
export const PERL_CLASSES: Readonly<Record<'d' | 's' | 'w', CodePointSet>> = {
  d: CodePointSet.fromRanges(span('0', '9')),
  s: CodePointSet.of(...chars('\t\n\f\r ')),
  w: CodePointSet.fromRanges([...span('0', '9'), ...span('A', 'Z'), ...span('a', 'z'), ...span('_', '_')]),
};

export const POSIX_CLASSES: Readonly<Record<string, CodePointSet>> = {
  alnum: CodePointSet.fromRanges([...span('0', '9'), ...span('A', 'Z'), ...span('a', 'z')]),
  alpha: CodePointSet.fromRanges([...span('A', 'Z'), ...span('a', 'z')]),
  ascii: CodePointSet.range(0, 0x7f),
  blank: CodePointSet.of(...chars('\t ')),
  cntrl: CodePointSet.fromRanges([0, 0x1f, 0x7f, 0x7f]),
  digit: CodePointSet.fromRanges(span('0', '9')),
  graph: CodePointSet.fromRanges(span('!', '~')),
  lower: CodePointSet.fromRanges(span('a', 'z')),
  print: CodePointSet.fromRanges(span(' ', '~')),
  punct: CodePointSet.fromRanges([...span('!', '/'), ...span(':', '@'), ...span('[', '`'), ...span('{', '~')]),
  space: CodePointSet.of(...chars('\t\n\v\f\r ')),
  upper: CodePointSet.fromRanges(span('A', 'Z')),
  word: CodePointSet.fromRanges([...span('0', '9'), ...span('A', 'Z'), ...span('a', 'z'), ...span('_', '_')]),
  xdigit: CodePointSet.fromRanges([...span('0', '9'), ...span('A', 'F'), ...span('a', 'f')]),
};

const KELVIN_SIGN = 0x212a;
const LONG_S = 0x17f;

/** True when every member is ASCII, so {@link foldAscii} can close it without the engine's tables. */
export function isAscii(set: CodePointSet): boolean {
  return set.isEmpty || set.ranges[set.ranges.length - 1]! <= 0x7f;
}

/**
 * Simple case-folding closure of an all-ASCII set. Two non-ASCII code points fold onto ASCII
 * letters — KELVIN SIGN onto `k` and LATIN SMALL LETTER LONG S onto `s` — and RE2 includes them.
 */
export function foldAscii(set: CodePointSet): CodePointSet {
  const extra: number[] = [];
  const r = set.ranges;
  for (let i = 0; i < r.length; i += 2) {
    for (let cp = r[i]!; cp <= r[i + 1]!; cp++) {
      if (cp >= 0x41 && cp <= 0x5a) extra.push(cp + 0x20, cp + 0x20);
      else if (cp >= 0x61 && cp <= 0x7a) extra.push(cp - 0x20, cp - 0x20);
      if (cp === 0x4b || cp === 0x6b) extra.push(KELVIN_SIGN, KELVIN_SIGN);
      if (cp === 0x53 || cp === 0x73) extra.push(LONG_S, LONG_S);
    }
  }
  return set.union(CodePointSet.fromRanges(extra));
}
