/**
 * What the main thread and a partition worker (one pipeline instance on its own thread) say to
 * each other. Entries cross packed (entry-batch-codec.ts); outputs come back either as entries (for
 * components that hand them on) or already formatted as output lines (`rivulet process`).
 */
import type { Entry } from '../entry.js';
import type { PackedEntries } from './entry-batch-codec.js';
import type { EntryOutputFormat } from '../entry-json.js';
import type { MetricFamilies } from '../metrics.js';

/** How a worker returns what its pipeline forwards. */
export type PartitionOutput = 'entries' | EntryOutputFormat;

/** The stage list a partitioned pipeline runs, and how. */
export interface StageListSetup {
  /** The stage list, in a form `loadStageList` reads: bare `stage.*` blocks or one logs.process block. */
  readonly stagesText: string;
  readonly file: string;
  readonly output: PartitionOutput;
  /** Set for a virtual clock starting at this instant (ns, decimal): timers run only at end of input. */
  readonly virtualStartNs?: string;
  /** The main thread's input time (core/input-time.ts `InputClock.shared`), which stages measure idleness on. */
  readonly inputTime?: SharedArrayBuffer;
}

/** What a worker gets: the stage list, and what it needs to know the stages the main thread knows. */
export interface PartitionWorkerSetup extends StageListSetup {
  /** Modules (URLs) whose import registers stages: the built-in stages' module. */
  readonly stageRegistrars: readonly string[];
  /** Custom stage modules (absolute files) to load before the stage list is read. */
  readonly stageModules: readonly string[];
  readonly linearTimeRegex: boolean;
}

/** One output: an entry (its extracted map emptied) or a formatted line. */
export type PartitionItem = Entry | string;

/**
 * Outputs as they cross: packed entries (entry-batch-codec.ts), or formatted lines joined into one
 * string with their lengths (one copy instead of one per line).
 */
export type PackedItems = { readonly packed: PackedEntries } | { readonly text: string; readonly lengths: Int32Array };

export type ToPartitionWorker =
  /** Entries to process; `seqs[i]` is entry i's place in the whole batch, returned with its outputs. */
  | {
      readonly kind: 'batch';
      readonly id: number;
      readonly packed: PackedEntries;
      readonly seqs: Int32Array;
      readonly untilSentOn: boolean;
      /** The id of the batch's hand-back (core/hand-back.ts), if its sender may take held entries back. */
      readonly handBack?: number;
    }
  /**
   * The sender of the batches with this hand-back id takes back what the stages hold of them, or
   * (`end`) ends its session keeping it: the stages send it on now.
   */
  | { readonly kind: 'handBack'; readonly id: number; readonly end: boolean }
  | { readonly kind: 'end' }
  | { readonly kind: 'metrics'; readonly id: number };

export type FromPartitionWorker =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly errors: string[] }
  /** What processing batch `id` forwarded at once, each output with the seq of the entry that caused it. */
  | { readonly kind: 'outputs'; readonly id: number; readonly items: PackedItems; readonly seqs: Int32Array }
  /** Batch `id` holds nothing back any more. */
  | { readonly kind: 'settled'; readonly id: number }
  /** Outputs forwarded by a timer (a multiline block's wait ran out, a limit released an entry). */
  | { readonly kind: 'emit'; readonly items: PackedItems }
  /** Input ended: everything the stages flushed. */
  | { readonly kind: 'ended'; readonly items: PackedItems }
  | { readonly kind: 'metrics'; readonly id: number; readonly families: MetricFamilies };
