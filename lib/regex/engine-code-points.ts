/**
 * Asks the RE2 engine which code points a class matches (`\p{Greek}`, `(?i:é)`, `(?i)[\x{100}-\x{17F}]`),
 * so translations use the engine's own Unicode tables and case folding rather than V8's, which may
 * come from another Unicode version.
 *
 * The engine runs `(?:class)+` over one text holding every code point in ascending order; the runs
 * it finds are read back as code point ranges. Each distinct class is asked once per engine.
 */
import { CodePointSet, MAX_CODE_POINT, SCALAR_VALUES } from './code-point-set.js';
import type { Re2Engine } from './engine.js';

/** Every scalar value in ascending order, as UTF-16 (built on first use, about 2 M code units). */
let everyCodePoint: string | undefined;

export function allCodePointsText(): string {
  if (everyCodePoint === undefined) {
    const chunks: string[] = [];
    const chunk: number[] = [];
    for (let cp = 0; cp <= MAX_CODE_POINT; cp++) {
      if (cp === 0xd800) cp = 0xe000;
      chunk.push(cp);
      if (chunk.length === 8192) {
        chunks.push(String.fromCodePoint(...chunk));
        chunk.length = 0;
      }
    }
    chunks.push(String.fromCodePoint(...chunk));
    everyCodePoint = chunks.join('');
  }
  return everyCodePoint;
}

/** The code point at a UTF-16 offset of {@link allCodePointsText} (or just past its end). */
export function codePointAtUtf16Offset(offset: number): number {
  if (offset < 0xd800) return offset;
  if (offset < 0xf800) return offset + 0x800;
  return 0x10000 + (offset - 0xf800) / 2;
}

/** The code point at a UTF-8 byte offset of {@link allCodePointsText} (or just past its end). */
export function codePointAtUtf8Offset(offset: number): number {
  if (offset < 0x80) return offset;
  if (offset < 0x80 + 2 * 0x780) return 0x80 + (offset - 0x80) / 2;
  const threeByteStart = 0x80 + 2 * 0x780;
  const threeByteCount = 0xd800 - 0x800 + 0x2000;
  if (offset < threeByteStart + 3 * threeByteCount) {
    const cp = 0x800 + (offset - threeByteStart) / 3;
    return cp < 0xd800 ? cp : cp + 0x800;
  }
  return 0x10000 + (offset - threeByteStart - 3 * threeByteCount) / 4;
}

/** Turns runs `[start, end)` of offsets into a set of scalar values. */
export function runsToSet(runs: readonly number[], codePointAt: (offset: number) => number): CodePointSet {
  const ranges: number[] = [];
  for (let i = 0; i < runs.length; i += 2) ranges.push(codePointAt(runs[i]!), codePointAt(runs[i + 1]!) - 1);
  // A run across the surrogate gap spans the gap's code points too; the intersection drops them.
  return CodePointSet.fromRanges(ranges).intersect(SCALAR_VALUES);
}

const answers = new WeakMap<Re2Engine, Map<string, CodePointSet>>();

/** The code points `classPattern` (an RE2 pattern matching exactly one code point) accepts. */
export function engineCodePoints(engine: Re2Engine, classPattern: string): CodePointSet {
  let known = answers.get(engine);
  if (known === undefined) answers.set(engine, (known = new Map()));
  let set = known.get(classPattern);
  if (set === undefined) {
    set = engine.codePoints ? engine.codePoints(classPattern) : scanWithSearch(engine, classPattern);
    known.set(classPattern, set);
  }
  return set;
}

function scanWithSearch(engine: Re2Engine, classPattern: string): CodePointSet {
  const text = allCodePointsText();
  const program = engine.compile(`(?:${classPattern})+`);
  const runs: number[] = [];
  for (let m = program.search(text, 0); m !== null; m = program.search(text, m.end)) runs.push(m.index, m.end);
  return runsToSet(runs, codePointAtUtf16Offset);
}
