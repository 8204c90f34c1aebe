import { Observable, type OperatorFunction } from 'rxjs';
import { systemClock, type Clock } from './clock.js';
import type { HandBack } from './hand-back.js';
import type { InputTime } from './input-time.js';
import { cloneEntry, seedLabels, type Entry } from './entry.js';
import { ConfigError } from '../lib/config/errors.js';
import { placeError } from '../lib/config/schema.js';
import { processMetrics, type ProcessMetrics } from './metrics.js';
import { Registry } from 'prom-client';
import { setDefaultBuilder, type BuildContext, type BuiltPipeline, type StageImpl, type StageOperator, type StageSpec } from './stage.js';
import type { Sandbox } from './sandbox.js';
import { StageEffects, type PipelineTracer } from './trace.js';

/** What building a pipeline needs besides the stages. */
export interface PipelineOptions {
  readonly clock?: Clock;
  /** The time idle input is measured on (see core/input-time.ts); the clock's time when absent. */
  readonly input?: InputTime;
  /** The hand-back of the batch being pushed now (see `BuildContext.currentHandBack`). */
  readonly currentHandBack?: () => HandBack | undefined;
  readonly registry?: Registry;
  readonly random?: () => number;
  readonly trace?: PipelineTracer;
  readonly debug?: (message: string, fields?: Record<string, unknown>) => void;
  /** Limits for a config nobody vetted; see `BuildContext.sandbox`. */
  readonly sandbox?: Sandbox;
}

type EntryFn = (entry: Entry) => Entry | null;

function contextFor(options: PipelineOptions): BuildContext {
  const metrics: ProcessMetrics = processMetrics(options.registry ?? sharedRegistry());
  const ctx: BuildContext = {
    clock: options.clock ?? systemClock(),
    input: options.input,
    currentHandBack: options.currentHandBack,
    metrics,
    random: options.random ?? Math.random,
    trace: options.trace,
    effects: options.trace ? new StageEffects() : undefined,
    debug: options.debug ?? (() => {}),
    sandbox: options.sandbox,
    buildNested: (stages) => buildStages(stages, ctx),
  };
  return ctx;
}

let defaultRegistry: Registry | undefined;
/** The registry programmatic pipelines use when none is given. */
export function sharedRegistry(): Registry {
  defaultRegistry ??= new Registry();
  return defaultRegistry;
}

/**
 * Builds stages into one operator. Each run of adjacent per-entry stages becomes a single fused
 * function, so entries cross an RxJS boundary only where a stage really is an operator.
 */
export function buildStages(specs: readonly StageSpec[], ctx: BuildContext): BuiltPipeline {
  const built: StageImpl[] = [];
  try {
    for (const spec of specs) built.push(buildOne(spec, ctx));
  } catch (err) {
    for (const stage of built) stage.dispose?.();
    throw err;
  }
  const segments: Array<OperatorFunction<Entry, Entry>> = [];
  // Each per-entry stage wrapped once (tracing, failure guard), then used both for the fused
  // runs between operators and, when every stage is per-entry, for the whole-pipeline function.
  const entryFns = built.map((stage, i) => {
    if (stage.kind !== 'map') return undefined;
    const spec = specs[i]!;
    return guarded(ctx.trace ? traced(stage.process, spec.path, ctx.trace, ctx.effects) : stage.process, spec, ctx);
  });
  let run: EntryFn[] = [];
  const flushRun = () => {
    if (run.length > 0) segments.push(fusedOperator(composeFns(run)));
    run = [];
  };
  built.forEach((stage, i) => {
    const fn = entryFns[i];
    if (fn) {
      run.push(fn);
    } else if (stage.kind === 'operator') {
      flushRun();
      segments.push(ctx.trace ? tracedOperator(stage.operator, specs[i]!.path, ctx.trace) : stage.operator);
    }
  });
  flushRun();
  const operator: OperatorFunction<Entry, Entry> = (source) => segments.reduce((acc, seg) => seg(acc), source);
  const process = entryFns.every((fn) => fn !== undefined) ? composeFns(entryFns as EntryFn[]) : undefined;
  const holding = built.flatMap((s) => (s.kind === 'operator' && s.pending ? [s.pending] : []));
  const keeping = built.flatMap((s) => (s.kind === 'operator' && s.held ? [s.held] : []));
  return {
    operator,
    process,
    pending: () => allSettled(holding),
    held: () => allSettled(keeping),
    dispose: () => {
      for (const stage of built) stage.dispose?.();
    },
  };
}

/** Builds one stage; a config error raised while building is placed at the stage's block. */
function buildOne(spec: StageSpec, ctx: BuildContext): StageImpl {
  try {
    return spec.def.build(spec.config, ctx);
  } catch (err) {
    if (err instanceof ConfigError && spec.block) throw placeError(err, spec.block, spec.decoded, spec.path);
    if (err instanceof ConfigError && !err.pos)
      throw new ConfigError(err.reason, undefined, err.blockPath.length > 0 ? err.blockPath : spec.path);
    throw err;
  }
}

function allSettled(waits: ReadonlyArray<() => Promise<void>>): Promise<void> {
  return waits.length === 0 ? Promise.resolve() : Promise.all(waits.map((wait) => wait())).then(() => undefined);
}

function composeFns(fns: readonly EntryFn[]): EntryFn {
  if (fns.length === 1) return fns[0]!;
  return (entry) => {
    let current: Entry | null = entry;
    for (let i = 0; i < fns.length && current !== null; i++) current = fns[i]!(current);
    return current;
  };
}

function fusedOperator(fn: EntryFn): OperatorFunction<Entry, Entry> {
  return (source) =>
    new Observable<Entry>((subscriber) =>
      source.subscribe({
        next(entry) {
          const out = fn(entry);
          if (out !== null) subscriber.next(out);
        },
        error: (err) => subscriber.error(err),
        complete: () => subscriber.complete(),
      }),
    );
}

/**
 * A stage bug must not take the pipeline down: the entry continues unchanged by that stage (it
 * may have been partly edited) and the failure is logged.
 */
function guarded(fn: EntryFn, spec: StageSpec, ctx: BuildContext): EntryFn {
  return (entry) => {
    try {
      return fn(entry);
    } catch (err) {
      ctx.debug('stage failed on an entry; passing it on', { stage: spec.path.join(' > '), error: String(err) });
      return entry;
    }
  };
}

function traced(fn: EntryFn, path: readonly string[], trace: PipelineTracer, effects: StageEffects | undefined): EntryFn {
  return (entry) => {
    const before = cloneEntry(entry);
    if (!effects) {
      const out = fn(entry);
      trace.stage({ path, before, after: out === null ? null : cloneEntry(out) });
      return out;
    }
    const { result: out, effects: noted } = effects.collect(() => fn(entry));
    trace.stage({ path, before, after: out === null ? null : cloneEntry(out), ...(noted.length > 0 ? { effects: noted } : {}) });
    return out;
  };
}

function tracedOperator(
  op: OperatorFunction<Entry, Entry>,
  path: readonly string[],
  trace: PipelineTracer,
): OperatorFunction<Entry, Entry> {
  return (source) =>
    op(
      new Observable<Entry>((subscriber) =>
        source.subscribe({
          next(entry) {
            trace.stage({ path, before: cloneEntry(entry), after: null });
            subscriber.next(entry);
          },
          error: (err) => subscriber.error(err),
          complete: () => subscriber.complete(),
        }),
      ),
    ).pipe(
      (out) =>
        new Observable<Entry>((subscriber) =>
          out.subscribe({
            next(entry) {
              trace.stage({ path, before: null, after: cloneEntry(entry) });
              subscriber.next(entry);
            },
            error: (err) => subscriber.error(err),
            complete: () => subscriber.complete(),
          }),
        ),
    );
}

/** The ingress step of every logs pipeline: copy the entry, then seed its labels into `extracted`. */
export function ingress(entry: Entry): Entry {
  const copy = cloneEntry(entry);
  seedLabels(copy);
  return copy;
}

/**
 * Composes programmatic stages into one operator with the same semantics as a `logs.process`
 * component: each entry is copied and its labels seeded into the extracted map, then adjacent
 * per-entry stages are fused.
 *
 * ```ts
 * from(entries).pipe(pipeline([json({ expressions: { level: '' } }), labels({ values: { level: '' } })]))
 * ```
 */
export function pipeline(stages: readonly StageOperator[], options: PipelineOptions = {}): OperatorFunction<Entry, Entry> {
  return (source) =>
    new Observable<Entry>((subscriber) => {
      const ctx = contextFor(options);
      const built = buildStages(
        stages.map((s) => s.spec),
        ctx,
      );
      const seeded = new Observable<Entry>((inner) =>
        source.subscribe({
          next: (entry) => inner.next(ingress(entry)),
          error: (err) => inner.error(err),
          complete: () => inner.complete(),
        }),
      );
      const sub = built.operator(seeded).subscribe(subscriber);
      return () => {
        sub.unsubscribe();
        built.dispose();
      };
    });
}

/** Builds stage specs with options (used by components, the CLI and the playground). */
export function buildPipeline(specs: readonly StageSpec[], options: PipelineOptions = {}): BuiltPipeline {
  return buildStages(specs, contextFor(options));
}

setDefaultBuilder(() => (stages) => buildStages(stages, contextFor({})));
