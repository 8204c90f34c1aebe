/**
 * The playground's HTTP contract, shared by the server routes and the browser UI. Everything is
 * plain JSON: entries are in the `rivulet process` line form, times are virtual-clock offsets in
 * milliseconds from the run's start (`now`).
 */

/** `POST /api/run` body. */
export interface RunRequest {
  /** A `logs.process` block or a bare list of `stage.*` blocks. */
  readonly config: string;
  /** JSONL entries (one object per line, as `rivulet process` reads) or plain lines. */
  readonly input: string;
  readonly inputFormat: 'jsonl' | 'text';
  /** RFC 3339 start of the virtual clock; the server's wall clock when absent. */
  readonly now?: string;
  /** Arrival offsets in ms, one per input entry; overrides `arrival_ms` of JSONL entries. */
  readonly arrivals?: readonly (number | null)[];
  /** Seeds the random source of `stage.sampling`; Math.random when absent. */
  readonly seed?: number;
}

/** An entry as `rivulet process` prints it (bigint values as numbers). */
export interface EntryJson {
  readonly labels: Record<string, string>;
  readonly line: string;
  readonly timestamp: string;
  readonly structured_metadata: Record<string, string>;
  readonly extracted: Record<string, unknown>;
}

/** A config error. `line` and `col` are 1-based (col in characters); 0 when the error has no place. */
export interface ConfigProblem {
  readonly line: number;
  readonly col: number;
  /** The reason with its block path, without the `file:line:col:` prefix. */
  readonly message: string;
}

/** An input line that could not be read as an entry. */
export interface InputProblem {
  readonly line: number;
  readonly message: string;
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

/** What made the pipeline act: an input arriving, a timer on the virtual clock, or end of input. */
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
  /** `--inspect`'s change list: `labels +level="info"`, `line "a" -> "b"`. */
  changes: string[];
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

/** `POST /api/run` answer. */
export interface RunResult {
  /** The forwarded entries, in order. */
  readonly entries: EntryJson[];
  /** Per forwarded entry: its trace and when it left the pipeline. */
  readonly outputs: { readonly trace: number; readonly atMs: number }[];
  readonly traces: EntryTrace[];
  readonly flushes: Flush[];
  /** Prometheus text exposition of the run's registry (stage.metrics series and pipeline counters). */
  readonly metrics: string;
  readonly stages: StageInfo[];
  readonly errors: ConfigProblem[];
  readonly inputErrors: InputProblem[];
  /** The virtual clock's start (RFC 3339) and its offset when the run ended. */
  readonly startedAt: string;
  readonly endMs: number;
}

/** `POST /api/check` answer: the config's errors, without running anything. */
export interface CheckResult {
  readonly errors: ConfigProblem[];
}

/** `POST /api/export` answer: a complete `logs.process` block for a real config file. */
export interface ExportResult {
  readonly config: string;
  readonly errors: ConfigProblem[];
}

/** A field of a stage or nested block, for completion and hover help. */
export interface FieldHelp {
  readonly name: string;
  /** `string`, `duration`, `map(string)`. */
  readonly type: string;
  readonly doc: string;
  readonly required: boolean;
  /** The default in config syntax (`"3s"`, `128`, `true`), when there is one. */
  readonly default?: string;
  readonly oneOf?: readonly string[];
}

export interface BlockHelp {
  readonly name: string;
  readonly doc: string;
  readonly fields: readonly FieldHelp[];
  readonly blocks: readonly BlockHelp[];
  /** Accepts nested `stage.*` blocks. */
  readonly stages: boolean;
  readonly multiple?: boolean;
  readonly required?: boolean;
}

/** `GET /api/stages`: every registered stage, by its block name (`stage.json`). */
export interface StagesResult {
  readonly stages: readonly BlockHelp[];
}

/** One sample of the library: a config, an input and the run options. */
export interface Sample {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly config: string;
  readonly input: string;
  readonly inputFormat: 'jsonl' | 'text';
  readonly now: string;
  readonly seed?: number;
}

/** `GET /api/samples`. */
export interface SamplesResult {
  readonly samples: readonly Sample[];
}
