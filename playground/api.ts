/**
 * The playground's HTTP contract, shared by the server routes and the browser UI. Everything is
 * plain JSON: entries are in the `rivulet process` line form, times are virtual-clock offsets in
 * milliseconds from the run's start (`now`).
 */
import type { EntryJson, EntryTrace, Flush, StageInfo } from '../core/trace.js';

/** The traces' model lives with the pipeline tracer, shared with `rivulet process --inspect`. */
export type { EntryJson, EntryTrace, Fate, Flush, StageInfo, TraceStep, Trigger } from '../core/trace.js';

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

/** `POST /api/export` answer: a complete config file, the `logs.process` block and the `logs.write` it sends to. */
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
