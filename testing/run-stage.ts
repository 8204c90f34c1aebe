/**
 * Runs one stage on virtual time, the way a `logs.process` pipeline runs it: each input is
 * copied and its labels seeded into the extracted map, pushed when the clock reaches its arrival
 * time, and at the end the input completes and every pending timer runs. Each output is traced
 * back to the input it came from, so invariants can compare the two.
 */
import { Registry } from 'prom-client';
import { Subject, type Subscription } from 'rxjs';
import { ManualClock } from '../core/clock.js';
import { cloneEntry, type Entry } from '../core/entry.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import { loadStageList } from '../core/process.js';
import type { BuiltPipeline, StageDefinition, StageFactory, StageFactoryConfig, StageSpec } from '../core/stage.js';
import type { TimedEntry } from './arbitraries.js';

/**
 * A config for a stage: the object its factory takes (durations may be Go duration strings such
 * as `"3s"`, as the factory accepts them), or `stage.<name> { … }` text.
 */
export type StageConfigInput<C = Record<string, unknown>> = (Partial<Record<keyof C, unknown>> & Record<string, unknown>) | string;

/** Where virtual runs start: 2023-11-14T22:13:20Z. */
export const DEFAULT_START_NS = 1_700_000_000_000_000_000n;

/** The file name config text is reported against. */
export const CONFIG_FILE = 'stage.alloy';

export interface RunStageOptions {
  /** The virtual clock's start; default `DEFAULT_START_NS`. */
  readonly startNs?: bigint;
  /** The stage's random source; default a generator seeded with 1. */
  readonly random?: () => number;
  /** Where the shared pipeline counters go; a fresh registry by default. */
  readonly registry?: Registry;
}

/** What a run produced. */
export interface StageRun {
  /** The inputs as the stage received them: copied, labels seeded into `extracted`. */
  readonly inputs: readonly Entry[];
  readonly arrivalsMs: readonly number[];
  /** Everything the stage emitted, in order. */
  readonly outputs: readonly Entry[];
  /** For each output, the index of the input it descends from (-1 when it cannot be told). */
  readonly origins: readonly number[];
  /** For each output, the virtual time in ms at which it was emitted. */
  readonly emittedAtMs: readonly number[];
  readonly completed: boolean;
  /** Set when the stage errored. */
  readonly error?: { readonly value: unknown };
  readonly registry: Registry;
  readonly clock: ManualClock;
}

// Outputs are traced to their inputs by a symbol key in the extracted map: copies of an entry
// (`cloneEntry`, object spread) keep it, while stages that list, pack or print extracted values
// never see it (Object.keys, for…in and JSON skip symbol keys).
const ORIGIN = Symbol('rivulet.testing.origin');

/** Resolves a stage and its config to the spec a pipeline builds. */
export function stageSpec<C>(stage: StageFactory<C>, config: StageConfigInput<C>): StageSpec {
  if (typeof config !== 'string') return stage(config as StageFactoryConfig<C>).spec;
  const specs = loadStageList(config, CONFIG_FILE);
  if (specs.length !== 1 || specs[0]!.def !== stage.definition) {
    throw new Error(
      `expected the config text to hold exactly one stage.${stage.definition.name} block, got ${specs.map((s) => `stage.${s.def.name}`).join(', ') || 'none'}`,
    );
  }
  return specs[0]!;
}

/** A small deterministic random source (mulberry32), uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs entries (plain, arriving at time 0, or timed) through one stage on a `ManualClock`.
 *
 * @example
 * const run = runStage(multiline, { firstline: '^\\S' }, [{ atMs: 0, entry: a }, { atMs: 5000, entry: b }]);
 * run.outputs.map((e) => e.line);
 */
export function runStage<C>(
  stage: StageFactory<C>,
  config: StageConfigInput<C>,
  inputs: readonly (Entry | TimedEntry)[],
  options: RunStageOptions = {},
): StageRun {
  return runSpec(stageSpec(stage, config), inputs, options);
}

/** `runStage` for a spec already resolved. */
export function runSpec(spec: StageSpec, inputs: readonly (Entry | TimedEntry)[], options: RunStageOptions = {}): StageRun {
  const timed = inputs.map(asTimed);
  const clock = new ManualClock(options.startNs ?? DEFAULT_START_NS);
  const registry = options.registry ?? new Registry();
  const built: BuiltPipeline = buildPipeline([spec], { clock, registry, random: options.random ?? seededRandom(1) });
  const source = new Subject<Entry>();
  const seen: Entry[] = [];
  const outputs: Entry[] = [];
  const emittedAtMs: number[] = [];
  let completed = false;
  let error: { value: unknown } | undefined;
  let subscription: Subscription | undefined;
  try {
    subscription = built.operator(source).subscribe({
      next: (entry) => {
        outputs.push(entry);
        emittedAtMs.push(clock.now());
      },
      error: (value) => (error = { value }),
      complete: () => (completed = true),
    });
    timed.forEach(({ atMs, entry }, index) => {
      clock.advanceTo(Math.max(clock.now(), atMs));
      const copy = ingress(entry);
      seen.push(cloneEntry(copy));
      (copy.extracted as Record<symbol, unknown>)[ORIGIN] = index;
      source.next(copy);
    });
    source.complete();
    clock.runAll();
  } finally {
    subscription?.unsubscribe();
    built.dispose();
  }
  const origins = outputs.map(takeOrigin);
  return { inputs: seen, arrivalsMs: timed.map((t) => t.atMs), outputs, origins, emittedAtMs, completed, error, registry, clock };
}

/** Reads and removes the trace `markOrigin` left; -1 when the entry carries none. */
export function takeOrigin(entry: Entry): number {
  const extracted = entry.extracted as Record<symbol, unknown>;
  const origin = extracted[ORIGIN];
  delete extracted[ORIGIN];
  return typeof origin === 'number' ? origin : -1;
}

/** Marks an entry with the index of the input it is; used by harnesses that push entries themselves. */
export function markOrigin(entry: Entry, index: number): void {
  (entry.extracted as Record<symbol, unknown>)[ORIGIN] = index;
}

function asTimed(input: Entry | TimedEntry): TimedEntry {
  return 'entry' in input && 'atMs' in input ? input : { atMs: 0, entry: input as Entry };
}

/** The definition behind a factory or a definition. */
export function definitionOf(stage: StageFactory<any> | StageDefinition<any>): StageDefinition<any> {
  return 'definition' in stage ? stage.definition : stage;
}

/** Sums `logs_process_dropped_lines_total` by reason. */
export async function droppedLines(registry: Registry): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('logs_process_dropped_lines_total');
  if (!metric) return {};
  const out: Record<string, number> = {};
  for (const { labels, value } of (await metric.get()).values) {
    const reason = String(labels.reason ?? '');
    out[reason] = (out[reason] ?? 0) + value;
  }
  return out;
}
