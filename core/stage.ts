import { Observable, type OperatorFunction } from 'rxjs';
import type { Block } from '../lib/config/ast.js';
import type { EvalScope } from '../lib/config/evaluate.js';
import type { Clock } from './clock.js';
import type { HandBack } from './hand-back.js';
import type { InputTime } from './input-time.js';
import type { Entry } from './entry.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import type { ProcessMetrics } from './metrics.js';
import { applyDefaults, decodeBlock, placeError, type BlockSpec, type DecodedBlock, type StageBlock } from '../lib/config/schema.js';
import type { Sandbox } from './sandbox.js';
import type { PipelineTracer, StageEffects } from './trace.js';
import { didYouMean } from '../lib/suggest.js';
import type { StagePartitioning } from './stage-partitioning.js';

/**
 * What a built stage is. Per-entry stages (transforms and filters) expose their function so the
 * pipeline builder fuses runs of them into one operator; stages that hold, split or time entries
 * are full RxJS operators.
 */
export type StageImpl =
  | {
      readonly kind: 'map';
      /** Mutates the entry in place and returns it, or returns null to drop it. */
      readonly process: (entry: Entry) => Entry | null;
      readonly dispose?: () => void;
    }
  | {
      readonly kind: 'operator';
      readonly operator: OperatorFunction<Entry, Entry>;
      readonly dispose?: () => void;
      /**
       * Settles once the entries the stage is holding back for timing reasons (a waiting limit)
       * have been released, so a component can acknowledge a batch only then.
       */
      readonly pending?: () => Promise<void>;
      /**
       * Settles once every entry the stage held back when called (a multiline block still open)
       * has been sent on. Unlike `pending` it may take as long as the stage's own wait (a
       * block's `max_wait_time`), so only senders that ask wait for it (see `SendOptions`).
       */
      readonly held?: () => Promise<void>;
    };

/** What a stage may use while it is built: its clock, the shared counters, randomness, nesting. */
export interface BuildContext {
  readonly clock: Clock;
  /**
   * The time a stage measures idle input on: it stands still while input is queued upstream (see
   * core/input-time.ts). Absent, the clock's scheduler time is meant.
   */
  readonly input?: InputTime;
  /**
   * The hand-back of the batch being pushed now, if its sender may take back what a stage still
   * holds of it (see core/hand-back.ts); a stage that holds entries drops them when it is requested.
   */
  readonly currentHandBack?: () => HandBack | undefined;
  readonly metrics: ProcessMetrics;
  /** Uniform in [0, 1); injectable so sampling is deterministic in tests. */
  readonly random: () => number;
  /** Builds a nested pipeline (stage.match) with the same context. */
  buildNested(stages: readonly StageSpec[], path: readonly string[]): BuiltPipeline;
  readonly trace?: PipelineTracer;
  /**
   * Set only while tracing: a per-entry stage notes here what it did outside the entry (a metric
   * series it updated), so `--inspect` and the playground can show it.
   */
  readonly effects?: StageEffects;
  /** Debug-level diagnostics; silent unless a logger is configured. */
  readonly debug: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * Set when the config comes from someone untrusted (the playground): stages then read no
   * environment variable, resolve no host name and open only the files it lists.
   */
  readonly sandbox?: Sandbox;
}

export interface StageDefinition<C = Record<string, unknown>> extends BlockSpec {
  /** The name after `stage.`: `json`, `multiline`. */
  readonly name: string;
  /** One or two sentences for the docs and the playground's hover help. */
  readonly doc: string;
  /**
   * A valid config showing the stage in use (one or more `stage.*` blocks), for the reference
   * docs; without it the docs show a minimal block made from the required fields.
   */
  readonly example?: string;
  /** Pure validation of a decoded config: throws FieldError/ConfigError, never half-builds. */
  readonly validate?: (config: C) => void;
  /** Precompiles everything expensive (regexes, templates, JMESPath) and returns the stage. */
  readonly build: (config: C, ctx: BuildContext) => StageImpl;
  /**
   * The stage's state and the labels it may change, so `rivulet run` can spread a stage list over
   * threads by label. A stage that leaves it out is taken to keep one state for all entries (the
   * list then runs on one thread).
   */
  readonly partitioning?: (config: C) => StagePartitioning;
  /** Marks stages that must never be dropped from a reload comparison (none yet). */
  readonly deprecated?: string;
}

/** A stage ready to be built: its definition, its decoded config and where it came from. */
export interface StageSpec {
  readonly def: StageDefinition<any>;
  readonly config: Record<string, unknown>;
  readonly path: readonly string[];
  readonly block?: Block;
  readonly decoded?: DecodedBlock;
}

/** The result of building a list of stages. */
export interface BuiltPipeline {
  readonly operator: OperatorFunction<Entry, Entry>;
  /** Present when every stage is per-entry: the whole pipeline as one function. */
  readonly process?: (entry: Entry) => Entry | null;
  /** Settles when no stage holds entries back any more (see StageImpl `pending`). */
  pending(): Promise<void>;
  /** Settles once every entry held when called has been sent on (see StageImpl `held`). */
  held(): Promise<void>;
  dispose(): void;
}

const registry = new Map<string, StageDefinition<any>>();

/** A programmatic stage: an RxJS operator that also carries its spec so `pipeline()` can fuse it. */
export type StageOperator = OperatorFunction<Entry, Entry> & { readonly spec: StageSpec };

/**
 * What a stage factory takes: the stage's config, every field optional (defaults apply), and a
 * duration given either in nanoseconds or as a Go duration string (`max_wait_time: '3s'`).
 */
export type StageFactoryConfig<C> = { [K in keyof C]?: C[K] extends bigint ? bigint | string : C[K] } & Record<string, unknown>;

/** The factory `defineStage` returns: `json({ expressions: { level: '' } })`. */
export type StageFactory<C> = ((config: StageFactoryConfig<C>) => StageOperator) & {
  readonly definition: StageDefinition<C>;
};

/**
 * Registers a stage once: the same definition serves config files (`stage.<name> { … }`), the
 * programmatic API and the playground. Returns the programmatic factory.
 */
export function defineStage<C>(def: StageDefinition<C>): StageFactory<C> {
  if (registry.has(def.name) && registry.get(def.name) !== def) throw new Error(`stage "${def.name}" is already defined`);
  registry.set(def.name, def as StageDefinition<any>);
  const factory = (config: StageFactoryConfig<C>): StageOperator => {
    const spec = specFromObject(def as StageDefinition<any>, config as Record<string, unknown>);
    // Used on its own (outside pipeline()), the stage builds lazily with the default context.
    const operator = ((source: Observable<Entry>) => {
      const built = defaultBuilder()([spec], []);
      return new Observable<Entry>((subscriber) => {
        const sub = built.operator(source).subscribe(subscriber);
        return () => {
          sub.unsubscribe();
          built.dispose();
        };
      });
    }) as StageOperator;
    Object.defineProperty(operator, 'spec', { value: spec });
    return operator;
  };
  Object.defineProperty(factory, 'definition', { value: def });
  return factory as StageFactory<C>;
}

/** Removes a stage from the registry (for tests of custom stages). */
export function unregisterStage(name: string): void {
  registry.delete(name);
}

export function stageDefinition(name: string): StageDefinition<any> | undefined {
  return registry.get(name);
}

export function stageDefinitions(): StageDefinition<any>[] {
  return [...registry.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function specFromObject(def: StageDefinition<any>, config: Record<string, unknown>): StageSpec {
  const path = [`stage.${def.name}`];
  const withDefaults = applyDefaults(def, normalizeNested(config), path);
  try {
    def.validate?.(withDefaults);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(err.reason, undefined, path);
    throw err;
  }
  return { def, config: withDefaults, path };
}

function normalizeNested(config: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(config.stages)) return config;
  return {
    ...config,
    stages: (config.stages as unknown[]).map((s) => (typeof s === 'function' && 'spec' in s ? (s as StageOperator).spec : s)),
  };
}

/** Decodes a `stage.<name>` block into a spec, with positioned errors. Nested stages recurse. */
export function decodeStageBlock(stage: StageBlock, scope: EvalScope): StageSpec {
  const { block, path } = stage;
  const name = block.name.slice('stage.'.length);
  const def = registry.get(name);
  if (!def || block.name.split('.').length !== 2)
    throw new ConfigError(
      `unrecognized block name "${block.name}"${didYouMean(name, registry.keys(), (n) => `"stage.${n}"`)}`,
      block.pos,
      path.slice(0, -1),
    );
  if (block.label !== undefined)
    throw new ConfigError(`block "${block.name}" does not support specifying labels`, block.pos, path.slice(0, -1));
  const decoded = decodeBlock(block, def, scope, path);
  const config = decoded.values;
  if (def.stages) config.stages = decodeStageBlocks(decoded.stageBlocks, scope);
  validateSpec(def, config, block, decoded, path);
  return { def, config, path, block, decoded };
}

/** Decodes a list of stage blocks, collecting every error. */
export function decodeStageBlocks(stages: readonly StageBlock[], scope: EvalScope): StageSpec[] {
  const errors: ConfigError[] = [];
  const specs: StageSpec[] = [];
  for (const stage of stages) {
    try {
      specs.push(decodeStageBlock(stage, scope));
    } catch (err) {
      if (err instanceof ConfigErrors) errors.push(...err.errors);
      else if (err instanceof ConfigError) errors.push(err);
      else throw err;
    }
  }
  if (errors.length > 0) throw new ConfigErrors(errors);
  return specs;
}

function validateSpec(
  def: StageDefinition<any>,
  config: Record<string, unknown>,
  block: Block,
  decoded: DecodedBlock,
  path: readonly string[],
): void {
  try {
    def.validate?.(config);
  } catch (err) {
    if (err instanceof ConfigError) throw placeError(err, block, decoded, path);
    throw err;
  }
}

// The pipeline builder registers itself here so `defineStage` factories can build on their own
// without core/stage importing core/pipeline (which imports this file).
let builder: (() => (stages: readonly StageSpec[], path: readonly string[]) => BuiltPipeline) | undefined;
export function setDefaultBuilder(make: () => (stages: readonly StageSpec[], path: readonly string[]) => BuiltPipeline): void {
  builder = make;
}
function defaultBuilder() {
  if (!builder) throw new Error('the pipeline builder is not loaded');
  return builder();
}
