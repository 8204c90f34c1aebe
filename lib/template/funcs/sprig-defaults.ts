/**
 * sprig v3.3.0 defaults, JSON, reflection and flow-control functions (`default`, `empty`,
 * `coalesce`, `ternary`, `toJson`…, `typeOf`, `kindIs`, `deepEqual`, `fail`).
 */
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { GoInt, GoObject, T_ANY, T_BOOL, T_STRING, isGoMap, kindOf, mapHas, newMap, tagType, typeName, typeOfValue } from '../values.js';
import { marshalJson, unmarshalJson } from './json.js';

const A = T_ANY;
const S = T_STRING;

/** sprig's empty: the zero value of its type (nil, "", 0, false, empty slice/map). */
export function empty(given: unknown): boolean {
  if (given === null || given === undefined) return true;
  switch (typeof given) {
    case 'string':
      return given.length === 0;
    case 'boolean':
      return !given;
    case 'number':
      return given === 0;
    case 'function':
      return false;
  }
  if (given instanceof GoInt) return given.value === 0n;
  if (given instanceof GoObject) return false;
  if (Array.isArray(given)) return given.length === 0;
  if (isGoMap(given)) return Object.keys(given).length === 0;
  return false;
}

/** Go's reflect.DeepEqual over the value model. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) {
    return (a === null || a === undefined) && (b === null || b === undefined);
  }
  if (typeName(a) !== typeName(b)) return false;
  if (a instanceof GoInt) return a.value === (b as GoInt).value;
  if (typeof a === 'function') return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  if (a instanceof GoObject) {
    const fa = a.fields();
    const fb = (b as GoObject).fields();
    return a === b || (fa.length === fb.length && fa.every(([, v], i) => deepEqual(v, fb[i]![1])));
  }
  if (isGoMap(a)) {
    const bb = b as Record<string, unknown>;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(bb).length) return false;
    return keys.every((k) => mapHas(bb, k) && deepEqual(a[k], bb[k]));
  }
  return a === b;
}

/** copystructure.Copy: maps and slices are copied deeply, keeping their Go types. */
export function deepCopy(v: unknown): unknown {
  if (Array.isArray(v)) {
    const copy = v.map(deepCopy);
    const type = typeOfValue(v)!;
    return type.name === '[]interface {}' ? copy : tagType(copy, type);
  }
  if (isGoMap(v)) {
    const copy = newMap();
    for (const k of Object.keys(v)) copy[k] = deepCopy(v[k]);
    const type = typeOfValue(v)!;
    return type.name === 'map[string]interface {}' ? copy : tagType(copy, type);
  }
  return v;
}

function dfault(d: unknown, ...given: unknown[]): unknown {
  if (given.length === 0 || empty(given[0])) return d;
  return given[0];
}

function tryJson(v: unknown, escapeHTML: boolean, indent = ''): string {
  try {
    return marshalJson(v, escapeHTML, indent);
  } catch {
    return '';
  }
}

/** sprig's defaults, JSON, reflection and flow-control functions. */
export const sprigDefaultFuncs: FuncMap = {
  default: defineFunc([A, A], dfault, true),
  empty: defineFunc([A], empty),
  coalesce: defineFunc([A], (...v: unknown[]) => v.find((x) => !empty(x)) ?? null, true),
  all: defineFunc([A], (...v: unknown[]) => v.every((x) => !empty(x)), true),
  any: defineFunc([A], (...v: unknown[]) => v.some((x) => !empty(x)), true),
  fromJson: defineFunc([S], (v: string) => {
    try {
      return unmarshalJson(v);
    } catch {
      return null;
    }
  }),
  mustFromJson: defineFunc([S], unmarshalJson),
  toJson: defineFunc([A], (v: unknown) => tryJson(v, true)),
  mustToJson: defineFunc([A], (v: unknown) => marshalJson(v, true)),
  toPrettyJson: defineFunc([A], (v: unknown) => tryJson(v, true, '  ')),
  mustToPrettyJson: defineFunc([A], (v: unknown) => marshalJson(v, true, '  ')),
  toRawJson: defineFunc([A], (v: unknown) => marshalJson(v, false)),
  mustToRawJson: defineFunc([A], (v: unknown) => marshalJson(v, false)),
  ternary: defineFunc([A, A, T_BOOL], (vt: unknown, vf: unknown, v: boolean) => (v ? vt : vf)),
  deepCopy: defineFunc([A], deepCopy),
  mustDeepCopy: defineFunc([A], deepCopy),
  typeOf: defineFunc([A], typeName),
  typeIs: defineFunc([S, A], (target: string, src: unknown) => target === typeName(src)),
  typeIsLike: defineFunc([S, A], (target: string, src: unknown) => {
    const t = typeName(src);
    return target === t || '*' + target === t;
  }),
  kindOf: defineFunc([A], kindOf),
  kindIs: defineFunc([S, A], (target: string, src: unknown) => target === kindOf(src)),
  deepEqual: defineFunc([A, A], deepEqual),
  fail: defineFunc([S], (msg: string) => {
    throw new GoError(msg);
  }),
};
