/**
 * The template engine's model of Go values over JavaScript values.
 *
 * | Go                         | JavaScript                                                   |
 * | -------------------------- | ------------------------------------------------------------ |
 * | string, bool, float64      | string, boolean, number                                      |
 * | int, int64, uint8, …       | `GoInt` (a typed bigint)                                      |
 * | []interface{} / []string … | arrays (element type tagged with `tagType`, default `[]interface {}`) |
 * | map[string]interface{} …   | plain objects (tagged the same way, default `map[string]interface {}`) |
 * | nil interface              | `null`                                                       |
 * | invalid reflect.Value      | `undefined` (a missing map key; prints `<no value>`)          |
 * | time.Time, structs, …      | subclasses of `GoObject`                                      |
 * | func                       | JS functions (only reachable through data, for `call`)        |
 *
 * Data handed to `Template.execute` uses the same model, so JSON-like data works directly:
 * numbers are float64 as in Go's `encoding/json`.
 */
import { compareUtf8 } from '../go/gostring.js';

/** Go reflect kinds as `reflect.Kind.String()` spells them. */
export type Kind =
  | 'invalid'
  | 'bool'
  | 'int'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'float64'
  | 'string'
  | 'slice'
  | 'map'
  | 'struct'
  | 'ptr'
  | 'interface'
  | 'func';

/** A Go type: its `%T` spelling, its kind and, for containers, the element/key types. */
export interface GoType {
  readonly name: string;
  readonly kind: Kind;
  readonly elem?: GoType;
  readonly key?: GoType;
}

function basic(name: string, kind: Kind): GoType {
  return { name, kind };
}

export const T_BOOL = basic('bool', 'bool');
export const T_STRING = basic('string', 'string');
export const T_FLOAT64 = basic('float64', 'float64');
export const T_INT = basic('int', 'int');
export const T_INT64 = basic('int64', 'int64');
export const T_UINT8 = basic('uint8', 'uint8');
export const T_UINT32 = basic('uint32', 'uint32');
export const T_UINT64 = basic('uint64', 'uint64');
/** The empty interface, `interface {}`. */
export const T_ANY = basic('interface {}', 'interface');
/** Go's `reflect.Value` parameter type (used by the comparison and index built-ins). */
export const T_REFLECT_VALUE: GoType = { name: 'reflect.Value', kind: 'struct' };

export function sliceOf(elem: GoType): GoType {
  return { name: `[]${elem.name}`, kind: 'slice', elem };
}

export function mapOf(key: GoType, elem: GoType): GoType {
  return { name: `map[${key.name}]${elem.name}`, kind: 'map', key, elem };
}

export const T_SLICE_ANY = sliceOf(T_ANY);
export const T_SLICE_STRING = sliceOf(T_STRING);
export const T_SLICE_INT = sliceOf(T_INT);
export const T_SLICE_SLICE_ANY = sliceOf(T_SLICE_ANY);
export const T_MAP_ANY = mapOf(T_STRING, T_ANY);
export const T_MAP_STRING = mapOf(T_STRING, T_STRING);
export const T_FUNC: GoType = { name: 'func(...interface {}) interface {}', kind: 'func' };

/** A Go integer of a specific integer type; `value` is already wrapped to that type's range. */
export class GoInt {
  constructor(
    readonly type: GoType,
    readonly value: bigint,
  ) {}

  get isSigned(): boolean {
    return this.type.kind[0] === 'i';
  }
}

const INT_BITS: Partial<Record<Kind, number>> = {
  int: 64,
  int8: 8,
  int16: 16,
  int32: 32,
  int64: 64,
  uint: 64,
  uint8: 8,
  uint16: 16,
  uint32: 32,
  uint64: 64,
};

/** A Go integer of type `type`, wrapping `value` the way a Go conversion does. */
export function goInt(type: GoType, value: bigint | number): GoInt {
  const bits = INT_BITS[type.kind] ?? 64;
  const big = typeof value === 'bigint' ? value : BigInt(value);
  return new GoInt(type, type.kind[0] === 'u' ? BigInt.asUintN(bits, big) : BigInt.asIntN(bits, big));
}

export const intOf = (n: number | bigint): GoInt => goInt(T_INT, n);
export const int64Of = (n: number | bigint): GoInt => goInt(T_INT64, n);

/**
 * Base class of Go values that are neither basic, slices nor maps: structs and pointers with
 * fields and methods (time.Time, *semver.Version, sprig's certificate).
 */
export abstract class GoObject {
  abstract readonly goType: GoType;
  /** A method callable from a template (`.Method args`), or undefined. */
  method(_name: string): GoMethod | undefined {
    return undefined;
  }
  /** An exported struct field, or undefined when there is none. */
  field(_name: string): { value: unknown } | undefined {
    return undefined;
  }
  /** Field values in declaration order (for `%v` of a struct). */
  fields(): readonly (readonly [string, unknown])[] {
    return [];
  }
  /** The `String()` method's result when the type is a fmt.Stringer. */
  toGoString(): string | undefined {
    return undefined;
  }
}

/** A bound method: parameter types (Go reflection rules apply) and its implementation. */
export interface GoMethod {
  readonly params: readonly GoType[];
  readonly variadic?: boolean;
  readonly call: (...args: unknown[]) => unknown;
}

const TYPE_TAG = Symbol('goType');

type Tagged = { [TYPE_TAG]?: GoType };

/** Marks an array or plain object as a Go value of a specific slice or map type. */
export function tagType<T extends object>(value: T, type: GoType): T {
  Object.defineProperty(value, TYPE_TAG, { value: type, enumerable: false });
  return value;
}

/** Whether a JS object is used as a Go map (a plain object, not an array or GoObject). */
export function isGoMap(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The dynamic Go type of a value; undefined for nil and for an invalid value. */
export function typeOfValue(value: unknown): GoType | undefined {
  switch (typeof value) {
    case 'string':
      return T_STRING;
    case 'boolean':
      return T_BOOL;
    case 'number':
      return T_FLOAT64;
    case 'function':
      return T_FUNC;
    case 'object':
      if (value === null) return undefined;
      if (value instanceof GoInt) return value.type;
      if (value instanceof GoObject) return value.goType;
      if (Array.isArray(value)) return (value as Tagged)[TYPE_TAG] ?? T_SLICE_ANY;
      return (value as Tagged)[TYPE_TAG] ?? T_MAP_ANY;
    default:
      return undefined;
  }
}

/** The reflect kind of a value (`invalid` for nil and missing values). */
export function kindOf(value: unknown): Kind {
  return typeOfValue(value)?.kind ?? 'invalid';
}

/** `%T` of a value: `<nil>` for nil. */
export function typeName(value: unknown): string {
  return typeOfValue(value)?.name ?? '<nil>';
}

/** Own-property lookup on a Go map (never the JS prototype chain). */
export function mapGet(map: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

export function mapHas(map: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(map, key);
}

/** A new Go map of type `map[string]interface {}` safe for any key, including `__proto__`. */
export function newMap(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/** Map keys in Go's printing/iteration order (sorted by bytes). */
export function sortedKeys(map: Record<string, unknown>): string[] {
  return Object.keys(map).sort(compareUtf8);
}

/** Go's `len` of a string: its UTF-8 byte count. */
export function byteLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2;
        i++;
        continue;
      }
      n += 2;
    } else n += 2;
  }
  return n;
}

const utf8Encoder = new TextEncoder();

/** The UTF-8 bytes of a string (lone surrogates become U+FFFD, as Go would have stored them). */
export function utf8Bytes(s: string): Uint8Array {
  return utf8Encoder.encode(s);
}

/** Whether a string is plain ASCII (so byte offsets equal UTF-16 offsets). */
export function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

/**
 * Go's truth of a value (`if`, `with`, `and`, `or`, `not`): false for missing/nil values, empty
 * strings/slices/maps, zero numbers and false; true for everything else.
 */
export function isTrue(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
      return value.length > 0;
    case 'boolean':
      return value;
    case 'number':
      return value !== 0;
    case 'undefined':
      return false;
    case 'function':
      return true;
    case 'object':
      if (value === null) return false;
      if (value instanceof GoInt) return value.value !== 0n;
      if (value instanceof GoObject) return true;
      if (Array.isArray(value)) return value.length > 0;
      for (const _ in value) return true;
      return false;
    default:
      return false;
  }
}

/**
 * A reflect.Value argument that still sits in an interface (a map value or slice element of
 * interface type). Only Go's built-in `slice` sees this: it does not unwrap its indexes, so such
 * an index is "of type interface {}" whatever it holds.
 */
export class InterfaceValue {
  constructor(readonly value: unknown) {}
}
