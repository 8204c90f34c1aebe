/**
 * sprig v3.3.0 list functions. They accept any slice type, return `[]interface {}` (or the
 * documented typed slice), panic on nil lists (a Go nil-dereference, reported as an execution
 * error) and report other kinds with sprig's messages (`Cannot find first on type string`).
 */
import { compareUtf8 } from '../../go/gostring.js';
import { currentMeter, utf8Length } from '../budget.js';
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import {
  type GoInt,
  T_ANY,
  T_INT,
  T_MAP_STRING,
  T_SLICE_ANY,
  T_SLICE_SLICE_ANY,
  T_SLICE_STRING,
  T_STRING,
  newMap,
  tagType,
  typeOfValue,
} from '../values.js';
import { budgetedSplitN } from './budgeted.js';
import { listKind, strval, toInt64 } from './convert.js';
import { deepEqual, empty } from './sprig-defaults.js';

const A = T_ANY;
const S = T_STRING;

function requireList(list: unknown, action: string): unknown[] {
  const kind = listKind(list);
  if (kind !== 'slice') throw new GoError(`${action} ${kind}`);
  return list as unknown[];
}

const mustPush = (list: unknown, v: unknown): unknown[] => [...requireList(list, 'Cannot push on type'), v];
const mustPrepend = (list: unknown, v: unknown): unknown[] => [v, ...requireList(list, 'Cannot prepend on type')];

function mustChunk(size: GoInt, list: unknown): unknown[][] {
  const items = requireList(list, 'Cannot chunk type');
  const n = Number(size.value);
  const l = items.length;
  if (n <= 0 || (l === 0 && n < 0)) throw new GoError('runtime error: makeslice: len out of range');
  const cs = Math.floor((l - 1) / n) + 1;
  const out: unknown[][] = [];
  for (let i = 0; i < cs; i++) {
    let clen = n;
    if (i === cs - 1) {
      clen = Math.floor(l % n);
      if (clen === 0) clen = n;
    }
    const chunk: unknown[] = [];
    for (let j = 0; j < clen; j++) {
      const ix = i * n + j;
      if (ix >= l) throw new GoError(`reflect: slice index out of range`);
      chunk.push(items[ix]);
    }
    out.push(chunk);
  }
  return tagType(out, T_SLICE_SLICE_ANY);
}

const mustLast = (list: unknown): unknown => {
  const items = requireList(list, 'Cannot find last on type');
  return items.length === 0 ? null : items[items.length - 1];
};
const mustFirst = (list: unknown): unknown => {
  const items = requireList(list, 'Cannot find first on type');
  return items.length === 0 ? null : items[0];
};
const mustRest = (list: unknown): unknown => {
  const items = requireList(list, 'Cannot find rest on type');
  return items.slice(1);
};
const mustInitial = (list: unknown): unknown => {
  const items = requireList(list, 'Cannot find initial on type');
  return items.slice(0, Math.max(items.length - 1, 0));
};
const mustReverse = (list: unknown): unknown[] => [...requireList(list, 'Cannot find reverse on type')].reverse();
const mustCompact = (list: unknown): unknown[] => requireList(list, 'Cannot compact on type').filter((x) => !empty(x));

// uniq is quadratic and without multiplies its list by its arguments, so their comparisons are
// charged as steps of the render.

function mustUniq(list: unknown): unknown[] {
  const meter = currentMeter();
  const out: unknown[] = [];
  for (const item of requireList(list, 'Cannot find uniq on type')) {
    meter.spend(out.length);
    if (!out.some((x) => deepEqual(item, x))) out.push(item);
  }
  return out;
}

function mustWithout(list: unknown, ...omit: unknown[]): unknown[] {
  const items = requireList(list, 'Cannot find without on type');
  currentMeter().spend(items.length * omit.length);
  return items.filter((item) => !omit.some((o) => deepEqual(item, o)));
}

function mustHas(needle: unknown, haystack: unknown): boolean {
  if (haystack === null || haystack === undefined) return false;
  return requireList(haystack, 'Cannot find has on type').some((item) => deepEqual(needle, item));
}

const toInt = (v: unknown): number => Number(toInt64(v));

function mustSlice(list: unknown, ...indices: unknown[]): unknown {
  const kind = listKind(list);
  if (kind !== 'slice') throw new GoError(`list should be type of slice or array but ${kind}`);
  const items = list as unknown[];
  if (items.length === 0) return null;
  const start = indices.length > 0 ? toInt(indices[0]) : 0;
  const end = indices.length < 2 ? items.length : toInt(indices[1]);
  if (start < 0 || end > items.length || start > end) {
    throw new GoError('reflect.Value.Slice: slice index out of bounds');
  }
  const type = typeOfValue(list)!;
  const result = items.slice(start, end);
  return type === T_SLICE_ANY ? result : tagType(result, type);
}

function concat(...lists: unknown[]): unknown {
  let length = 0;
  for (const list of lists) {
    const kind = listKind(list);
    if (kind !== 'slice') throw new GoError(`Cannot concat type ${kind} as list`);
    length += (list as unknown[]).length;
  }
  currentMeter().checkLength(length);
  const out: unknown[] = [];
  for (const list of lists) {
    for (const item of list as unknown[]) out.push(item);
  }
  return out;
}

/** strings.Join of sprig's strslice; the separators are what can make it large, so the size is checked first. */
function join(sep: string, v: unknown): string {
  const items = strslice(v);
  const meter = currentMeter();
  if (sep !== '' && meter.mayExceedBytes(items.reduce((n, s) => n + s.length, 0) + (items.length - 1) * sep.length)) {
    meter.checkBytes(items.reduce((n, s) => n + utf8Length(s), 0) + Math.max(items.length - 1, 0) * utf8Length(sep));
  }
  return items.join(sep);
}

/** sprig's strslice (toStrings): nil elements are dropped, others go through strval. */
export function strslice(v: unknown): string[] {
  if (Array.isArray(v)) {
    if (typeOfValue(v) === T_SLICE_STRING) return v as string[];
    return tagType(v.filter((x) => x !== null && x !== undefined).map(strval), T_SLICE_STRING);
  }
  if (v === null || v === undefined) return tagType([], T_SLICE_STRING);
  return tagType([strval(v)], T_SLICE_STRING);
}

function sortAlpha(list: unknown): string[] {
  if (Array.isArray(list)) {
    const items = strslice(list);
    // Go sorts a []string argument in place; copies are sorted for the other slice types.
    return items.sort(compareUtf8);
  }
  return tagType([strval(list)], T_SLICE_STRING);
}

function toStringMap(parts: readonly string[]): Record<string, unknown> {
  const map = newMap();
  parts.forEach((v, i) => {
    map['_' + i] = v;
  });
  return tagType(map, T_MAP_STRING);
}

/** sprig's list and string-slice functions. */
export const sprigListFuncs: FuncMap = {
  list: defineFunc([A], (...v: unknown[]) => v, true),
  tuple: defineFunc([A], (...v: unknown[]) => v, true),
  append: defineFunc([A, A], mustPush),
  push: defineFunc([A, A], mustPush),
  mustAppend: defineFunc([A, A], mustPush),
  mustPush: defineFunc([A, A], mustPush),
  prepend: defineFunc([A, A], mustPrepend),
  mustPrepend: defineFunc([A, A], mustPrepend),
  first: defineFunc([A], mustFirst),
  mustFirst: defineFunc([A], mustFirst),
  rest: defineFunc([A], mustRest),
  mustRest: defineFunc([A], mustRest),
  last: defineFunc([A], mustLast),
  mustLast: defineFunc([A], mustLast),
  initial: defineFunc([A], mustInitial),
  mustInitial: defineFunc([A], mustInitial),
  reverse: defineFunc([A], mustReverse),
  mustReverse: defineFunc([A], mustReverse),
  uniq: defineFunc([A], mustUniq),
  mustUniq: defineFunc([A], mustUniq),
  without: defineFunc([A, A], mustWithout, true),
  mustWithout: defineFunc([A, A], mustWithout, true),
  has: defineFunc([A, A], mustHas),
  mustHas: defineFunc([A, A], mustHas),
  slice: defineFunc([A, A], mustSlice, true),
  mustSlice: defineFunc([A, A], mustSlice, true),
  concat: defineFunc([A], concat, true),
  chunk: defineFunc([T_INT, A], mustChunk),
  mustChunk: defineFunc([T_INT, A], mustChunk),
  compact: defineFunc([A], mustCompact),
  mustCompact: defineFunc([A], mustCompact),
  split: defineFunc([S, S], (sep: string, orig: string) => toStringMap(budgetedSplitN(orig, sep, -1))),
  splitn: defineFunc([S, T_INT, S], (sep: string, n: GoInt, orig: string) => toStringMap(budgetedSplitN(orig, sep, Number(n.value)))),
  splitList: defineFunc([S, S], (sep: string, orig: string) => tagType(budgetedSplitN(orig, sep, -1), T_SLICE_STRING)),
  toStrings: defineFunc([A], strslice),
  join: defineFunc([S, A], join),
  sortAlpha: defineFunc([A], sortAlpha),
};
