/**
 * Immutable sets of Unicode code points kept as sorted, disjoint, non-adjacent inclusive ranges.
 * Character classes of both engines are compared and emitted through this one representation.
 */

export const MAX_CODE_POINT = 0x10ffff;
export const SURROGATE_MIN = 0xd800;
export const SURROGATE_MAX = 0xdfff;

export class CodePointSet {
  /** Flat list `[lo0, hi0, lo1, hi1, …]`, sorted, disjoint and never adjacent. */
  readonly ranges: readonly number[];

  private constructor(ranges: readonly number[]) {
    this.ranges = ranges;
  }

  static readonly empty = new CodePointSet([]);
  static readonly all = new CodePointSet([0, MAX_CODE_POINT]);

  static of(...codePoints: number[]): CodePointSet {
    return CodePointSet.fromRanges(codePoints.flatMap((cp) => [cp, cp]));
  }

  static range(lo: number, hi: number): CodePointSet {
    return CodePointSet.fromRanges([lo, hi]);
  }

  /** Normalises any list of inclusive `[lo, hi]` pairs (unsorted, overlapping) into a set. */
  static fromRanges(pairs: readonly number[]): CodePointSet {
    const spans: [number, number][] = [];
    for (let i = 0; i < pairs.length; i += 2) {
      if (pairs[i]! <= pairs[i + 1]!) spans.push([pairs[i]!, pairs[i + 1]!]);
    }
    spans.sort((a, b) => a[0] - b[0]);
    const out: number[] = [];
    for (const [lo, hi] of spans) {
      const last = out.length - 1;
      if (last > 0 && lo <= out[last]! + 1) {
        if (hi > out[last]!) out[last] = hi;
      } else {
        out.push(lo, hi);
      }
    }
    return new CodePointSet(out);
  }

  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  /** The only member when the set has exactly one, otherwise `undefined`. */
  get singleCodePoint(): number | undefined {
    const r = this.ranges;
    return r.length === 2 && r[0] === r[1] ? r[0] : undefined;
  }

  has(cp: number): boolean {
    const r = this.ranges;
    let lo = 0;
    let hi = r.length / 2 - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (cp < r[2 * mid]!) hi = mid - 1;
      else if (cp > r[2 * mid + 1]!) lo = mid + 1;
      else return true;
    }
    return false;
  }

  union(other: CodePointSet): CodePointSet {
    if (other.isEmpty) return this;
    if (this.isEmpty) return other;
    return CodePointSet.fromRanges([...this.ranges, ...other.ranges]);
  }

  /** Everything in `0..U+10FFFF` that is not in this set. */
  complement(): CodePointSet {
    const r = this.ranges;
    const out: number[] = [];
    let next = 0;
    for (let i = 0; i < r.length; i += 2) {
      if (r[i]! > next) out.push(next, r[i]! - 1);
      next = r[i + 1]! + 1;
    }
    if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
    return new CodePointSet(out);
  }

  intersect(other: CodePointSet): CodePointSet {
    return this.complement().union(other.complement()).complement();
  }

  minus(other: CodePointSet): CodePointSet {
    return this.intersect(other.complement());
  }

  /** The members within `lo..hi`. */
  clip(lo: number, hi: number): CodePointSet {
    return this.intersect(CodePointSet.range(lo, hi));
  }

  equals(other: CodePointSet): boolean {
    const a = this.ranges;
    const b = other.ranges;
    return a.length === b.length && a.every((v, i) => v === b[i]);
  }

  /** Number of `[lo, hi]` ranges; a measure of how long the set takes to write down. */
  get rangeCount(): number {
    return this.ranges.length / 2;
  }
}

/** Code points a well-formed UTF-16 string (or valid UTF-8) can contain: everything but surrogates. */
export const SCALAR_VALUES = CodePointSet.fromRanges([0, SURROGATE_MIN - 1, SURROGATE_MAX + 1, MAX_CODE_POINT]);
