/**
 * Writes a parsed RE2 pattern as JavaScript RegExp source without the `u` and `i` flags.
 *
 * Those two flags (and lookarounds, and counted repetitions above 16) keep V8 from switching a
 * runaway match to its linear-time engine, so the translation avoids them: code points outside
 * the BMP become surrogate pairs, case folding is spelled out in character classes, and counted
 * repetitions can be unrolled.
 *
 * Two variants are written. The `bmp` one is for inputs without surrogates, where a class may
 * freely include the surrogate range and stay as short as `[^"]`. The `full` one is for any
 * well-formed input: every class matches a whole code point, one or two code units.
 */
import type { RegexNode } from './ast.js';
import { CodePointSet, SCALAR_VALUES, SURROGATE_MAX, SURROGATE_MIN } from './code-point-set.js';
import { containsCapture } from './exactness.js';

export type Variant = 'bmp' | 'full';

export interface EmitOptions {
  readonly variant: Variant;
  /** Sets for `engineChars` nodes, by query. */
  readonly engineSets: ReadonlyMap<string, CodePointSet>;
  /** Write `x{2,4}` as `xx(?:x(?:x)?)?` when `x` has no capture group. */
  readonly unrollCounted: boolean;
}

/** How a fragment may be combined: an atom takes a quantifier as is, a sequence needs `(?:…)` first. */
type Shape = 'atom' | 'sequence' | 'alternation';

interface Fragment {
  readonly src: string;
  readonly shape: Shape;
}

const BMP_MAX = 0xffff;
const SURROGATES = CodePointSet.range(SURROGATE_MIN, SURROGATE_MAX);

/** JavaScript RegExp source (no flags) for `root`. */
export function emitV8(root: RegexNode, options: EmitOptions): string {
  return emit(root, options).src;
}

function emit(node: RegexNode, o: EmitOptions): Fragment {
  switch (node.kind) {
    case 'empty':
      return { src: '(?:)', shape: 'atom' };
    case 'chars':
      return emitSet(node.set, o.variant);
    case 'engineChars': {
      const set = o.engineSets.get(node.query);
      if (set === undefined) throw new Error(`no code points resolved for ${node.query}`);
      return emitSet(set, o.variant);
    }
    case 'anyByte':
      throw new Error('\\C has no JavaScript translation');
    case 'assert':
      return { src: ASSERTIONS[node.assertion], shape: 'sequence' };
    case 'capture':
      return { src: `(${emit(node.body, o).src})`, shape: 'atom' };
    case 'concat': {
      const parts = node.items.map((n) => emit(n, o));
      return { src: parts.map((p) => (p.shape === 'alternation' ? group(p.src) : p.src)).join(''), shape: 'sequence' };
    }
    case 'alternate':
      return { src: node.items.map((n) => emit(n, o).src).join('|'), shape: 'alternation' };
    case 'repeat':
      return emitRepeat(node, o);
  }
}

const ASSERTIONS = {
  beginText: '^',
  endText: '$',
  beginLine: '^',
  endLine: '$',
  wordBoundary: '\\b',
  notWordBoundary: '\\B',
} as const;

const group = (src: string): string => `(?:${src})`;
const asAtom = (f: Fragment): string => (f.shape === 'atom' ? f.src : group(f.src));

function emitRepeat(node: Extract<RegexNode, { kind: 'repeat' }>, o: EmitOptions): Fragment {
  const body = asAtom(emit(node.body, o));
  const lazy = node.greedy ? '' : '?';
  const { min, max } = node;
  const countedAboveOne = min > 1 || (max !== Infinity && max > 1);
  if (o.unrollCounted && countedAboveOne && !containsCapture(node.body)) {
    let required = body.repeat(min);
    let optional = '';
    if (max === Infinity) {
      required = body.repeat(Math.max(min - 1, 0)) + body + (min === 0 ? '*' : '+') + lazy;
    } else {
      for (let k = 0; k < max - min; k++) optional = `(?:${body}${optional})?${lazy}`;
    }
    return { src: required + optional, shape: 'sequence' };
  }
  let quantifier: string;
  if (min === 0 && max === Infinity) quantifier = '*';
  else if (min === 1 && max === Infinity) quantifier = '+';
  else if (min === 0 && max === 1) quantifier = '?';
  else if (max === Infinity) quantifier = `{${min},}`;
  else if (min === max) quantifier = `{${min}}`;
  else quantifier = `{${min},${max}}`;
  // A quantified atom cannot take a second quantifier (`a*{2}` is a syntax error), so it is not an atom.
  return { src: body + quantifier + lazy, shape: 'sequence' };
}

function emitSet(set: CodePointSet, variant: Variant): Fragment {
  const scalars = set.intersect(SCALAR_VALUES);
  const bmp = scalars.clip(0, BMP_MAX);
  const astral = scalars.clip(BMP_MAX + 1, 0x10ffff);
  if (variant === 'bmp') {
    // No surrogate can occur in the input, so the class may include them if that makes it shorter.
    const withSurrogates = bmp.union(SURROGATES);
    return { src: bmpClass(shorter(bmp, withSurrogates)), shape: 'atom' };
  }
  const alternatives: string[] = [];
  if (!bmp.isEmpty) alternatives.push(bmpClass(bmp));
  alternatives.push(...surrogatePairs(astral));
  if (alternatives.length === 0) return { src: '[]', shape: 'atom' };
  if (alternatives.length === 1 && bmp.isEmpty === false) return { src: alternatives[0]!, shape: 'atom' };
  return { src: group(alternatives.join('|')), shape: 'atom' };
}

function shorter(a: CodePointSet, b: CodePointSet): CodePointSet {
  return classCost(b) < classCost(a) ? b : a;
}

function classCost(set: CodePointSet): number {
  return Math.min(set.rangeCount, set.complement().clip(0, BMP_MAX).rangeCount);
}

/** A class (or single character) for a set of BMP code units. */
function bmpClass(set: CodePointSet): string {
  const single = set.singleCodePoint;
  if (single !== undefined) return literalUnit(single);
  const complement = set.complement().clip(0, BMP_MAX);
  if (complement.isEmpty) return '[^]';
  if (set.isEmpty) return '[]';
  return complement.rangeCount < set.rangeCount ? `[^${classBody(complement)}]` : `[${classBody(set)}]`;
}

function classBody(set: CodePointSet): string {
  const r = set.ranges;
  let out = '';
  for (let i = 0; i < r.length; i += 2) {
    const lo = r[i]!;
    const hi = r[i + 1]!;
    out += classUnit(lo);
    if (hi === lo + 1) out += classUnit(hi);
    else if (hi > lo) out += '-' + classUnit(hi);
  }
  return out;
}

/** Alternatives like `\uD83D[\uDE00-\uDE4F]` covering the astral code points of `set`. */
function surrogatePairs(set: CodePointSet): string[] {
  // Runs of high surrogates, each with the low surrogates allowed after it; neighbouring
  // pieces with the same single high surrogate are merged into one alternative.
  const pieces: { highs: [number, number]; lows: number[] }[] = [];
  const add = (highs: [number, number], lowFrom: number, lowTo: number): void => {
    const last = pieces[pieces.length - 1];
    if (last !== undefined && highs[0] === highs[1] && last.highs[0] === highs[0] && last.highs[1] === highs[1]) {
      last.lows.push(lowFrom, lowTo);
    } else {
      pieces.push({ highs, lows: [lowFrom, lowTo] });
    }
  };
  const r = set.ranges;
  for (let i = 0; i < r.length; i += 2) {
    const [h1, l1] = toPair(r[i]!);
    const [h2, l2] = toPair(r[i + 1]!);
    if (h1 === h2) {
      add([h1, h1], l1, l2);
      continue;
    }
    // A partial first and last high surrogate, and every high surrogate in between in full.
    const fullFrom = l1 === 0xdc00 ? h1 : h1 + 1;
    const fullTo = l2 === 0xdfff ? h2 : h2 - 1;
    if (fullFrom !== h1) add([h1, h1], l1, 0xdfff);
    if (fullFrom <= fullTo) add([fullFrom, fullTo], 0xdc00, 0xdfff);
    if (fullTo !== h2) add([h2, h2], 0xdc00, l2);
  }
  return pieces.map(({ highs, lows }) => bmpClass(CodePointSet.range(...highs)) + bmpClass(CodePointSet.fromRanges(lows)));
}

function toPair(cp: number): [number, number] {
  const offset = cp - 0x10000;
  return [0xd800 + (offset >> 10), 0xdc00 + (offset & 0x3ff)];
}

// Characters written as themselves; everything else is escaped as \xHH or \uHHHH.
const PLAIN_OUTSIDE_CLASS = /^[ !"#%&',\-0-9:;<=>@A-Z_`a-z~]$/;
const PLAIN_IN_CLASS = /^[ !"#$%&'()*+,./0-9:;<=>?@A-Z_`a-z{|}~]$/;

function literalUnit(unit: number): string {
  const ch = String.fromCharCode(unit);
  return PLAIN_OUTSIDE_CLASS.test(ch) ? ch : hexEscape(unit);
}

function classUnit(unit: number): string {
  const ch = String.fromCharCode(unit);
  return PLAIN_IN_CLASS.test(ch) ? ch : hexEscape(unit);
}

function hexEscape(unit: number): string {
  const hex = unit.toString(16).toUpperCase();
  return unit <= 0xff ? `\\x${hex.padStart(2, '0')}` : `\\u${hex.padStart(4, '0')}`;
}
