import type { Sample } from '../api.js';

/** One JSONL input entry as written in a sample. */
export interface SampleEntry {
  readonly line: string;
  readonly labels?: Record<string, string>;
  readonly timestamp?: string;
  readonly structured_metadata?: Record<string, string>;
  /** Arrival offset on the playground's virtual clock (ignored by `rivulet process`). */
  readonly arrival_ms?: number;
}

/** Writes entries as the JSONL input `rivulet process` reads, one object per line. */
export function jsonl(entries: readonly SampleEntry[]): string {
  return entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
}

/** Plain input lines, one entry each. */
export function lines(...text: string[]): string {
  return text.join('\n') + '\n';
}

export type { Sample };
