/**
 * The compliance suite every stage passes, built-in or custom: it completes when its source
 * completes, passes errors on, releases timers and subscriptions on unsubscribe, runs entirely
 * on virtual time, counts the entries it drops in `logs_process_dropped_lines_total`, and
 * rejects invalid configs with positioned errors. Each check is a fast-check property over
 * generated entry streams.
 *
 * @example
 * describe('stage.mask_email compliance', () => {
 *   for (const check of stageCompliance(maskEmail, { configs: [{}, { keep_domain: true }] })) it(check.name, check.run);
 * });
 */
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { Subject, type Subscription } from 'rxjs';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { StageFactory, StageSpec } from '../core/stage.js';
import { entryStream, type TimedEntry } from './arbitraries.js';
import { describeConfig, describeInputs, describeOutputs, entryDifferences, showValue } from './describe.js';
import { configErrorsArePositioned, InvariantError, numRunsFor, type ConfigErrorOptions } from './invariants.js';
import {
  DEFAULT_START_NS,
  droppedLines,
  markOrigin,
  runSpec,
  seededRandom,
  stageSpec,
  takeOrigin,
  type StageConfigInput,
  type StageRun,
} from './run-stage.js';

export interface ComplianceOptions<C> {
  /** Configs every check runs with; default `[{}]` (the stage's defaults). */
  readonly configs?: readonly StageConfigInput<C>[];
  /** Input streams; default `entryStream()`. */
  readonly inputs?: fc.Arbitrary<readonly TimedEntry[]>;
  /**
   * Whether every entry that does not come out is counted as a drop (default true). Stages that
   * merge entries (multiline, cri) or drop without counting because the reference does not count
   * (json's `drop_malformed`) set it to false: then drops are only checked not to exceed the loss.
   */
  readonly countsEveryLoss?: boolean;
  /** The `reason` values the stage may count drops under; any by default. */
  readonly dropReasons?: readonly string[];
  /** For the config check: more invalid texts, field arbitraries, nested stages. */
  readonly configErrors?: ConfigErrorOptions;
  /** Runs per property; default 20, or `FC_NUM_RUNS` from the environment. */
  readonly numRuns?: number;
  readonly seed?: number;
}

/** One check of the suite: a sentence for a test name and the check itself (rejects on failure). */
export interface ComplianceCheck {
  readonly name: string;
  run(): Promise<void>;
}

/** A check's outcome, for runners other than a test framework. */
export interface ComplianceResult {
  readonly name: string;
  readonly passed: boolean;
  readonly error?: Error;
}

/** The checks of the suite for one stage; run each as a test (`it(check.name, check.run)`). */
export function stageCompliance<C>(stage: StageFactory<C>, options: ComplianceOptions<C> = {}): ComplianceCheck[] {
  const configs = options.configs ?? [{} as StageConfigInput<C>];
  const name = `stage.${stage.definition.name}`;
  const suite = new Suite(stage, configs, options);
  return [
    { name: `${name} completes when the source completes`, run: async () => suite.completesWithSource() },
    { name: `${name} propagates errors from the source`, run: async () => suite.propagatesErrors() },
    { name: `${name} releases timers and subscriptions on unsubscribe`, run: async () => suite.releasesOnUnsubscribe() },
    { name: `${name} works on virtual time`, run: async () => suite.worksOnVirtualTime() },
    { name: `${name} counts dropped entries in logs_process_dropped_lines_total`, run: () => suite.countsDrops() },
    {
      name: `${name} rejects invalid configs with positioned errors`,
      run: async () => configErrorsArePositioned(stage, { numRuns: options.numRuns ?? 20, seed: options.seed, ...options.configErrors }),
    },
  ];
}

/** Runs the whole suite and reports each check, without a test framework. */
export async function checkStageCompliance<C>(stage: StageFactory<C>, options: ComplianceOptions<C> = {}): Promise<ComplianceResult[]> {
  const results: ComplianceResult[] = [];
  for (const check of stageCompliance(stage, options)) {
    try {
      await check.run();
      results.push({ name: check.name, passed: true });
    } catch (err) {
      results.push({ name: check.name, passed: false, error: err instanceof Error ? err : new Error(String(err)) });
    }
  }
  return results;
}

const SOURCE_ERROR = new Error('source failed');

/** How a harness run ends its source. */
type Ending = 'complete' | 'error' | 'unsubscribe';

interface Harnessed {
  readonly outputs: Entry[];
  readonly completed: boolean;
  readonly error?: { readonly value: unknown };
  readonly pendingTimers: number;
  readonly sourceObserved: boolean;
}

class Suite<C> {
  private resolved: ReadonlyArray<{ readonly config: StageConfigInput<C>; readonly spec: StageSpec }> | undefined;

  constructor(
    private readonly stage: StageFactory<C>,
    private readonly configs: readonly StageConfigInput<C>[],
    private readonly options: ComplianceOptions<C>,
  ) {}

  /** The configs resolved when a check first runs, so a rejected config fails that check. */
  private get specs() {
    this.resolved ??= this.configs.map((config) => ({ config, spec: stageSpec(this.stage, config) }));
    return this.resolved;
  }

  completesWithSource(): void {
    this.property('completes when the source completes', (spec, inputs, seed) => {
      const run = harness(spec, inputs, 'complete', seed);
      if (run.error) return `the stage errored: ${showError(run.error.value)}`;
      if (!run.completed) return 'the source completed and every timer ran, but the stage did not complete';
      if (run.pendingTimers > 0) return `the stage completed but left ${run.pendingTimers} timers scheduled`;
      return undefined;
    });
  }

  propagatesErrors(): void {
    this.property('propagates errors from the source', (spec, inputs, seed) => {
      const run = harness(spec, inputs, 'error', seed);
      if (run.completed) return 'the source errored, but the stage completed';
      if (!run.error) return 'the source errored, but the stage did not pass the error on';
      if (run.error.value !== SOURCE_ERROR) return `the source errored, but the stage passed on ${showError(run.error.value)} instead`;
      if (run.pendingTimers > 0) return `the stage errored but left ${run.pendingTimers} timers scheduled`;
      return undefined;
    });
  }

  releasesOnUnsubscribe(): void {
    this.property('releases timers and subscriptions on unsubscribe', (spec, inputs, seed) => {
      const run = harness(spec, inputs, 'unsubscribe', seed);
      if (run.pendingTimers > 0) return `${run.pendingTimers} timers were still scheduled after unsubscribe (ManualClock.pendingTimers())`;
      if (run.sourceObserved) return 'the source still had a subscriber after unsubscribe';
      return undefined;
    });
  }

  worksOnVirtualTime(): void {
    this.property('works on virtual time', (spec, inputs, seed) => {
      const realTimers = countRealTimers(() => {
        const first = runSpec(spec, inputs, { random: seededRandom(seed) });
        const second = runSpec(spec, inputs, { random: seededRandom(seed) });
        return { first, second };
      });
      const { first, second } = realTimers.result;
      if (realTimers.count > 0)
        return `the stage started ${realTimers.count} real timers (${realTimers.kinds.join(', ')}) instead of using its clock's scheduler`;
      if (!first.completed) return 'the run did not settle once the virtual clock had run every timer';
      const difference = runDifference(first, second);
      return difference === undefined ? undefined : `two runs with the same input, seed and virtual clock differ: ${difference}`;
    });
  }

  async countsDrops(): Promise<void> {
    const countsEveryLoss = this.options.countsEveryLoss ?? true;
    const reasons = this.options.dropReasons;
    await this.asyncProperty('counts dropped entries in logs_process_dropped_lines_total', async (spec, inputs, seed) => {
      const run = runSpec(spec, inputs, { random: seededRandom(seed) });
      const byReason = await droppedLines(run.registry);
      const counted = Object.values(byReason).reduce((a, b) => a + b, 0);
      const lost = Math.max(0, run.inputs.length - run.outputs.length);
      const unknown = reasons ? Object.keys(byReason).filter((r) => !reasons.includes(r)) : [];
      if (unknown.length > 0)
        return `drops were counted under unexpected reasons ${showValue(unknown)} (expected one of ${showValue(reasons)})`;
      if (Object.keys(byReason).some((r) => r === '')) return 'drops were counted with an empty reason';
      if (countsEveryLoss && counted !== lost)
        return `${lost} entries did not come out, but ${counted} drops were counted ${showValue(byReason)}`;
      if (!countsEveryLoss && counted > lost)
        return `${counted} drops were counted ${showValue(byReason)}, but only ${lost} entries did not come out`;
      return undefined;
    });
  }

  private arbitraries() {
    return fc.tuple(fc.nat(this.specs.length - 1), this.options.inputs ?? entryStream(), fc.integer());
  }

  private property(check: string, predicate: (spec: StageSpec, inputs: readonly TimedEntry[], seed: number) => string | undefined): void {
    const details = fc.check(
      fc.property(this.arbitraries(), ([index, inputs, seed]) => {
        const why = predicate(this.specs[index]!.spec, inputs, seed);
        if (why !== undefined) throw new Error(why);
      }),
      { numRuns: numRunsFor(this.options.numRuns, 20), seed: this.options.seed },
    );
    if (details.failed) this.fail(check, details);
  }

  private async asyncProperty(
    check: string,
    predicate: (spec: StageSpec, inputs: readonly TimedEntry[], seed: number) => Promise<string | undefined>,
  ): Promise<void> {
    const details = await fc.check(
      fc.asyncProperty(this.arbitraries(), async ([index, inputs, seed]) => {
        const why = await predicate(this.specs[index]!.spec, inputs, seed);
        if (why !== undefined) throw new Error(why);
      }),
      { numRuns: numRunsFor(this.options.numRuns, 20), seed: this.options.seed },
    );
    if (details.failed) this.fail(check, details);
  }

  private fail(check: string, details: fc.RunDetails<[[number, readonly TimedEntry[], number]]>): never {
    const name = `stage.${this.stage.definition.name}`;
    if (details.counterexample === null) throw new InvariantError(`stage compliance (${check}) could not be checked for ${name}`);
    const [[index, inputs, seed]] = details.counterexample;
    const { config, spec } = this.specs[index]!;
    const why = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    const lines = [`stage compliance (${check}) fails for ${name}: ${why}`, `config:${describeConfig(config)}`];
    try {
      const run = runSpec(spec, inputs, { random: seededRandom(seed) });
      lines.push(describeInputs(run.inputs, run.arrivalsMs), describeOutputs(run.outputs, run.origins, run.emittedAtMs));
    } catch {
      lines.push(
        describeInputs(
          inputs.map((i) => i.entry),
          inputs.map((i) => i.atMs),
        ),
      );
    }
    lines.push(`replay with { seed: ${details.seed} } (shrunk ${details.numShrinks} times)`);
    throw new InvariantError(lines.join('\n'));
  }
}

/**
 * Pushes the inputs on a ManualClock, then ends the source: completes it, errors it, or
 * unsubscribes while it is still open. Completion and error run every timer first.
 */
function harness(spec: StageSpec, inputs: readonly TimedEntry[], ending: Ending, seed: number): Harnessed {
  const clock = new ManualClock(DEFAULT_START_NS);
  const built = buildPipeline([spec], { clock, registry: new Registry(), random: seededRandom(seed) });
  const source = new Subject<Entry>();
  const outputs: Entry[] = [];
  let completed = false;
  let error: { value: unknown } | undefined;
  let subscription: Subscription | undefined;
  try {
    subscription = built.operator(source).subscribe({
      next: (entry) => {
        takeOrigin(entry);
        outputs.push(entry);
      },
      error: (value) => (error = { value }),
      complete: () => (completed = true),
    });
    inputs.forEach(({ atMs, entry }, index) => {
      clock.advanceTo(Math.max(clock.now(), atMs));
      const copy = ingress(entry);
      markOrigin(copy, index);
      source.next(copy);
    });
    if (ending === 'complete') source.complete();
    else if (ending === 'error') source.error(SOURCE_ERROR);
    if (ending !== 'unsubscribe') clock.runAll();
  } finally {
    subscription?.unsubscribe();
    built.dispose();
  }
  return { outputs, completed, error, pendingTimers: clock.pendingTimers(), sourceObserved: source.observed };
}

/**
 * Calls `body` with the global timer functions replaced by counting stand-ins (the real ones are
 * put back before returning): a stage on virtual time must not start any.
 */
function countRealTimers<T>(body: () => T): { result: T; count: number; kinds: string[] } {
  const names = ['setTimeout', 'setInterval', 'setImmediate'] as const;
  const clearers = { setTimeout: clearTimeout, setInterval: clearInterval, setImmediate: clearImmediate } as const;
  const globals = globalThis as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = names.map((n) => globals[n]!);
  const started: Array<{ kind: (typeof names)[number]; handle: unknown }> = [];
  names.forEach((kind, i) => {
    globals[kind] = (...args: unknown[]) => {
      const handle = originals[i]!(...args);
      started.push({ kind, handle });
      return handle;
    };
  });
  try {
    return { result: body(), count: started.length, kinds: [...new Set(started.map((s) => s.kind))] };
  } finally {
    names.forEach((kind, i) => (globals[kind] = originals[i]!));
    // The check has failed already; the timers must not fire into later tests.
    for (const { kind, handle } of started) (clearers[kind] as (h: unknown) => void)(handle);
  }
}

function runDifference(a: StageRun, b: StageRun): string | undefined {
  if (a.outputs.length !== b.outputs.length) return `${a.outputs.length} entries, then ${b.outputs.length}`;
  for (let i = 0; i < a.outputs.length; i++) {
    const changes = entryDifferences(a.outputs[i]!, b.outputs[i]!);
    if (changes.length > 0) return `output #${i}: ${changes.join('; ')}`;
    if (a.emittedAtMs[i] !== b.emittedAtMs[i]) return `output #${i} left at ${a.emittedAtMs[i]}ms, then at ${b.emittedAtMs[i]}ms`;
  }
  return undefined;
}

function showError(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : showValue(err);
}
