import type { Block, Expr, Statement } from './ast.js';
import { evaluate, isCapsule, type ConfigValue, type EvalScope } from './evaluate.js';
import { parseGoDuration } from '../go/duration.js';
import { ConfigError, ConfigErrors, FieldError, type Position } from './errors.js';
import { positionInLiteral } from './literal.js';
import { formatGoFloat } from '../go/values.js';
import { didYouMean } from '../suggest.js';

/**
 * Field schemas: one description of a block's attributes and nested blocks that drives config
 * decoding (types, defaults, required checks, positioned errors), the programmatic API's defaults,
 * the generated docs table and the playground's completion and hover help.
 */
export type FieldType =
  | { readonly type: 'string' }
  | { readonly type: 'number' }
  | { readonly type: 'int' }
  | { readonly type: 'bool' }
  /** A Go duration string, decoded to nanoseconds (bigint). */
  | { readonly type: 'duration' }
  | { readonly type: 'list'; readonly of: FieldType }
  | { readonly type: 'map'; readonly of: FieldType }
  /** An opaque exported value such as a component's receiver. */
  | { readonly type: 'capsule'; readonly capsule: string }
  | { readonly type: 'any' };

export interface FieldSpec {
  readonly kind: FieldType;
  readonly doc: string;
  readonly required?: boolean;
  readonly default?: unknown;
  /** For strings: the accepted values. */
  readonly oneOf?: readonly string[];
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

export const t = {
  string: { type: 'string' } as FieldType,
  number: { type: 'number' } as FieldType,
  int: { type: 'int' } as FieldType,
  bool: { type: 'bool' } as FieldType,
  duration: { type: 'duration' } as FieldType,
  any: { type: 'any' } as FieldType,
  list: (of: FieldType): FieldType => ({ type: 'list', of }),
  map: (of: FieldType): FieldType => ({ type: 'map', of }),
  capsule: (capsule: string): FieldType => ({ type: 'capsule', capsule }),
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

/**
 * Converts an evaluated config value to the field's type. Numbers convert to strings (as the
 * reference's decoder does); everything else must match.
 */
export function coerceValue(value: ConfigValue, kind: FieldType): unknown {
  const mismatch = () => new ConfigError(`expected ${typeName(kind)}, got ${valueTypeName(value)}`);
  switch (kind.type) {
    case 'any':
      return value;
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number') return formatGoFloat(value);
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
      return value.map((item: ConfigValue) => coerceValue(item, kind.of));
    case 'map': {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || isCapsule(value)) throw mismatch();
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, ConfigValue>)) out[key] = coerceValue(item, kind.of);
      return out;
    }
    case 'capsule':
      if (isCapsule(value) && (value as { capsule: string }).capsule === kind.capsule) return (value as { value: unknown }).value;
      throw mismatch();
  }
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
 * Decodes a block's body against its spec. Errors name `file:line:col` and the block path; all
 * errors of the block are collected before throwing.
 */
export function decodeBlock(block: Block, spec: BlockSpec, scope: EvalScope, path: readonly string[]): DecodedBlock {
  const errors: ConfigError[] = [];
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
    else if (field.default !== undefined) values[name] = structuredClone(field.default);
  }
  for (const [name, nested] of Object.entries(spec.blocks ?? {})) {
    const key = nested.key ?? name;
    const seen = nestedSeen.get(name);
    if (!seen && nested.required) errors.push(new ConfigError(`missing required block "${name}"`, block.pos, path));
    if (nested.multiple) values[key] = seen ?? [];
    else if (seen) values[key] = seen[0];
  }
  if (spec.blockOrderKey !== undefined) values[spec.blockOrderKey] = blockOrder;
  if (errors.length > 0) throw new ConfigErrors(errors);
  return { values, positions, valueExprs, nested: nestedDecoded, stageBlocks };

  function decodeStatement(stmt: Statement): void {
    if (stmt.kind === 'attribute') {
      const field = spec.fields[stmt.name];
      if (!field)
        throw new ConfigError(
          `unrecognized attribute name "${stmt.name}"${didYouMean(stmt.name, Object.keys(spec.fields))}`,
          stmt.pos,
          path,
        );
      if (positions.has(stmt.name)) throw new ConfigError(`attribute "${stmt.name}" may only be provided once`, stmt.pos, path);
      positions.set(stmt.name, stmt.pos);
      valueExprs.set(stmt.name, stmt.value);
      if (scope.unresolved?.(stmt.value)) {
        values[stmt.name] = placeholder(field);
        return;
      }
      const evaluated = evaluate(stmt.value, scope);
      let value: unknown;
      try {
        value = coerceValue(evaluated, field.kind);
      } catch (err) {
        if (err instanceof ConfigError) throw new ConfigError(`attribute "${stmt.name}": ${err.reason}`, stmt.value.pos, path);
        throw err;
      }
      if (field.oneOf && !field.oneOf.includes(value as string)) {
        throw new ConfigError(
          `attribute "${stmt.name}": invalid value ${JSON.stringify(value)}, expected one of ${field.oneOf.map((v) => JSON.stringify(v)).join(', ')}`,
          stmt.value.pos,
          path,
        );
      }
      values[stmt.name] = value;
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
    const decoded = decodeBlock(stmt, nestedSpec, scope, childPath);
    const decodedList = nestedDecoded.get(stmt.name) ?? [];
    decodedList.push({ block: stmt, decoded });
    nestedDecoded.set(stmt.name, decodedList);
    if (decoded.stageBlocks.length > 0) decoded.values.stages = decoded.stageBlocks;
    seen.push(decoded.values);
    nestedSeen.set(stmt.name, seen);
    blockOrder.push(stmt.name);
  }
}

/**
 * A stand-in for an attribute whose value is unknown (it refers to something missing): the
 * default, or an empty value of the field's type.
 */
function placeholder(field: FieldSpec): unknown {
  if (field.default !== undefined) return structuredClone(field.default);
  switch (field.kind.type) {
    case 'string':
      return '';
    case 'number':
    case 'int':
      return 0;
    case 'bool':
      return false;
    case 'duration':
      return 0n;
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

/** Applies a spec's defaults to a programmatic config object and checks required fields. */
export function applyDefaults(spec: BlockSpec, config: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const [name, field] of Object.entries(spec.fields)) {
    if (out[name] === undefined) {
      if (field.required) throw new ConfigError(`missing required attribute "${name}"`, undefined, path);
      if (field.default !== undefined) out[name] = structuredClone(field.default);
    } else if (field.kind.type === 'duration' && typeof out[name] === 'string') {
      try {
        out[name] = parseGoDuration(out[name] as string);
      } catch (err) {
        // The text a config's decoding gives for the same value, without its position.
        throw new ConfigError(`attribute "${name}": ${(err as Error).message}`, undefined, path);
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
      ? (value as Record<string, unknown>[]).map((item) => applyDefaults(nested, item, [...path, name]))
      : applyDefaults(nested, value as Record<string, unknown>, [...path, name]);
  }
  return out;
}
