import { ConfigError, type Position } from './errors.js';

/**
 * Values of the configuration language. `ConfigValue` is what evaluation hands to decoders;
 * `Value` is the richer form used while evaluating, which also tells integers from floats (the
 * reference divides `7 / 2` to `3` but `7.0 / 2` to `3.5`) and holds standard-library functions.
 */

/** An evaluated configuration value. */
export type ConfigValue = string | number | boolean | null | readonly ConfigValue[] | { readonly [k: string]: ConfigValue } | Capsule;

/** An opaque value such as a component's exported receiver. */
export interface Capsule {
  readonly capsule: string;
  readonly value: unknown;
}

const CAPSULE_BRAND = Symbol('capsule');
/** Objects built by evaluation: never capsules, whatever their keys. */
const configObjects = new WeakSet<object>();

/** Wraps an opaque host value so configuration expressions can pass it around. */
export function makeCapsule(capsule: string, value: unknown): Capsule {
  const wrapped = { capsule, value };
  Object.defineProperty(wrapped, CAPSULE_BRAND, { value: true });
  return wrapped;
}

/**
 * Whether `v` is a capsule: one made by `makeCapsule`, or a host object of exactly the shape
 * `{ capsule: string, value }`. Objects written in a configuration are never capsules.
 */
export function isCapsule(v: unknown): v is Capsule {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  if (CAPSULE_BRAND in v) return true;
  if (configObjects.has(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 2 && typeof (v as { capsule?: unknown }).capsule === 'string' && 'value' in v;
}

/** A number of the reference's float kind (integers are plain JavaScript numbers). */
export class GoFloat {
  constructor(readonly value: number) {}
}

export interface CallContext {
  /** The function's dotted name, for messages. */
  readonly name: string;
  /** Position of the call expression. */
  readonly pos: Position;
  /** Position of each argument. */
  readonly argPos: readonly Position[];
  /** Environment lookup for `sys.env`; unset variables read as `""`. */
  readonly env: (name: string) => string;
}

/** A standard-library function. */
export class ConfigFunction {
  constructor(
    readonly name: string,
    readonly call: (args: readonly Value[], ctx: CallContext) => Value,
  ) {}
}

/** A value during evaluation. */
export type Value =
  | string
  | number
  | boolean
  | null
  | GoFloat
  | ConfigFunction
  | Capsule
  | readonly Value[]
  | { readonly [k: string]: Value };

export type ValueType = 'null' | 'number' | 'string' | 'bool' | 'array' | 'object' | 'function' | 'capsule';

/** The reference's name for a value's type, as used in messages. */
export function typeOf(v: Value | ConfigValue): ValueType {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
  }
  if (v instanceof GoFloat) return 'number';
  if (v instanceof ConfigFunction) return 'function';
  if (Array.isArray(v)) return 'array';
  if (isCapsule(v)) return 'capsule';
  return 'object';
}

export function isNumber(v: Value): v is number | GoFloat {
  return typeof v === 'number' || v instanceof GoFloat;
}

export function numberValue(v: number | GoFloat): number {
  return typeof v === 'number' ? v : v.value;
}

/** Float kind: written with a fraction or exponent, decoded from JSON, or not a whole number. */
export function isFloatKind(v: number | GoFloat): boolean {
  return v instanceof GoFloat || !Number.isInteger(v);
}

export function makeNumber(value: number, float: boolean): number | GoFloat {
  if (float) return new GoFloat(value);
  // Integers have no negative zero.
  return value === 0 ? 0 : value;
}

/** Builds an object from entries; `__proto__` and friends become ordinary keys. */
export function makeObject<T extends Value>(entries: Iterable<readonly [string, T]>): { readonly [k: string]: T } {
  const obj = Object.fromEntries(entries) as { [k: string]: T };
  configObjects.add(obj);
  return obj;
}

export function isObjectValue(v: Value): v is { readonly [k: string]: Value } {
  return typeOf(v) === 'object';
}

/** Own, enumerable key lookup (never the prototype). */
export function getField(obj: { readonly [k: string]: Value }, key: string): Value | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Strips evaluation-only wrappers; a function anywhere inside is an error at `pos`. */
export function toConfigValue(v: Value, pos: Position): ConfigValue {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof GoFloat) return v.value;
  if (v instanceof ConfigFunction) throw new ConfigError(`function ${v.name} cannot be used as a value; call it`, pos);
  if (Array.isArray(v)) return (v as readonly Value[]).map((item) => toConfigValue(item, pos));
  if (isCapsule(v)) return v;
  const obj = v as { readonly [k: string]: Value };
  return makeObject(Object.keys(obj).map((k) => [k, toConfigValue(obj[k]!, pos)] as const)) as ConfigValue;
}

/** Deep equality as the reference's `==`: numbers by value whatever their kind. */
export function valuesEqual(a: Value, b: Value): boolean {
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  switch (type) {
    case 'null':
      return true;
    case 'number':
      return numberValue(a as number | GoFloat) === numberValue(b as number | GoFloat);
    case 'string':
    case 'bool':
      return a === b;
    case 'array': {
      const x = a as readonly Value[];
      const y = b as readonly Value[];
      return x.length === y.length && x.every((item, i) => valuesEqual(item, y[i]!));
    }
    case 'object': {
      const x = a as { readonly [k: string]: Value };
      const y = b as { readonly [k: string]: Value };
      const keys = Object.keys(x);
      if (keys.length !== Object.keys(y).length) return false;
      return keys.every((k) => {
        const other = getField(y, k);
        return other !== undefined && valuesEqual(x[k]!, other);
      });
    }
    case 'function':
      return false;
    case 'capsule': {
      const x = a as Capsule;
      const y = b as Capsule;
      return x === y || (x.capsule === y.capsule && Object.is(x.value, y.value));
    }
  }
}
