/**
 * Go's predefined template functions (`and or not len index slice print printf println eq ne
 * lt le gt ge html js urlquery call`) with Go's comparison rules and error texts.
 */
import { GoError } from './errors.js';
import type { FuncMap, TemplateFunc } from './func.js';
import { Sprint, Sprintf, Sprintln } from './gofmt.js';
import { compareUtf8, isGoPrintable } from '../go/gostring.js';
import {
  GoInt,
  GoObject,
  InterfaceValue,
  T_ANY,
  T_REFLECT_VALUE,
  T_STRING,
  T_UINT8,
  byteLength,
  goInt,
  intOf,
  isAscii,
  isGoMap,
  isTrue,
  mapGet,
  tagType,
  typeName,
  typeOfValue,
  utf8Bytes,
} from './values.js';

const V = T_REFLECT_VALUE;

type BasicKind = 'invalid' | 'bool' | 'int' | 'uint' | 'float' | 'string';

function basicKind(v: unknown): BasicKind {
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
      return 'float';
    case 'string':
      return 'string';
    case 'object':
      if (v instanceof GoInt) return v.isSigned ? 'int' : 'uint';
  }
  return 'invalid';
}

const errBadComparisonType = 'invalid type for comparison';
const errBadComparison = 'incompatible types for comparison';
const errNoComparison = 'missing argument for comparison';

function isValid(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function isNilValue(v: unknown): boolean {
  return v === undefined || v === null;
}

function comparable(v: unknown): boolean {
  return !(Array.isArray(v) || isGoMap(v) || typeof v === 'function');
}

/** Go's `eq`: true when arg1 equals any of the others. */
export function eq(arg1: unknown, ...arg2: unknown[]): boolean {
  if (arg2.length === 0) throw new GoError(errNoComparison);
  const k1 = basicKind(arg1);
  for (const arg of arg2) {
    const k2 = basicKind(arg);
    let truth = false;
    if (k1 !== k2) {
      if (k1 === 'int' && k2 === 'uint') {
        truth = (arg1 as GoInt).value >= 0n && (arg1 as GoInt).value === (arg as GoInt).value;
      } else if (k1 === 'uint' && k2 === 'int') {
        truth = (arg as GoInt).value >= 0n && (arg1 as GoInt).value === (arg as GoInt).value;
      } else if (isValid(arg1) && isValid(arg)) {
        throw new GoError(`${errBadComparison}: ${typeName(arg1)} and ${typeName(arg)}`);
      }
    } else {
      switch (k1) {
        case 'bool':
        case 'float':
        case 'string':
          truth = arg1 === arg;
          break;
        case 'int':
        case 'uint':
          truth = (arg1 as GoInt).value === (arg as GoInt).value;
          break;
        default: {
          const kind1 = typeOfValue(arg1)?.kind ?? 'invalid';
          const kind2 = typeOfValue(arg)?.kind ?? 'invalid';
          if (kind1 !== kind2 && kind1 !== 'invalid' && kind2 !== 'invalid') {
            throw new GoError(`non-comparable types ${Sprintf('%s', arg1)}: ${typeName(arg1)}, ${typeName(arg)}: ${Sprintf('%v', arg)}`);
          }
          if (isNilValue(arg1) || isNilValue(arg)) {
            truth = isNilValue(arg) === isNilValue(arg1);
          } else {
            if (!comparable(arg)) throw new GoError(`non-comparable type ${Sprintf('%s', arg)}: ${typeName(arg)}`);
            truth = arg1 === arg || (arg1 instanceof GoObject && arg instanceof GoObject && sameObject(arg1, arg));
          }
        }
      }
    }
    if (truth) return true;
  }
  return false;
}

function sameObject(a: GoObject, b: GoObject): boolean {
  if (a.goType !== b.goType) return false;
  const fa = a.fields();
  const fb = b.fields();
  return fa.length === fb.length && fa.every(([name, v], i) => fb[i]![0] === name && fb[i]![1] === v);
}

/** Go's `lt`. */
export function lt(arg1: unknown, arg2: unknown): boolean {
  const k1 = basicKind(arg1);
  if (k1 === 'invalid') throw new GoError(errBadComparisonType);
  const k2 = basicKind(arg2);
  if (k2 === 'invalid') throw new GoError(errBadComparisonType);
  if (k1 !== k2) {
    if (k1 === 'int' && k2 === 'uint') {
      return (arg1 as GoInt).value < 0n || (arg1 as GoInt).value < (arg2 as GoInt).value;
    }
    if (k1 === 'uint' && k2 === 'int') {
      return (arg2 as GoInt).value >= 0n && (arg1 as GoInt).value < (arg2 as GoInt).value;
    }
    throw new GoError(`${errBadComparison}: ${typeName(arg1)} and ${typeName(arg2)}`);
  }
  switch (k1) {
    case 'bool':
      throw new GoError(errBadComparisonType);
    case 'float':
      return (arg1 as number) < (arg2 as number);
    case 'int':
    case 'uint':
      return (arg1 as GoInt).value < (arg2 as GoInt).value;
    default:
      return compareUtf8(arg1 as string, arg2 as string) < 0;
  }
}

function le(arg1: unknown, arg2: unknown): boolean {
  return lt(arg1, arg2) || eq(arg1, arg2);
}

function length(item: unknown): GoInt {
  if (item === null) throw new GoError('len of nil pointer');
  if (item === undefined) throw new GoError('reflect: call of reflect.Value.Type on zero Value');
  if (typeof item === 'string') return intOf(byteLength(item));
  if (Array.isArray(item)) return intOf(item.length);
  if (isGoMap(item)) return intOf(Object.keys(item).length);
  throw new GoError(`len of type ${typeName(item)}`);
}

function indexArg(index: unknown, cap: number): number {
  if (index instanceof InterfaceValue) throw new GoError('cannot index slice/array with type interface {}');
  if (index instanceof GoInt) {
    const x = index.isSigned ? index.value : BigInt.asIntN(64, index.value);
    if (x < 0n || x > BigInt(cap)) throw new GoError(`index out of range: ${x}`);
    return Number(x);
  }
  if (index === undefined || index === null) throw new GoError('cannot index slice/array with nil');
  throw new GoError(`cannot index slice/array with type ${typeName(index)}`);
}

/** Go's `index`: successive indexing of slices, strings (bytes) and maps. */
function index(item: unknown, ...indexes: unknown[]): unknown {
  if (item === undefined || item === null) throw new GoError('index of untyped nil');
  for (const idx of indexes) {
    if (item === null || item === undefined) throw new GoError('index of nil pointer');
    if (typeof item === 'string') {
      const bytes = isAscii(item) ? undefined : utf8Bytes(item);
      const len = bytes ? bytes.length : item.length;
      const x = indexArg(idx, len);
      if (x >= len) throw new GoError('reflect: string index out of range');
      item = goInt(T_UINT8, bytes ? bytes[x]! : item.charCodeAt(x));
    } else if (Array.isArray(item)) {
      const x = indexArg(idx, item.length);
      if (x >= item.length) throw new GoError('reflect: slice index out of range');
      item = item[x];
    } else if (isGoMap(item)) {
      if (idx === undefined || idx === null) throw new GoError('value is nil; should be of type string');
      if (typeof idx !== 'string') throw new GoError(`value has type ${typeName(idx)}; should be string`);
      const found = mapGet(item, idx);
      // A missing key gives the element type's zero value: nil for interface maps.
      item = found !== undefined ? found : typeOfValue(item)?.elem?.kind === 'string' ? '' : null;
    } else {
      throw new GoError(`can't index item of type ${typeName(item)}`);
    }
  }
  return item;
}

/** Go's built-in `slice` (sprig's `slice` replaces it in the reference's function map). */
function slice(item: unknown, ...indexes: unknown[]): unknown {
  if (item === undefined || item === null) throw new GoError('slice of untyped nil');
  if (indexes.length > 3) throw new GoError(`too many slice indexes: ${indexes.length}`);
  let cap: number;
  let len: number;
  let bytes: Uint8Array | undefined;
  if (typeof item === 'string') {
    if (indexes.length === 3) throw new GoError('cannot 3-index slice a string');
    bytes = isAscii(item) ? undefined : utf8Bytes(item);
    len = cap = bytes ? bytes.length : item.length;
  } else if (Array.isArray(item)) {
    len = cap = item.length;
  } else {
    throw new GoError(`can't slice item of type ${typeName(item)}`);
  }
  const idx = [0, len, 0];
  indexes.forEach((x, i) => {
    idx[i] = indexArg(x, cap);
  });
  if (idx[0]! > idx[1]!) throw new GoError(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (indexes.length === 3 && idx[1]! > idx[2]!) throw new GoError(`invalid slice index: ${idx[1]} > ${idx[2]}`);
  if (typeof item === 'string') {
    return bytes ? new TextDecoder().decode(bytes.subarray(idx[0], idx[1])) : item.slice(idx[0], idx[1]);
  }
  const type = typeOfValue(item)!;
  const result = (item as unknown[]).slice(idx[0], idx[1]);
  return type.name === '[]interface {}' ? result : tagType(result, type);
}

/** Go's evalArgs for html/js/urlquery: one string as is, else Sprint with nil as `<no value>`. */
function argsText(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return Sprint(...args.map((a) => (a === undefined || a === null ? '<no value>' : a)));
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '\0': '\uFFFD',
  '"': '&#34;',
  "'": '&#39;',
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
};

/** Go's `template.HTMLEscapeString`. */
export function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) => HTML_ESCAPES[c]!);
}

const JS_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  "'": "\\'",
  '"': '\\"',
  '<': '\\u003C',
  '>': '\\u003E',
  '&': '\\u0026',
  '=': '\\u003D',
};

/** Go's `template.JSEscapeString`. */
export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    const simple = JS_ESCAPES[ch];
    if (simple !== undefined) out += simple;
    else if (code < 0x20) out += '\\u00' + code.toString(16).toUpperCase().padStart(2, '0');
    else if (code < 0x80) out += ch;
    else if (code >= 0xd800 && code < 0xe000) out += '\uFFFD';
    else if (isGoPrintable(code)) out += ch;
    else out += '\\u' + code.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

/** Go's `url.QueryEscape`. */
export function queryEscape(s: string): string {
  let out = '';
  for (const byte of utf8Bytes(s)) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (byte === 0x20) out += '+';
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function fn(params: TemplateFunc['params'], impl: (...args: never[]) => unknown, variadic = false): TemplateFunc {
  return { params, fn: impl, variadic };
}

/** The built-in function map every template starts from. */
export const builtinFuncs: FuncMap = Object.freeze({
  and: { params: [V, V], variadic: true, fn: () => undefined, special: 'and' },
  or: { params: [V, V], variadic: true, fn: () => undefined, special: 'or' },
  call: { params: [V, V], variadic: true, fn: () => undefined, special: 'call' },
  not: fn([V], (v: unknown) => !isTrue(v)),
  len: fn([V], length),
  index: fn([V, V], index, true),
  slice: { params: [V, V], variadic: true, fn: slice as TemplateFunc['fn'], special: 'slice' },
  print: fn([T_ANY], (...args: unknown[]) => Sprint(...args), true),
  println: fn([T_ANY], (...args: unknown[]) => Sprintln(...args), true),
  printf: fn([T_STRING, T_ANY], (format: string, ...args: unknown[]) => Sprintf(format, ...args), true),
  eq: fn([V, V], eq, true),
  ne: fn([V, V], (a: unknown, b: unknown) => !eq(a, b)),
  lt: fn([V, V], lt),
  le: fn([V, V], le),
  gt: fn([V, V], (a: unknown, b: unknown) => !le(a, b)),
  ge: fn([V, V], (a: unknown, b: unknown) => !lt(a, b)),
  html: fn([T_ANY], (...args: unknown[]) => htmlEscape(argsText(args)), true),
  js: fn([T_ANY], (...args: unknown[]) => jsEscape(argsText(args)), true),
  urlquery: fn([T_ANY], (...args: unknown[]) => queryEscape(argsText(args)), true),
});
