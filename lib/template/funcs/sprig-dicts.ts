/**
 * sprig v3.3.0 dictionary functions over `map[string]interface {}`. `set`, `unset` and the
 * merges mutate their first argument, as in Go; merges follow mergo's rules (nested maps merge,
 * non-empty destination values win unless overwriting).
 */
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { T_ANY, T_MAP_ANY, T_SLICE_STRING, T_STRING, isGoMap, mapGet, mapHas, newMap, tagType, typeName } from '../values.js';
import { strval } from './convert.js';
import { empty } from './sprig-defaults.js';

type GoMap = Record<string, unknown>;

const A = T_ANY;
const S = T_STRING;
const M = T_MAP_ANY;

/** A nil map reads as empty; writing to it panics as in Go. */
function writable(d: GoMap | null): GoMap {
  if (d === null) throw new GoError('assignment to entry in nil map');
  return d;
}

const entries = (d: GoMap | null): GoMap => d ?? newMap();

function dict(...v: unknown[]): GoMap {
  const out = newMap();
  for (let i = 0; i < v.length; i += 2) {
    const key = strval(v[i]);
    out[key] = i + 1 >= v.length ? '' : v[i + 1];
  }
  return out;
}

/** mergo's deep merge of one source map into a destination map. */
function mergeInto(dst: GoMap, src: GoMap, overwrite: boolean): void {
  for (const key of Object.keys(src)) {
    const sv = src[key];
    const present = mapHas(dst, key);
    const dv = present ? dst[key] : undefined;
    if (sv === null || sv === undefined) {
      if (overwrite) dst[key] = null;
      continue;
    }
    const dstFilled = present && !empty(dv);
    if (isGoMap(sv)) {
      if (isGoMap(dv)) mergeInto(dv, sv, overwrite);
      if (dstFilled && isGoMap(dv)) continue;
    } else if (Array.isArray(sv) && dstFilled) {
      if (overwrite) dst[key] = sv;
      continue;
    }
    if (overwrite || !present || empty(dv)) dst[key] = sv;
  }
}

function merge(dst: GoMap | null, srcs: (GoMap | null)[], overwrite: boolean): GoMap {
  const target = dst ?? newMap();
  for (const src of srcs) if (src !== null) mergeInto(target, src, overwrite);
  return target;
}

/** How a failed Go type assertion names the dynamic type. */
function dynamicType(v: unknown): string {
  return v === null || v === undefined ? 'nil' : typeName(v);
}

function dig(...ps: unknown[]): unknown {
  if (ps.length < 3) throw new GoError('dig needs at least three arguments');
  const dictValue = ps[ps.length - 1];
  const def = ps[ps.length - 2];
  const keys = ps.slice(0, -2).map((k) => {
    if (typeof k !== 'string') throw new GoError(`interface conversion: interface {} is ${dynamicType(k)}, not string`);
    return k;
  });
  let current = dictValue;
  for (let i = 0; i < keys.length; i++) {
    if (!isGoMap(current) || typeName(current) !== 'map[string]interface {}') {
      throw new GoError(`interface conversion: interface {} is ${dynamicType(current)}, not map[string]interface {}`);
    }
    if (!mapHas(current, keys[i]!)) return def;
    current = current[keys[i]!];
  }
  return current;
}

/** sprig's dictionary functions. */
export const sprigDictFuncs: FuncMap = {
  dict: defineFunc([A], dict, true),
  get: defineFunc([M, S], (d: GoMap | null, key: string) => {
    const m = entries(d);
    return mapHas(m, key) ? m[key] : '';
  }),
  set: defineFunc([M, S, A], (d: GoMap | null, key: string, value: unknown) => {
    writable(d)[key] = value;
    return d;
  }),
  unset: defineFunc([M, S], (d: GoMap | null, key: string) => {
    if (d !== null) delete d[key];
    return d;
  }),
  hasKey: defineFunc([M, S], (d: GoMap | null, key: string) => mapHas(entries(d), key)),
  pluck: defineFunc(
    [S, M],
    (key: string, ...ds: (GoMap | null)[]) => ds.filter((d) => d !== null && mapHas(d, key)).map((d) => mapGet(d!, key)),
    true,
  ),
  keys: defineFunc([M], (...ds: (GoMap | null)[]) => tagStrings(ds.flatMap((d) => Object.keys(entries(d)))), true),
  pick: defineFunc(
    [M, S],
    (d: GoMap | null, ...keys: string[]) => {
      const out = newMap();
      const m = entries(d);
      for (const k of keys) if (mapHas(m, k)) out[k] = m[k];
      return out;
    },
    true,
  ),
  omit: defineFunc(
    [M, S],
    (d: GoMap | null, ...keys: string[]) => {
      const out = newMap();
      const m = entries(d);
      for (const k of Object.keys(m)) if (!keys.includes(k)) out[k] = m[k];
      return out;
    },
    true,
  ),
  merge: defineFunc([M, M], (dst: GoMap | null, ...srcs: (GoMap | null)[]) => merge(dst, srcs, false), true),
  mergeOverwrite: defineFunc([M, M], (dst: GoMap | null, ...srcs: (GoMap | null)[]) => merge(dst, srcs, true), true),
  mustMerge: defineFunc([M, M], (dst: GoMap | null, ...srcs: (GoMap | null)[]) => merge(dst, srcs, false), true),
  mustMergeOverwrite: defineFunc([M, M], (dst: GoMap | null, ...srcs: (GoMap | null)[]) => merge(dst, srcs, true), true),
  values: defineFunc([M], (d: GoMap | null) => Object.values(entries(d))),
  dig: defineFunc([A], dig, true),
};

function tagStrings(items: string[]): string[] {
  return tagType(items, T_SLICE_STRING);
}
