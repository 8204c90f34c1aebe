/**
 * Stage configs generated from a stage's field schema, as config-language text and as the object
 * the programmatic factory takes. Valid configs follow the schema (types, required fields, the
 * allowed values of `oneOf` fields, nested blocks); invalid ones break it in exactly one way the
 * decoder must reject. A stage's own `validate` may still reject a schema-valid config (a regex
 * that does not compile): give such fields arbitraries of sensible values with `fields`.
 */
import fc from 'fast-check';
import { quoteGoString } from '../lib/go/gostring.js';
import type { BlockSpec, FieldSpec, FieldType, NestedBlockSpec } from '../lib/config/schema.js';
import type { StageDefinition, StageFactory } from '../core/stage.js';
import { anyCharacter } from './arbitraries.js';
import { definitionOf } from './run-stage.js';

/** One generated config. */
export interface GeneratedConfig {
  /** `stage.<name> { … }` in the config language. */
  readonly text: string;
  /**
   * The same settings for the programmatic factory (durations as Go duration strings). Absent
   * when the mistake of an invalid config cannot be written as an object (a repeated attribute).
   */
  readonly object?: Record<string, unknown>;
  /** For an invalid config: what was broken, e.g. `attribute "rate" has the wrong type`. */
  readonly invalid?: string;
}

export interface StageConfigOptions {
  /** Schema-valid configs (true) or configs the decoder must reject (false). */
  readonly valid: boolean;
  /**
   * Arbitraries of values for particular attributes, by name (`expression`) or, inside nested
   * blocks, by block and name (`rule.limit`). Values are what the programmatic API takes.
   */
  readonly fields?: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  /** For stages that accept nested `stage.*` blocks: their text. None by default. */
  readonly nestedStages?: fc.Arbitrary<readonly string[]>;
}

/** A value as config text and as the programmatic value. */
interface Rendered {
  readonly text: string;
  readonly value: unknown;
}

type Statement =
  | { readonly kind: 'attribute'; readonly name: string; readonly rendered: Rendered }
  | { readonly kind: 'block'; readonly name: string; readonly spec: NestedBlockSpec; readonly body: readonly Statement[] }
  | { readonly kind: 'raw'; readonly text: string };

/**
 * Configs for a stage generated from its schema.
 *
 * @example
 * fc.assert(fc.property(stageConfig(drop, { valid: false }), ({ text }) => { … }));
 * stageConfig(sampling, { valid: true, fields: { rate: fc.double({ min: 0, max: 1, noNaN: true }) } })
 */
export function stageConfig(stage: StageDefinition<any> | StageFactory<any>, options: StageConfigOptions): fc.Arbitrary<GeneratedConfig> {
  const def = definitionOf(stage);
  const overrides = options.fields ?? {};
  const nested = def.stages ? (options.nestedStages ?? fc.constant([])) : fc.constant([] as readonly string[]);
  const valid = fc.tuple(blockBody(def, overrides, ''), nested).map(([body, stages]) => ({ body, stages }));
  if (options.valid) return valid.map(({ body, stages }) => ({ text: renderStage(def.name, body, stages), object: objectOf(body) }));
  return fc.tuple(valid, fc.oneof(...mutations(def, overrides))).map(([{ body, stages }, mutate]) => {
    const broken = mutate(body);
    return {
      text: renderStage(def.name, broken.body, stages),
      object: broken.objectExpressible ? objectOf(broken.body) : undefined,
      invalid: broken.reason,
    };
  });
}

/** Every required field, a random selection of the optional ones, and nested blocks. */
function blockBody(spec: BlockSpec, overrides: Readonly<Record<string, fc.Arbitrary<unknown>>>, prefix: string): fc.Arbitrary<Statement[]> {
  const attributes: fc.Arbitrary<Statement | undefined>[] = [];
  for (const [name, field] of Object.entries(spec.fields)) {
    const value = valueFor(field, overrides[prefix + name]);
    if (value === undefined) {
      if (field.required)
        throw new Error(`stageConfig: cannot generate a value for required attribute "${prefix + name}" of type ${field.kind.type}`);
      continue;
    }
    const statement = value.map((rendered): Statement => ({ kind: 'attribute', name, rendered }));
    attributes.push(field.required ? statement : fc.option(statement, { nil: undefined }));
  }
  const blocks: fc.Arbitrary<Statement[]>[] = [];
  for (const [name, nested] of Object.entries(spec.blocks ?? {})) {
    const min = nested.required ? 1 : 0;
    const max = nested.multiple ? 2 : 1;
    const instance = blockBody(nested, overrides, `${name}.`).map((body): Statement => ({ kind: 'block', name, spec: nested, body }));
    blocks.push(fc.array(instance, { minLength: min, maxLength: max }));
  }
  return fc
    .tuple(fc.tuple(...attributes), fc.tuple(...blocks))
    .map(([attrs, nestedBlocks]) => [...attrs.filter((a): a is Statement => a !== undefined), ...nestedBlocks.flat()]);
}

function valueFor(field: FieldSpec, override: fc.Arbitrary<unknown> | undefined): fc.Arbitrary<Rendered> | undefined {
  if (override) return override.map((value) => ({ text: renderValue(value), value }));
  if (field.oneOf && field.kind.type === 'string') return fc.constantFrom(...field.oneOf).map(renderedString);
  return validValue(field.kind);
}

const renderedString = (value: string): Rendered => ({ text: quoteGoString(value), value });
const renderedNumber = (value: number): Rendered => ({ text: renderNumber(value), value });

const GO_DURATION_UNITS = ['ns', 'us', 'µs', 'ms', 's', 'm', 'h'] as const;
/** Go duration strings: `0s`, `150ms`, `1.5s`, `1h30m`. */
const goDuration: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.nat(1000), fc.constantFrom(...GO_DURATION_UNITS)).map(([n, unit]) => `${n}${unit}`),
  fc
    .tuple(fc.nat(99), fc.integer({ min: 1, max: 9 }), fc.constantFrom('s', 'm', 'ms'))
    .map(([whole, tenth, unit]) => `${whole}.${tenth}${unit}`),
  fc.tuple(fc.integer({ min: 1, max: 48 }), fc.nat(59)).map(([h, m]) => `${h}h${m}m`),
);

/** Keys of generated maps: text that can sit between the quotes of an object key verbatim. */
const mapKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('app', 'level', 'env', 'msg', 'k8s.io/app', 'é'),
  fc.stringMatching(/^[a-z_][a-z0-9_.-]{0,7}$/),
);

function validValue(kind: FieldType): fc.Arbitrary<Rendered> | undefined {
  switch (kind.type) {
    case 'string':
      return fc
        .oneof(fc.constantFrom('', 'level', 'app', '.*', 'msg'), fc.string({ unit: anyCharacter, maxLength: 10 }))
        .map(renderedString);
    case 'number':
      return fc
        .oneof(
          fc.constantFrom(0, 1, 0.5, -1, 1e21),
          fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
        )
        .map(renderedNumber);
    case 'int':
      return fc.oneof(fc.constantFrom(0, 1, 100), fc.integer({ min: -10, max: 100_000 })).map(renderedNumber);
    case 'bool':
      return fc.boolean().map((value) => ({ text: String(value), value }));
    case 'duration':
      return goDuration.map(renderedString);
    case 'any':
      return fc.oneof(
        fc.string({ unit: anyCharacter, maxLength: 6 }).map(renderedString),
        fc.integer({ min: -5, max: 5 }).map(renderedNumber),
        fc.boolean().map((value) => ({ text: String(value), value })),
      );
    case 'list': {
      const item = validValue(kind.of);
      if (!item) return undefined;
      return fc
        .array(item, { maxLength: 3 })
        .map((items) => ({ text: `[${items.map((i) => i.text).join(', ')}]`, value: items.map((i) => i.value) }));
    }
    case 'map': {
      const item = validValue(kind.of);
      if (!item) return undefined;
      return fc.uniqueArray(fc.tuple(mapKey, item), { selector: ([key]) => key, maxLength: 3 }).map((pairs) => ({
        text: `{ ${pairs.map(([key, v]) => `${quoteKey(key)} = ${v.text}`).join(', ')} }`,
        value: ownRecord(pairs.map(([key, v]) => [key, v.value])),
      }));
    }
    case 'capsule':
      return undefined;
  }
}

type Mutation = (body: Statement[]) => { body: Statement[]; reason: string; objectExpressible: boolean };

/** The ways a config can break the schema, each one the decoder must reject. */
function mutations(def: StageDefinition<any>, overrides: Readonly<Record<string, fc.Arbitrary<unknown>>>): fc.Arbitrary<Mutation>[] {
  const found: fc.Arbitrary<Mutation>[] = [
    fc.constant<Mutation>((body) => ({
      body: [...body, { kind: 'raw', text: 'no_such_attribute = 1' }],
      reason: 'unknown attribute "no_such_attribute"',
      objectExpressible: false,
    })),
    fc.constant<Mutation>((body) => ({
      body: [...body, { kind: 'raw', text: 'no_such_block { }' }],
      reason: 'unknown block "no_such_block"',
      objectExpressible: false,
    })),
  ];
  for (const [name, field] of Object.entries(def.fields)) {
    const wrong = wrongValues(field);
    if (wrong.length > 0) {
      found.push(
        fc.constantFrom(...wrong).map(
          (text): Mutation =>
            (body) => ({
              body: [...body.filter((s) => !(s.kind === 'attribute' && s.name === name)), { kind: 'raw', text: `${name} = ${text}` }],
              reason: `attribute "${name}" has a value of the wrong type or format: ${text}`,
              objectExpressible: false,
            }),
        ),
      );
    }
    const value = valueFor(field, overrides[name]);
    if (value) {
      found.push(
        value.map(
          (rendered): Mutation =>
            (body) => ({
              body: [
                ...body.filter((s) => !(s.kind === 'attribute' && s.name === name)),
                { kind: 'attribute', name, rendered },
                { kind: 'attribute', name, rendered },
              ],
              reason: `attribute "${name}" written twice`,
              objectExpressible: false,
            }),
        ),
      );
    }
    if (field.required) {
      found.push(
        fc.constant<Mutation>((body) => ({
          body: body.filter((s) => !(s.kind === 'attribute' && s.name === name)),
          reason: `required attribute "${name}" missing`,
          objectExpressible: true,
        })),
      );
    }
  }
  for (const [name, nested] of Object.entries(def.blocks ?? {})) {
    if (nested.required) {
      found.push(
        fc.constant<Mutation>((body) => ({
          body: body.filter((s) => !(s.kind === 'block' && s.name === name)),
          reason: `required block "${name}" missing`,
          objectExpressible: true,
        })),
      );
    }
  }
  return found;
}

/** Literals of the wrong type (or an unparsable format) for a field. */
function wrongValues(field: FieldSpec): string[] {
  switch (field.kind.type) {
    case 'string':
      // Numbers are converted to text, so they are not wrong for a string.
      return field.oneOf ? ['true', '"not-one-of-the-allowed-values"'] : ['true', '[1]', '{ a = 1 }'];
    case 'number':
      return ['"1"', 'true', '[1]'];
    case 'int':
      return ['"1"', 'true', '1.5'];
    case 'bool':
      return ['"true"', '1'];
    case 'duration':
      return ['5', '"5 parsecs"', '"1h-"', '"-"'];
    case 'bytes':
      return ['true', '"5 parsecs"'];
    case 'list':
      return ['"x"', '{ a = 1 }', field.kind.of.type === 'string' ? '[true]' : '["x", true]'];
    case 'map':
      return ['[1]', '"x"'];
    case 'capsule':
      return ['"x"'];
    case 'any':
      return [];
  }
}

function renderStage(name: string, body: readonly Statement[], stages: readonly string[]): string {
  const lines = [`stage.${name} {`, ...renderBody(body, '  '), ...stages.flatMap((s) => s.split('\n').map((l) => `  ${l}`)), '}'];
  return lines.join('\n') + '\n';
}

function renderBody(body: readonly Statement[], indent: string): string[] {
  return body.flatMap((s) => {
    if (s.kind === 'raw') return [indent + s.text];
    if (s.kind === 'attribute') return [`${indent}${s.name} = ${s.rendered.text}`];
    return [`${indent}${s.name} {`, ...renderBody(s.body, indent + '  '), `${indent}}`];
  });
}

function objectOf(body: readonly Statement[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of body) {
    if (s.kind === 'attribute') out[s.name] = s.rendered.value;
    else if (s.kind === 'block') {
      const key = s.spec.key ?? s.name;
      if (s.spec.multiple) out[key] = [...((out[key] as unknown[] | undefined) ?? []), objectOf(s.body)];
      else out[key] = objectOf(s.body);
    }
  }
  return out;
}

/** A JS value (as the programmatic API takes it) in config-language syntax. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return quoteGoString(value);
  if (typeof value === 'number') return renderNumber(value);
  if (typeof value === 'boolean') return String(value);
  // A bigint is a duration in nanoseconds, which the config language writes as a Go duration.
  if (typeof value === 'bigint') return quoteGoString(`${value}ns`);
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(renderValue).join(', ')}]`;
  if (typeof value === 'object')
    return `{ ${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${quoteKey(k)} = ${renderValue(v)}`)
      .join(', ')} }`;
  throw new Error(`cannot write ${typeof value} in the config language`);
}

function renderNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`cannot write ${n} in the config language`);
  return n < 0 ? `-${String(-n)}` : String(n);
}

function quoteKey(key: string): string {
  // A quoted object key is taken verbatim (no escapes), so only keys without `"`, `\` or a line break can be written.
  if (/["\\\n\r]/.test(key)) throw new Error(`cannot write the object key ${JSON.stringify(key)} in the config language`);
  return `"${key}"`;
}

function ownRecord(pairs: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of pairs) Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  return out;
}
