/**
 * Invariant helpers: each runs a fast-check property over a stage (a `defineStage` factory), a
 * config (fixed, or an arbitrary of configs) and generated streams of entries on virtual time.
 * On failure they throw an `InvariantError` whose message names the invariant and the stage and
 * shows the shrunk counterexample: the config, the input entries and the output.
 *
 * @example
 * it('never adds entries', () => neverAddsEntries(drop, { expression: '^debug' }));
 */
import fc from 'fast-check';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { labelsKey } from '../core/entry.js';
import { ConfigError, ConfigErrors, type Position } from '../lib/config/errors.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import { loadStageList } from '../core/process.js';
import type { StageFactory, StageSpec } from '../core/stage.js';
import { Registry } from 'prom-client';
import { entryStream, type TimedEntry } from './arbitraries.js';
import { describeConfig, describeInputs, describeOutputs, entryDifferences, showValue, type EntryField } from './describe.js';
import { runSpec, seededRandom, stageSpec, type StageConfigInput, type StageRun } from './run-stage.js';
import { stageConfig } from './stage-config.js';

/** A fixed config or an arbitrary of configs (objects or `stage.<name> { … }` text). */
export type ConfigArg<C> = StageConfigInput<C> | fc.Arbitrary<StageConfigInput<C>>;

export interface InvariantOptions {
  /** Input streams; default `entryStream()`. Plain entries all arrive at time 0. */
  readonly inputs?: fc.Arbitrary<readonly (Entry | TimedEntry)[]>;
  /** Runs of the property; default 30, or `FC_NUM_RUNS` from the environment (which wins). */
  readonly numRuns?: number;
  /** Replays a reported failure: the `seed` and `path` of its message. */
  readonly seed?: number;
  readonly path?: string;
  readonly startNs?: bigint;
  /** The stage's random source; by default each run draws a seeded one, so failures replay. */
  readonly random?: () => number;
}

/** Thrown when an invariant does not hold; the message is the whole report. */
export class InvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantError';
  }
}

/** A violation found in one run, carried out of the fast-check predicate. */
class Violation extends Error {
  constructor(
    readonly explanation: string,
    readonly run: StageRun | undefined,
    readonly extra: string | undefined,
  ) {
    super(explanation);
  }
}

/** The number of runs: `FC_NUM_RUNS` from the environment, else the option, else `fallback`. */
export function numRunsFor(requested: number | undefined, fallback = 30): number {
  const fromEnv = typeof process !== 'undefined' ? process.env.FC_NUM_RUNS : undefined;
  return fromEnv ? Number(fromEnv) : (requested ?? fallback);
}

/** What a check says about one run: nothing when it holds, else why not (and more to show). */
type Check<C> = (
  run: StageRun,
  again: (inputs: readonly TimedEntry[]) => StageRun,
  config: StageConfigInput<C>,
) => { why: string; extra?: string } | undefined;

function isArbitrary<T>(value: unknown): value is fc.Arbitrary<T> {
  return value instanceof fc.Arbitrary;
}

/** Runs `check` as a property and turns a failure into a readable InvariantError. */
function assertInvariant<C>(
  invariant: string,
  stage: StageFactory<C>,
  config: ConfigArg<C>,
  options: InvariantOptions,
  check: Check<C>,
): void {
  const name = `stage.${stage.definition.name}`;
  // A fixed config is resolved once, so a config the stage rejects fails at once and plainly.
  const fixedSpec = isArbitrary(config) ? undefined : stageSpec(stage, config);
  const configs: fc.Arbitrary<StageConfigInput<C>> = isArbitrary<StageConfigInput<C>>(config) ? config : fc.constant(config);
  const inputs = options.inputs ?? entryStream();
  const property = fc.property(configs, inputs, fc.integer(), (cfg, items, randomSeed) => {
    const spec = fixedSpec ?? specOrSkip(stage, cfg);
    const runOptions = { startNs: options.startNs, random: options.random ?? seededRandom(randomSeed) };
    let run: StageRun;
    try {
      run = runSpec(spec, items, runOptions);
    } catch (err) {
      throw new Violation(`running the stage threw ${describeError(err)}`, undefined, undefined);
    }
    if (run.error) throw new Violation(`the stage errored: ${describeError(run.error.value)}`, run, undefined);
    const again = (next: readonly TimedEntry[]) =>
      runSpec(spec, next, { ...runOptions, random: options.random ?? seededRandom(randomSeed) });
    const failure = check(run, again, cfg);
    if (failure) throw new Violation(failure.why, run, failure.extra);
  });
  const details = fc.check(property, { numRuns: numRunsFor(options.numRuns), seed: options.seed, path: options.path });
  if (!details.failed) return;
  if (details.counterexample === null) {
    throw new InvariantError(
      `${invariant} could not be checked for ${name}: ${details.numSkips} generated configs were rejected by the stage; give configs it accepts`,
    );
  }
  const [cfg, items] = details.counterexample;
  const violation = details.errorInstance instanceof Violation ? details.errorInstance : undefined;
  const why = violation?.explanation ?? `the property threw ${describeError(details.errorInstance)}`;
  const lines = [`${invariant} does not hold for ${name}: ${why}`, `config:${describeConfig(cfg)}`];
  const run = violation?.run;
  if (run) {
    lines.push(describeInputs(run.inputs, run.arrivalsMs), describeOutputs(run.outputs, run.origins, run.emittedAtMs));
  } else {
    const timed = items.map((i) => ('entry' in i && 'atMs' in i ? i : { atMs: 0, entry: i as Entry }));
    lines.push(
      describeInputs(
        timed.map((t) => t.entry),
        timed.map((t) => t.atMs),
      ),
    );
  }
  if (violation?.extra) lines.push(violation.extra);
  lines.push(
    `replay with { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} } (shrunk ${details.numShrinks} times)`,
  );
  throw new InvariantError(lines.join('\n'));
}

function specOrSkip<C>(stage: StageFactory<C>, config: StageConfigInput<C>): StageSpec {
  try {
    return stageSpec(stage, config);
  } catch (err) {
    // Generated configs the stage rejects are not counterexamples: skip them.
    if (err instanceof ConfigError || err instanceof ConfigErrors) fc.pre(false);
    throw err;
  }
}

function describeError(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : showValue(err);
}

/**
 * The stage never emits more entries than it received (filters, parsers, mergers).
 *
 * @example neverAddsEntries(sampling, { rate: 0.5 })
 */
export function neverAddsEntries<C>(stage: StageFactory<C>, config: ConfigArg<C>, options: InvariantOptions = {}): void {
  assertInvariant('neverAddsEntries', stage, config, options, (run) =>
    run.outputs.length > run.inputs.length ? { why: `${run.outputs.length} entries out of ${run.inputs.length} in` } : undefined,
  );
}

export interface OrderOptions extends InvariantOptions {
  /**
   * The stream an input belongs to; default its label set. A stage that splits streams further
   * (cri keeps stdout and stderr apart) names its own streams here.
   */
  readonly streamOf?: (input: Entry) => string;
}

/**
 * Within each stream (by default the label set an entry arrived with), outputs leave in the
 * order of the inputs they came from.
 */
export function preservesOrder<C>(stage: StageFactory<C>, config: ConfigArg<C>, options: OrderOptions = {}): void {
  const streamOf = options.streamOf ?? ((input: Entry) => labelsKey(input.labels));
  assertInvariant('preservesOrder', stage, config, options, (run) => {
    const lastByStream = new Map<string, { output: number; origin: number }>();
    for (let i = 0; i < run.outputs.length; i++) {
      const origin = run.origins[i]!;
      if (origin < 0) continue;
      const stream = streamOf(run.inputs[origin]!);
      const last = lastByStream.get(stream);
      if (last && origin < last.origin) {
        return {
          why: `output #${i} (from input #${origin}) left after output #${last.output} (from input #${last.origin}) of the same stream ${stream}`,
        };
      }
      lastByStream.set(stream, { output: i, origin });
    }
    return undefined;
  });
}

/**
 * Running the stage again on its own output (arriving when it was emitted) changes nothing. Both
 * outputs are compared as a next pipeline would receive them, with their labels seeded into
 * `extracted`: the second run's ingress seeds them too, which is the pipeline's doing, not the
 * stage's.
 *
 * @example idempotent(decolorize, {})
 */
export function idempotent<C>(stage: StageFactory<C>, config: ConfigArg<C>, options: InvariantOptions = {}): void {
  assertInvariant('idempotent', stage, config, options, (run, again) => {
    const second = again(run.outputs.map((entry, i) => ({ atMs: run.emittedAtMs[i]!, entry })));
    const extra = `second run ${describeOutputs(second.outputs, second.origins, second.emittedAtMs)}`;
    if (second.outputs.length !== run.outputs.length)
      return { why: `a second run gave ${second.outputs.length} entries for ${run.outputs.length}`, extra };
    for (let i = 0; i < second.outputs.length; i++) {
      const changes = entryDifferences(ingress(run.outputs[i]!), ingress(second.outputs[i]!));
      if (changes.length > 0) return { why: `a second run changed output #${i}: ${changes.join('; ')}`, extra };
    }
    return undefined;
  });
}

/**
 * Every output keeps the given fields exactly as its input had them (after the pipeline's
 * ingress, which seeds the labels into `extracted`).
 *
 * @example doesNotTouch(labelDrop, { values: ['app'] }, ['line', 'timestamp'])
 */
export function doesNotTouch<C>(
  stage: StageFactory<C>,
  config: ConfigArg<C>,
  fields: readonly EntryField[],
  options: InvariantOptions = {},
): void {
  assertInvariant(`doesNotTouch(${fields.join(', ')})`, stage, config, options, (run) => {
    for (let i = 0; i < run.outputs.length; i++) {
      const origin = run.origins[i]!;
      if (origin < 0) continue;
      const changes = entryDifferences(run.inputs[origin]!, run.outputs[i]!, fields);
      if (changes.length > 0) return { why: `output #${i} (from input #${origin}) changed ${changes.join('; ')}` };
    }
    return undefined;
  });
}

/**
 * A bound on each output. `bound` gets the output, the input it came from (undefined when that
 * cannot be told) and the config; it returns true when the output is within bounds, and false
 * or a description of what is wrong otherwise.
 *
 * @example outputWithinBounds(truncate, config, (out) => Buffer.byteLength(out.line) <= 10 || 'line longer than 10 bytes')
 */
export function outputWithinBounds<C>(
  stage: StageFactory<C>,
  config: ConfigArg<C>,
  bound: (output: Entry, input: Entry | undefined, config: StageConfigInput<C>) => boolean | string,
  options: InvariantOptions = {},
): void {
  assertInvariant('outputWithinBounds', stage, config, options, (run, _again, cfg) => {
    for (let i = 0; i < run.outputs.length; i++) {
      const origin = run.origins[i]!;
      const verdict = bound(run.outputs[i]!, origin >= 0 ? run.inputs[origin] : undefined, cfg);
      if (verdict !== true) return { why: `output #${i} is out of bounds${typeof verdict === 'string' ? `: ${verdict}` : ''}` };
    }
    return undefined;
  });
}

export interface ConfigErrorOptions {
  /** More config texts the stage must reject (beyond the schema mistakes generated for it). */
  readonly invalid?: fc.Arbitrary<string> | readonly string[];
  /** Arbitraries for attributes of the generated valid configs (see `stageConfig`). */
  readonly fields?: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  /** Nested stage blocks for stages that accept them. */
  readonly nestedStages?: fc.Arbitrary<readonly string[]>;
  readonly numRuns?: number;
  readonly seed?: number;
  readonly path?: string;
}

/** The file name configs are checked against. */
const CHECKED_FILE = 'config.alloy';

/**
 * Every config the stage rejects — schema mistakes generated from its fields, schema-valid
 * configs its validation refuses, and the `invalid` texts given — is rejected with config errors
 * that carry `config.alloy:LINE:COL` inside the config and name the stage's block; never with a
 * plain exception. Configs with a schema mistake and the `invalid` ones must be rejected.
 */
export function configErrorsArePositioned<C>(stage: StageFactory<C>, options: ConfigErrorOptions = {}): void {
  const def = stage.definition;
  const name = `stage.${def.name}`;
  const given =
    options.invalid === undefined
      ? []
      : isArbitrary<string>(options.invalid)
        ? [options.invalid]
        : options.invalid.length > 0
          ? [fc.constantFrom(...options.invalid)]
          : [];
  const candidates = fc.oneof(
    stageConfig(def, { valid: false, fields: options.fields, nestedStages: options.nestedStages }).map((c) => ({
      text: c.text,
      mustFail: c.invalid as string | undefined,
    })),
    stageConfig(def, { valid: true, fields: options.fields, nestedStages: options.nestedStages }).map((c) => ({
      text: c.text,
      mustFail: undefined as string | undefined,
    })),
    ...given.map((texts) => texts.map((text) => ({ text, mustFail: 'given as invalid' as string | undefined }))),
  );
  const property = fc.property(candidates, ({ text, mustFail }) => {
    const why = rejectionProblem(text, name, mustFail);
    if (why !== undefined) throw new Violation(why, undefined, undefined);
  });
  const details = fc.check(property, { numRuns: numRunsFor(options.numRuns), seed: options.seed, path: options.path });
  if (!details.failed || details.counterexample === null) return;
  const [{ text }] = details.counterexample;
  const why = details.errorInstance instanceof Violation ? details.errorInstance.explanation : describeError(details.errorInstance);
  throw new InvariantError(
    [
      `configErrorsArePositioned does not hold for ${name}: ${why}`,
      `config:${describeConfig(text)}`,
      `replay with { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} } (shrunk ${details.numShrinks} times)`,
    ].join('\n'),
  );
}

/** What is wrong with how `text` is accepted or rejected, or undefined when all is well. */
function rejectionProblem(text: string, name: string, mustFail: string | undefined): string | undefined {
  let errors: ConfigError[];
  try {
    const specs = loadStageList(text, CHECKED_FILE);
    buildPipeline(specs, { clock: new ManualClock(), registry: new Registry() }).dispose();
    return mustFail === undefined ? undefined : `the config was accepted, but it must be rejected (${mustFail})`;
  } catch (err) {
    if (err instanceof ConfigErrors) errors = [...err.errors];
    else if (err instanceof ConfigError) errors = [err];
    else return `the config was rejected with ${describeError(err)} instead of a positioned config error`;
  }
  if (errors.length === 0) return 'the config was rejected with an empty list of errors';
  const lineCount = text.split('\n').length;
  for (const error of errors) {
    if (!isInside(error.pos, lineCount)) return `the error ${JSON.stringify(error.message)} has no position inside the config`;
    if (!error.blockPath.includes(name)) return `the error ${JSON.stringify(error.message)} does not name the block ${name}`;
  }
  return undefined;
}

function isInside(pos: Position | undefined, lineCount: number): boolean {
  return pos !== undefined && pos.file === CHECKED_FILE && pos.line >= 1 && pos.line <= lineCount && pos.col >= 1;
}
