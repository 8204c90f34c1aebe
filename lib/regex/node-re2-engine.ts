/** {@link Re2Engine} over the native `re2` package. */
import RE2 from 're2';
import { allCodePointsText, codePointAtUtf8Offset, runsToSet } from './engine-code-points.js';
import type { CodePointSet } from './code-point-set.js';
import type { Re2Engine, Re2Program } from './engine.js';
import { type RegexMatch, RegexSyntaxError } from './types.js';

type IndexedMatch = RegExpExecArray & { indices: RegExpIndicesArray };

export const nodeRe2Engine: Re2Engine = {
  compile(pattern: string): Re2Program {
    let re: RE2;
    try {
      // `g` so that `lastIndex` picks the search start; `d` for group offsets.
      re = new RE2(pattern, 'gdu');
    } catch (error) {
      throw new RegexSyntaxError((error as Error).message);
    }
    return mayMatchInsideCharacters(pattern) ? new ByteSearch(re) : new StringSearch(re);
  },

  codePoints(classPattern: string): CodePointSet {
    // A Buffer spares the package converting 2 M code units to UTF-8 for every class asked.
    everyCodePointUtf8 ??= Buffer.from(allCodePointsText(), 'utf8');
    const re = new RE2(`(?:${classPattern})+`, 'gu');
    const runs: number[] = [];
    for (let m = re.exec(everyCodePointUtf8); m !== null; m = re.exec(everyCodePointUtf8)) runs.push(m.index, m.index + m[0].length);
    return runsToSet(runs, codePointAtUtf8Offset);
  },
};

let everyCodePointUtf8: Buffer | undefined;

/**
 * RE2 matches UTF-8 bytes, and `\B` (both sides not ASCII word characters) also holds between the
 * bytes of one multi-byte character, so RE2 reports empty matches inside `é` that Go's `regexp`,
 * which steps by character, never finds. Only `\B` can do that; patterns that might contain it
 * are searched on bytes, where such matches can be recognised and skipped.
 */
function mayMatchInsideCharacters(pattern: string): boolean {
  return pattern.includes('\\B');
}

class StringSearch implements Re2Program {
  constructor(private readonly re: RE2) {}

  search(input: string, from: number): RegexMatch | null {
    this.re.lastIndex = from;
    const m = this.re.exec(input) as IndexedMatch | null;
    if (m === null) return null;
    return {
      index: m.index,
      end: m.index + m[0].length,
      groups: Array.from(m),
      indices: Array.from(m.indices, (pair) => (pair === undefined ? undefined : ([pair[0], pair[1]] as const))),
    };
  }
}

class ByteSearch implements Re2Program {
  private lastInput: string | undefined;
  private bytes = Buffer.alloc(0);
  /** UTF-16 offset at each byte offset that starts a character (or ends the text); -1 inside one. */
  private utf16At = new Int32Array(1);
  /** Byte offset of each UTF-16 offset that starts a character (or ends the text). */
  private byteAt = new Int32Array(1);

  constructor(private readonly re: RE2) {}

  search(input: string, from: number): RegexMatch | null {
    this.prepare(input);
    let byteFrom = this.byteAt[from]!;
    for (;;) {
      this.re.lastIndex = byteFrom;
      const m = this.re.exec(this.bytes) as unknown as (IndexedMatch & { index: number }) | null;
      if (m === null) return null;
      if (this.utf16At[m.index]! < 0) {
        byteFrom = m.index + 1;
        while (this.utf16At[byteFrom]! < 0) byteFrom++;
        continue;
      }
      const indices = Array.from(m.indices, (pair) =>
        pair === undefined ? undefined : ([this.utf16At[pair[0]]!, this.utf16At[pair[1]]!] as const),
      );
      return {
        index: indices[0]![0],
        end: indices[0]![1],
        groups: indices.map((pair) => (pair === undefined ? undefined : input.slice(pair[0], pair[1]))),
        indices,
      };
    }
  }

  private prepare(input: string): void {
    if (input === this.lastInput) return;
    this.lastInput = input;
    this.bytes = Buffer.from(input, 'utf8');
    this.utf16At = new Int32Array(this.bytes.length + 1).fill(-1);
    this.byteAt = new Int32Array(input.length + 1);
    let byte = 0;
    for (let unit = 0; unit < input.length; ) {
      this.utf16At[byte] = unit;
      this.byteAt[unit] = byte;
      const cp = input.codePointAt(unit)!;
      byte += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      unit += cp > 0xffff ? 2 : 1;
    }
    this.utf16At[byte] = input.length;
    this.byteAt[input.length] = byte;
  }
}
