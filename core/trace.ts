import type { Entry } from './entry.js';

/** A stage's effect on one entry, reported when a pipeline is built with a tracer. */
export interface StageTrace {
  /** Block path of the stage (`stage.match > stage.json`). */
  readonly path: readonly string[];
  /** The entry as it entered the stage (a copy), or null when the stage produced a new entry. */
  readonly before: Entry | null;
  /** The entry as it left the stage (a copy), or null when the stage dropped or held it. */
  readonly after: Entry | null;
  /**
   * What the stage did besides changing the entry, as it noted it (see `StageEffects`):
   * `counter logs_process_custom_lines_total{app="api"} +1`. Absent when it noted nothing.
   */
  readonly effects?: readonly string[];
}

/**
 * Receives stage-by-stage events for `rivulet process --inspect` and the playground. Tracing
 * copies entries around every stage, so it is only wired in when asked for.
 */
export interface PipelineTracer {
  stage(event: StageTrace): void;
}

/**
 * Where a per-entry stage notes what it did outside the entry while it is traced (a metric series
 * it updated). Execution is synchronous, so the notes made while a traced stage runs are that
 * stage's; a nested stage's notes go to the nested stage alone.
 */
export class StageEffects {
  private current: string[] | undefined;

  /** Notes one effect of the stage running now (ignored outside a traced stage). */
  note(effect: string): void {
    this.current?.push(effect);
  }

  /** Runs one stage on one entry and returns what it returned with the effects it noted. */
  collect<T>(run: () => T): { result: T; effects: string[] } {
    const outer = this.current;
    const effects: string[] = [];
    this.current = effects;
    try {
      return { result: run(), effects };
    } finally {
      this.current = outer;
    }
  }
}

// The stories a `TraceRecorder` builds from the events above: the playground's HTTP answer carries
// them as they are and `rivulet process --inspect` prints them.

/** An entry as `rivulet process` prints it (bigint values as numbers). */
export interface EntryJson {
  readonly labels: Record<string, string>;
  readonly line: string;
  readonly timestamp: string;
  readonly structured_metadata: Record<string, string>;
  readonly extracted: Record<string, unknown>;
}

/** One stage of the config, in source order (a match's nested stages follow it). */
export interface StageInfo {
  readonly index: number;
  /** Block path: `logs.process "default" > stage.match > stage.json`. */
  readonly path: readonly string[];
  /** `stage.json`. */
  readonly name: string;
  readonly line: number;
  readonly col: number;
  /** Index of the enclosing `stage.match`, or null at the top level. */
  readonly parent: number | null;
  readonly depth: number;
  /** `map`: one entry in, at most one out, at once. `operator`: may hold, split or time entries. */
  readonly kind: 'map' | 'operator';
}

/** What made the pipeline act: an input arriving, a timer on the (virtual) clock, or end of input. */
export type Trigger = { readonly kind: 'input'; readonly input: number } | { readonly kind: 'timer' } | { readonly kind: 'end' };

/**
 * One stage's effect on a traced entry.
 * - `changed` / `unchanged`: a per-entry stage ran;
 * - `dropped`: the stage dropped it (`reason` says why);
 * - `held`: an operator took it and has not sent it on;
 * - `passed`: an operator sent it on at once;
 * - `released`: an operator sent it on later (a flush; `trigger` says what caused it);
 * - `matched` / `not-matched`: a `stage.match`; when matched, the nested steps follow it.
 */
export interface TraceStep {
  readonly stage: number;
  outcome: 'changed' | 'unchanged' | 'dropped' | 'held' | 'passed' | 'released' | 'matched' | 'not-matched';
  before: EntryJson | null;
  after: EntryJson | null;
  /** `--inspect`'s change list: `labels +level="info"`, `line "a" -> "b"`, timestamps in RFC 3339. */
  changes: string[];
  /** What the stage did besides changing the entry (`stage.metrics`: the series it updated). */
  effects?: string[];
  /** When the stage saw the entry. */
  readonly atMs: number;
  /** When an operator sent it on (passed or released). */
  releasedAtMs?: number;
  trigger?: Trigger;
  reason?: string;
}

export type Fate =
  | { readonly kind: 'forwarded'; readonly output: number }
  | { readonly kind: 'dropped'; readonly stage: number; readonly reason: string }
  | { readonly kind: 'held'; readonly stage: number }
  /** Joined into another traced entry by an operator (multiline block, CRI partial line). */
  | { readonly kind: 'merged'; readonly stage: number; readonly into: number };

/**
 * The stage-by-stage story of one entry. Input entries each get one; an operator that sends an
 * entry on a second time (a `max_lines` split) starts a new one with an `emitted` origin.
 */
export interface EntryTrace {
  readonly id: number;
  readonly origin:
    | { readonly kind: 'input'; readonly input: number; readonly line: number }
    | { readonly kind: 'emitted'; readonly stage: number; readonly from: number };
  readonly atMs: number;
  readonly steps: TraceStep[];
  fate: Fate;
}

/** A time-based stage sending held content on. */
export interface Flush {
  readonly stage: number;
  readonly atMs: number;
  readonly trigger: Trigger;
  readonly trace: number;
  readonly line: string;
}
