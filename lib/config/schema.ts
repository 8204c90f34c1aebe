import type { Block, Expr, Statement } from './ast.js';
import { evaluate, isCapsule, type ConfigValue, type EvalScope } from './evaluate.js';
import { parseBase2Bytes } from '../go/bytesize.js';
import { parseGoDuration } from '../go/duration.js';
import { ConfigError, ConfigErrors, configErrorsOf, FieldError, type Position } from './errors.js';
import { positionInLiteral } from './literal.js';
import { formatGoFloat } from '../go/values.js';
import { didYouMean } from '../suggest.js';

/**
 * Field schemas: one description of a block's attributes and nested blocks that drives config
 * decoding (types, defaults, required checks, positioned errors), the programmatic API's defaults,
 * the generated docs table and the playground's completion and hover help.
 */
/** The shapes a field's value can take; `FieldType` adds the type its decoded value has. */
export type FieldKind =
  | { readonly type: 'string' }
  | { readonly type: 'number' }
  | { readonly type: 'int' }
  | { readonly type: 'bool' }
  /** A Go duration string, decoded to nanoseconds (bigint), or with `unit: 'ms'` to whole milliseconds. */
  | { readonly type: 'duration'; readonly unit?: 'ms' }
  /** A Go base-2 byte size written as a string (`"256KiB"`), decoded to a number of bytes. */
  | { readonly type: 'bytes' }
  | { readonly type: 'list'; readonly of: FieldType }
  | { readonly type: 'map'; readonly of: FieldType }
  /** An opaque exported value such as a component's receiver. */
  | { readonly type: 'capsule'; readonly capsule: string }
  | { readonly type: 'any' };

declare const decodedAs: unique symbol;

/** A field kind that also names, for the type checker only, what its value decodes to. */
export type FieldType<T = unknown> = FieldKind & { readonly [decodedAs]: T };

export interface FieldSpec<T = unknown> {
  readonly kind: FieldType<T>;
  readonly doc: string;
  readonly required?: boolean;
  /**
   * The value when the attribute is not written, in the schema's own form: durations as bigint
   * nanoseconds, byte sizes as the string a config would write.
   */
  readonly default?: unknown;
  /** For strings: the accepted values (the decoded type is their union). */
  readonly oneOf?: readonly string[];
  /** Smallest accepted value: of an int or number, the bytes of a byte size, a duration in its unit. */
  readonly min?: number;
  /**
   * The error for a value below `min`, in full (`sync_period must be greater than 0`), where a
   * component words it so; by default `attribute "x": must be at least MIN, got VALUE`.
   */
  readonly belowMin?: string;
}

export interface BlockSpec {
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Nested blocks by their written name (`rule`, `metric.counter`, `tls`). */
  readonly blocks?: Readonly<Record<string, NestedBlockSpec>>;
  /** Accepts nested `stage.*` blocks (stage.match). */
  readonly stages?: boolean;
  /**
   * Property that receives the names of the nested blocks in the order they were written, for
   * blocks of several names that form one list (the reference's enum blocks: `metric.counter`,
   * `metric.gauge`, … in document order). Absent from programmatic configs unless given.
   */
  readonly blockOrderKey?: string;
}

export interface NestedBlockSpec extends BlockSpec {
  readonly doc: string;
  readonly multiple?: boolean;
  readonly required?: boolean;
  /** Property that receives the decoded block(s); defaults to the block name. */
  readonly key?: string;
}

/** What a field decodes to: the union of its `oneOf`, else its kind's type. */
export type FieldValue<F> = F extends { readonly oneOf: readonly (infer E)[] }
  ? E
  : F extends { readonly kind: { readonly [decodedAs]: infer T } }
    ? T
    : unknown;

/** Whether a decoded block always holds the field (required, or defaulted). */
type AlwaysSet<F> = F extends { readonly required: true } ? true : F extends { readonly default: NonNullable<unknown> } ? true : false;

/** The decoded attributes of a block of these fields. */
export type FieldsValues<Fs> = {
  readonly [K in keyof Fs]: AlwaysSet<Fs[K]> extends true ? FieldValue<Fs[K]> : FieldValue<Fs[K]> | undefined;
};

/** The decoded nested blocks of a block, under their keys: a list when `multiple`, else one or none. */
export type NestedValues<Bs> = {
  readonly [K in keyof Bs as Bs[K] extends { readonly key: infer N extends string } ? N : K]: Bs[K] extends { readonly multiple: true }
    ? BlockValues<Bs[K]>[]
    : Bs[K] extends { readonly required: true }
      ? BlockValues<Bs[K]>
      : BlockValues<Bs[K]> | undefined;
};

/** What a block of this spec decodes to: its attributes and nested blocks, typed from the spec. */
export type BlockValues<S> = (S extends { readonly fields: infer Fs } ? FieldsValues<Fs> : unknown) &
  (S extends { readonly blocks: infer Bs } ? NestedValues<Bs> : unknown);

export const t = {
  string: { type: 'string' } as FieldType<string>,
  number: { type: 'number' } as FieldType<number>,
  int: { type: 'int' } as FieldType<number>,
  bool: { type: 'bool' } as FieldType<boolean>,
  /** A Go duration (`"1m30s"`) in nanoseconds. */
  duration: { type: 'duration' } as FieldType<bigint>,
  /** A Go duration (`"1m30s"`) in whole milliseconds (rounded toward zero). */
  durationMs: { type: 'duration', unit: 'ms' } as FieldType<number>,
  /** A Go base-2 byte size (`"256KiB"`, `"1MB"` = 1 MiB) as a number of bytes. */
  bytes: { type: 'bytes' } as FieldType<number>,
  any: { type: 'any' } as FieldType<unknown>,
  list: <T>(of: FieldType<T>): FieldType<T[]> => ({ type: 'list', of }) as FieldType<T[]>,
  map: <T>(of: FieldType<T>): FieldType<Record<string, T>> => ({ type: 'map', of }) as FieldType<Record<string, T>>,
  /** An exported value of this capsule name; `T` is what the capsule holds. */
  capsule: <T = unknown>(capsule: string): FieldType<T> => ({ type: 'capsule', capsule }) as FieldType<T>,
};

/** `string`, `list(string)`, `map(string)`: how a type is named in errors and docs. */
export function typeName(kind: FieldType): string {
  switch (kind.type) {
    case 'list':
      return `list(${typeName(kind.of)})`;
    case 'map':
      return `map(${typeName(kind.of)})`;
    case 'capsule':
      return kind.capsule;
    case 'bytes':
      // Written as a string; the docs and type errors name it so.
      return 'string';
    default:
      return kind.type;
  }
}

function valueTypeName(value: ConfigValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (isCapsule(value)) return (value as { capsule: string }).capsule;
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** How values are converted to their fields' types, and what is said of one of the wrong type. */
interface Coercion {
  /** Numbers written for a string become strings (as the reference's decoder does); else they are mistyped. */
  readonly numbersAsStrings: boolean;
  /** The error for `value`, not of type `kind`, at `at`: the attribute, or a place inside its value (`labels.app`). */
  mistyped(at: string, kind: FieldType, value: ConfigValue): ConfigError;
}

/** The reference's conversions and words. */
const REFERENCE_COERCION: Coercion = {
  numbersAsStrings: true,
  mistyped: (_at, kind, value) => new ConfigError(`expected ${typeName(kind)}, got ${valueTypeName(value)}`),
};

/**
 * Converts an evaluated config value to the field's type. Numbers convert to strings (as the
 * reference's decoder does); everything else must match.
 */
export function coerceValue(value: ConfigValue, kind: FieldType): unknown {
  return coerce(value, kind, '', REFERENCE_COERCION);
}

function coerce(value: ConfigValue, kind: FieldType, at: string, rules: Coercion): unknown {
  const mismatch = () => rules.mistyped(at, kind, value);
  switch (kind.type) {
    case 'any':
      return value;
    case 'string':
    case 'bytes':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' && rules.numbersAsStrings) return formatGoFloat(value);
      throw mismatch();
    case 'number':
      if (typeof value === 'number') return value;
      throw mismatch();
    case 'int':
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      if (typeof value === 'number') throw new ConfigError(`expected int, got non-integer number ${formatGoFloat(value)}`);
      throw mismatch();
    case 'bool':
      if (typeof value === 'boolean') return value;
      throw mismatch();
    case 'duration':
      if (typeof value !== 'string') throw mismatch();
      try {
        return parseGoDuration(value);
      } catch (err) {
        throw new ConfigError((err as Error).message);
      }
    case 'list':
      if (!Array.isArray(value)) throw mismatch();
      return value.map((item: ConfigValue, i: number) => coerce(item, kind.of, `${at}[${i}]`, rules));
    case 'map': {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || isCapsule(value)) throw mismatch();
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, ConfigValue>))
        out[key] = coerce(item, kind.of, `${at}.${key}`, rules);
      return out;
    }
    case 'capsule':
      if (isCapsule(value) && (value as { capsule: string }).capsule === kind.capsule) return (value as { value: unknown }).value;
      throw mismatch();
  }
}

const NS_PER_MS = 1_000_000n;

/** A Go base-2 byte size (`"1MiB"`) as a number of bytes, at least `min`; throws the reason. */
function byteCount(text: string, min: number | undefined): number {
  const bytes = parseBase2Bytes(text);
  if (min !== undefined && bytes < BigInt(min)) throw new Error(`must be at least ${min} bytes, got ${JSON.stringify(text)}`);
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${JSON.stringify(text)} is too large`);
  return Number(bytes);
}

/**
 * A byte size attribute checked outside a field spec (inside a component's own checks): the
 * number of bytes, or a ConfigError at the attribute naming it.
 */
export function byteSize(text: string, name: string, block: Block | undefined, path: readonly string[], min = 0): number {
  try {
    return byteCount(text, min);
  } catch (err) {
    throw new ConfigError(`attribute "${name}": ${(err as Error).message}`, attributePos(block, name), path);
  }
}

/** A decoded duration (nanoseconds) in whole milliseconds. */
export function durationMs(ns: unknown): number {
  return Number((ns as bigint) / NS_PER_MS);
}

/**
 * What a field asks of a value beyond its type: a byte size parsed to bytes, a duration turned
 * into milliseconds, a lower bound. Throws a ConfigError with the reason when a check fails; the
 * decoder places it at the attribute (where the components' own checks placed it before).
 */
export function refineValue(value: unknown, field: FieldSpec): unknown {
  const { kind, min } = field;
  if (kind.type === 'bytes') {
    try {
      return byteCount(value as string, min);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  }
  const refined = kind.type === 'duration' && kind.unit === 'ms' ? durationMs(value) : value;
  if (min !== undefined && typeof refined === 'number' && refined < min)
    throw field.belowMin === undefined ? new ConfigError(`must be at least ${min}, got ${refined}`) : new WholeReason(field.belowMin);
  return refined;
}

/** An error about an attribute's value already worded in full: not prefixed with the attribute's name. */
class WholeReason extends ConfigError {}

/** The reason of an error about attribute `name`'s value, as reported. */
function attributeReason(name: string, err: ConfigError): string {
  return err instanceof WholeReason ? err.reason : `attribute "${name}": ${err.reason}`;
}

/** Why a value is not one of a field's choices. */
function notOneOf(value: unknown, oneOf: readonly string[]): string {
  return `invalid value ${JSON.stringify(value)}, expected one of ${oneOf.map((v) => JSON.stringify(v)).join(', ')}`;
}

/** A field's default as its decoded value (a byte size in bytes, a duration in its unit). */
function defaultValue(field: FieldSpec): unknown {
  return refineValue(structuredClone(field.default), field);
}

/** A decoded nested `stage.*` block, ready to be built by the stage registry. */
export interface StageBlock {
  readonly block: Block;
  readonly path: readonly string[];
}

export interface DecodedBlock {
  readonly values: Record<string, unknown>;
  /** Where each written attribute was, for placing validation errors. */
  readonly positions: ReadonlyMap<string, Position>;
  /** Each written attribute's value, for placing errors inside a string literal. */
  readonly valueExprs?: ReadonlyMap<string, Expr>;
  /** Each decoded nested block, by its name, in the order written. */
  readonly nested?: ReadonlyMap<string, readonly NestedDecoded[]>;
  readonly stageBlocks: readonly StageBlock[];
  /**
   * Errors of the values' own checks (a bad byte size, a count below its minimum), when the
   * decoding was asked to defer them: the values hold stand-ins, so a validation can still run
   * and every problem be reported at once.
   */
  readonly valueErrors?: readonly ConfigError[];
}

/** A decoded nested block and where it was written. */
export interface NestedDecoded {
  readonly block: Block;
  readonly decoded: DecodedBlock;
}

/** The name a block is shown with in block paths: `logs.process "default"`, `stage.json`. */
export function blockTitle(block: Block): string {
  return block.label === undefined ? block.name : `${block.name} ${JSON.stringify(block.label)}`;
}

/**
 * How a decoding words the errors about values, for a file of its own format written in the block
 * syntax (`rivulet test` files); configs keep the reference's words and conversions.
 */
export interface DecodeWording {
  /** Numbers written for a string become strings, as the reference's decoder does (the default); false rejects them. */
  readonly numbersAsStrings?: boolean;
  /**
   * The whole error for a value of the wrong type; `at` is the attribute, or the place inside its
   * value (`labels.app`, `targets[0]`). By default `attribute "labels": expected string, got number`.
   */
  readonly mistyped?: (at: string, kind: FieldType, value: ConfigValue) => string;
  /** The error for an attribute written twice. By default `attribute "name" may only be provided once`. */
  readonly repeated?: (name: string) => string;
}

export interface DecodeOptions {
  /** Keeps the errors of the values' own checks in `valueErrors` (the values hold stand-ins) instead of throwing them. */
  readonly deferValueErrors?: boolean;
  readonly wording?: DecodeWording;
  /**
   * Where the errors go instead of being thrown: the decoding then carries on, and its values leave
   * out each attribute and nested block that failed (a failed nested block still counts as written).
   */
  readonly errors?: ConfigError[];
}

/**
 * Decodes a block's body against its spec. Errors name `file:line:col` and the block path; all
 * errors of the block are collected before throwing.
 */
export function decodeBlock(
  block: Block,
  spec: BlockSpec,
  scope: EvalScope,
  path: readonly string[],
  options: DecodeOptions = {},
): DecodedBlock {
  const rules = coercionOf(options.wording);
  const errors: ConfigError[] = [];
  const valueErrors: ConfigError[] = [];
  const values: Record<string, unknown> = {};
  const positions = new Map<string, Position>();
  const valueExprs = new Map<string, Expr>();
  const nestedDecoded = new Map<string, NestedDecoded[]>();
  const stageBlocks: StageBlock[] = [];
  const nestedSeen = new Map<string, unknown[]>();
  const blockOrder: string[] = [];

  for (const stmt of block.body) {
    try {
      decodeStatement(stmt);
    } catch (err) {
      if (err instanceof ConfigErrors) errors.push(...err.errors);
      else if (err instanceof ConfigError) errors.push(err.pos ? err : new ConfigError(err.reason, stmt.pos, path));
      else throw err;
    }
  }

  for (const [name, field] of Object.entries(spec.fields)) {
    if (positions.has(name)) continue;
    if (field.required) errors.push(new ConfigError(`missing required attribute "${name}"`, block.pos, path));
    else if (field.default !== undefined) values[name] = defaultValue(field);
  }
  for (const [name, nested] of Object.entries(spec.blocks ?? {})) {
    const key = nested.key ?? name;
    const seen = nestedSeen.get(name);
    if (!seen && nested.required) errors.push(new ConfigError(`missing required block "${name}"`, block.pos, path));
    if (nested.multiple) values[key] = seen ?? [];
    else if (seen) values[key] = seen[0];
  }
  if (spec.blockOrderKey !== undefined) values[spec.blockOrderKey] = blockOrder;
  if (!options.deferValueErrors) errors.push(...valueErrors);
  if (errors.length > 0 && !options.errors) throw new ConfigErrors(errors);
  options.errors?.push(...errors);
  return { values, positions, valueExprs, nested: nestedDecoded, stageBlocks, valueErrors };

  function decodeStatement(stmt: Statement): void {
    if (stmt.kind === 'attribute') {
      const field = spec.fields[stmt.name];
      if (!field)
        throw new ConfigError(
          `unrecognized attribute name "${stmt.name}"${didYouMean(stmt.name, Object.keys(spec.fields))}`,
          stmt.pos,
          path,
        );
      if (positions.has(stmt.name))
        throw new ConfigError(
          options.wording?.repeated?.(stmt.name) ?? `attribute "${stmt.name}" may only be provided once`,
          stmt.pos,
          path,
        );
      positions.set(stmt.name, stmt.pos);
      valueExprs.set(stmt.name, stmt.value);
      if (scope.unresolved?.(stmt.value)) {
        values[stmt.name] = placeholder(field);
        return;
      }
      const evaluated = evaluate(stmt.value, scope);
      let value: unknown;
      try {
        value = coerce(evaluated, field.kind, stmt.name, rules);
      } catch (err) {
        if (err instanceof ConfigError) throw new ConfigError(attributeReason(stmt.name, err), stmt.value.pos, path);
        throw err;
      }
      if (field.oneOf && !field.oneOf.includes(value as string))
        throw new ConfigError(`attribute "${stmt.name}": ${notOneOf(value, field.oneOf)}`, stmt.value.pos, path);
      try {
        values[stmt.name] = refineValue(value, field);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        valueErrors.push(new ConfigError(attributeReason(stmt.name, err), stmt.pos, path));
        values[stmt.name] = standIn(field);
      }
      return;
    }
    const childPath = [...path, blockTitle(stmt)];
    if (spec.stages && stmt.name.startsWith('stage.')) {
      stageBlocks.push({ block: stmt, path: childPath });
      return;
    }
    const nestedSpec = spec.blocks?.[stmt.name];
    if (!nestedSpec)
      throw new ConfigError(
        `unrecognized block name "${stmt.name}"${didYouMean(stmt.name, Object.keys(spec.blocks ?? {}))}`,
        stmt.pos,
        path,
      );
    if (stmt.label !== undefined) throw new ConfigError(`block "${stmt.name}" does not support specifying labels`, stmt.pos, path);
    const seen = nestedSeen.get(stmt.name) ?? [];
    if (!nestedSpec.multiple && seen.length > 0) throw new ConfigError(`block "${stmt.name}" may only be specified once`, stmt.pos, path);
    // Written, even if it fails to decode: its own errors say what is wrong, not "missing required block".
    nestedSeen.set(stmt.name, seen);
    const nestedErrors: ConfigError[] = [];
    const decoded = decodeBlock(stmt, nestedSpec, scope, childPath, options.errors ? { ...options, errors: nestedErrors } : options);
    if (nestedErrors.length > 0) {
      errors.push(...nestedErrors);
      return;
    }
    valueErrors.push(...(decoded.valueErrors ?? []));
    const decodedList = nestedDecoded.get(stmt.name) ?? [];
    decodedList.push({ block: stmt, decoded });
    nestedDecoded.set(stmt.name, decodedList);
    if (decoded.stageBlocks.length > 0) decoded.values.stages = decoded.stageBlocks;
    seen.push(decoded.values);
    nestedSeen.set(stmt.name, seen);
    blockOrder.push(stmt.name);
  }
}

/** `decodeBlock`, its values typed from the spec. */
export function decodeValues<S extends BlockSpec>(
  block: Block,
  spec: S,
  scope: EvalScope,
  path: readonly string[],
  options: DecodeOptions = {},
): { readonly values: BlockValues<S>; readonly decoded: DecodedBlock } {
  const decoded = decodeBlock(block, spec, scope, path, options);
  return { values: decoded.values as BlockValues<S>, decoded };
}

/**
 * The decoded nested blocks named `name` (those that decoded), in written order, their values
 * typed from `spec`: the spec they were decoded with.
 */
export function nestedValues<S extends BlockSpec>(
  decoded: DecodedBlock,
  name: string,
  _spec: S,
): { readonly values: BlockValues<S>; readonly block: Block; readonly decoded: DecodedBlock }[] {
  return (decoded.nested?.get(name) ?? []).map((n) => ({ values: n.decoded.values as BlockValues<S>, block: n.block, decoded: n.decoded }));
}

/** The conversions a wording asks for, its errors in its own words. */
function coercionOf(wording: DecodeWording | undefined): Coercion {
  if (!wording) return REFERENCE_COERCION;
  const { mistyped } = wording;
  return {
    numbersAsStrings: wording.numbersAsStrings ?? true,
    mistyped: mistyped ? (at, kind, value) => new WholeReason(mistyped(at, kind, value)) : REFERENCE_COERCION.mistyped,
  };
}

/**
 * A stand-in for an attribute whose value is unknown (it refers to something missing): the
 * default, or an empty value of the field's type.
 */
function placeholder(field: FieldSpec): unknown {
  if (field.default !== undefined) return defaultValue(field);
  return standIn(field);
}

/** An empty value of the field's type, decoded: what stands for a value that failed its checks. */
function standIn(field: FieldSpec): unknown {
  switch (field.kind.type) {
    case 'string':
      return '';
    case 'number':
    case 'int':
    case 'bytes':
      return 0;
    case 'bool':
      return false;
    case 'duration':
      return field.kind.unit === 'ms' ? 0 : 0n;
    case 'list':
      return [];
    case 'map':
      return {};
    default:
      return undefined;
  }
}

/**
 * Places a validation error: a FieldError at its attribute (inside the nested block it names,
 * at the character of a string literal it names when that can be found), anything else at the
 * block.
 */
export function placeError(err: ConfigError, block: Block, decoded: DecodedBlock | undefined, path: readonly string[]): ConfigError {
  if (err.pos) return err.blockPath.length > 0 ? err : new ConfigError(err.reason, err.pos, path);
  return new ConfigError(err.reason, err instanceof FieldError ? fieldPosition(err, block, decoded) : block.pos, path);
}

function fieldPosition(err: FieldError, block: Block, decoded: DecodedBlock | undefined): Position {
  let owner = block;
  let fields = decoded;
  for (const step of err.place.nested ?? []) {
    const inner = fields?.nested?.get(step.block)?.[step.index];
    if (!inner) return owner.pos;
    owner = inner.block;
    fields = inner.decoded;
  }
  const attribute = fields?.positions.get(err.field);
  if (!attribute) return owner.pos;
  if (err.place.offset === undefined) return attribute;
  const value = fields?.valueExprs?.get(err.field);
  if (!value) return attribute;
  return positionInLiteral(value, err.place.offset) ?? value.pos;
}

/** Errors of values given in code that are not of their field's type (an unparsable duration, a value outside `oneOf`). */
const unreadable = new WeakSet<ConfigError>();

/** Applies a spec's defaults to a programmatic config object and checks required fields. */
export function applyDefaults(
  spec: BlockSpec,
  config: Record<string, unknown>,
  path: readonly string[],
  /** Where errors about values go, to report them all at once; without it the first is thrown. */
  valueErrors?: ConfigError[],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const [name, field] of Object.entries(spec.fields)) {
    if (out[name] === undefined) {
      if (field.required) throw new ConfigError(`missing required attribute "${name}"`, undefined, path);
      if (field.default !== undefined) out[name] = defaultValue(field);
    } else {
      // The texts a config's decoding gives for the same value, without a position.
      let given: unknown;
      try {
        given = field.kind.type === 'duration' && typeof out[name] === 'string' ? parseGoDuration(out[name] as string) : out[name];
        if (field.oneOf && !field.oneOf.includes(given as string)) throw new Error(notOneOf(given, field.oneOf));
      } catch (err) {
        // Not a value of the field's type at all, as a config's decoding finds before any check:
        // kept apart, so no check runs on a stand-in and reports a second, made-up problem.
        const error = new ConfigError(`attribute "${name}": ${(err as Error).message}`, undefined, path);
        if (!valueErrors) throw error;
        unreadable.add(error);
        valueErrors.push(error);
        out[name] = standIn(field);
        continue;
      }
      try {
        out[name] = refineValue(given, field);
      } catch (err) {
        const reason = err instanceof ConfigError ? attributeReason(name, err) : `attribute "${name}": ${(err as Error).message}`;
        const error = new ConfigError(reason, undefined, path);
        if (!valueErrors) throw error;
        valueErrors.push(error);
        out[name] = standIn(field);
      }
    }
  }
  for (const key of Object.keys(config)) {
    if (
      !(key in spec.fields) &&
      !(spec.blocks && Object.values(spec.blocks).some((b, i) => (b.key ?? Object.keys(spec.blocks!)[i]) === key)) &&
      !(spec.stages && key === 'stages') &&
      key !== spec.blockOrderKey
    ) {
      throw new ConfigError(`unrecognized attribute name "${key}"`, undefined, path);
    }
  }
  for (const [name, nested] of Object.entries(spec.blocks ?? {})) {
    const key = nested.key ?? name;
    const value = out[key];
    if (value === undefined) {
      if (nested.required) throw new ConfigError(`missing required block "${name}"`, undefined, path);
      if (nested.multiple) out[key] = [];
      continue;
    }
    out[key] = nested.multiple
      ? (value as Record<string, unknown>[]).map((item) => applyDefaults(nested, item, [...path, name], valueErrors))
      : applyDefaults(nested, value as Record<string, unknown>, [...path, name], valueErrors);
  }
  return out;
}

/**
 * Applies a spec's defaults to options given in code, as `applyDefaults` does, typed as the
 * block's decoded values, with every bad value reported at once.
 */
export function decodeOptions<S extends BlockSpec>(
  spec: S,
  options: object,
  path: readonly string[],
  /** Where errors about values go (their values then hold stand-ins); without it they are thrown. */
  deferred?: ConfigError[],
): BlockValues<S> {
  const errors: ConfigError[] = deferred ?? [];
  const values = applyDefaults(spec, { ...options } as Record<string, unknown>, path, errors);
  if (errors.length > 0 && (!deferred || errors.some((e) => unreadable.has(e)))) throw new ConfigErrors(errors);
  return values as BlockValues<S>;
}

/** Where attribute `name` is written in `block`, else where the block is (nothing without a block). */
export function attributePos(block: Block | undefined, name: string): Position | undefined {
  if (!block) return undefined;
  return block.body.find((s: Statement) => s.kind === 'attribute' && s.name === name)?.pos ?? block.pos;
}

/** The nested blocks of `block` named `name`, in written order. */
export function nestedBlocks(block: Block | undefined, name: string): Block[] {
  return (block?.body ?? []).filter((s): s is Block => s.kind === 'block' && s.name === name);
}

/**
 * What a validation of decoded values gets: where the values were written (for positions) and a
 * way to report every problem at once rather than stop at the first.
 */
export interface Checks {
  /** The block the values were decoded from; absent for options given in code (errors then carry no position). */
  readonly block: Block | undefined;
  readonly path: readonly string[];
  /** Runs a step, keeping the config errors it throws; gives `fallback` when it failed. */
  attempt<T>(step: () => T, fallback: T): T;
  /** Reports a problem with `attribute` of the block, or of its nested block `inner`. */
  fail(reason: string, attribute: string, inner?: Block): void;
  /** Reports an error placed by the caller. */
  report(error: ConfigError): void;
}

/**
 * Runs a validation with `Checks`, then throws every config error it reported together. Any other
 * failure becomes a config error at the block.
 */
export function runChecks<T>(
  block: Block | undefined,
  path: readonly string[],
  validate: (checks: Checks) => T,
  /** Errors found before (the values' own checks), reported after the validation's. */
  earlier: readonly ConfigError[] = [],
): T {
  const errors: ConfigError[] = [];
  const checks: Checks = {
    block,
    path,
    attempt(step, fallback) {
      try {
        return step();
      } catch (err) {
        if (err instanceof ConfigErrors) errors.push(...err.errors);
        else if (err instanceof ConfigError) errors.push(err);
        else throw err;
        return fallback;
      }
    },
    fail(reason, attribute, inner) {
      errors.push(new ConfigError(reason, attributePos(inner ?? block, attribute), inner ? [...path, inner.name] : path));
    },
    report(error) {
      errors.push(error);
    },
  };
  let result: T;
  try {
    result = validate(checks);
  } catch (err) {
    const configError = err instanceof ConfigErrors || err instanceof ConfigError;
    if (earlier.length === 0) throw configError ? err : new ConfigError((err as Error).message, block?.pos, path);
    // Run on stand-ins, a validation may fail in ways that say nothing; the earlier errors say why.
    throw new ConfigErrors([...(configError ? configErrorsOf(err) : []), ...earlier]);
  }
  if (errors.length > 0 || earlier.length > 0) throw new ConfigErrors([...errors, ...earlier]);
  return result;
}
