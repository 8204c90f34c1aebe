import type { EntryJson } from '../api.js';

/** One changed part of an entry: a label, metadata pair or extracted value, the line or the timestamp. */
export interface EntryChange {
  readonly part: 'labels' | 'line' | 'timestamp' | 'structured_metadata' | 'extracted';
  /** The key within the part; empty for the line and the timestamp. */
  readonly key: string;
  readonly op: 'added' | 'removed' | 'changed';
  readonly before?: unknown;
  readonly after?: unknown;
}

/** What a stage changed, part by part, in the order `--inspect` reports it. */
export function entryChanges(before: EntryJson, after: EntryJson): EntryChange[] {
  const changes: EntryChange[] = [];
  changes.push(...mapChanges('labels', before.labels, after.labels));
  if (before.line !== after.line) changes.push({ part: 'line', key: '', op: 'changed', before: before.line, after: after.line });
  if (before.timestamp !== after.timestamp)
    changes.push({ part: 'timestamp', key: '', op: 'changed', before: before.timestamp, after: after.timestamp });
  changes.push(...mapChanges('structured_metadata', before.structured_metadata, after.structured_metadata));
  changes.push(...mapChanges('extracted', before.extracted, after.extracted));
  return changes;
}

function mapChanges(part: EntryChange['part'], before: Record<string, unknown>, after: Record<string, unknown>): EntryChange[] {
  const out: EntryChange[] = [];
  for (const key of Object.keys(after)) {
    if (!Object.hasOwn(before, key)) out.push({ part, key, op: 'added', after: after[key] });
    else if (JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      out.push({ part, key, op: 'changed', before: before[key], after: after[key] });
  }
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) out.push({ part, key, op: 'removed', before: before[key] });
  return out;
}

/** A value as shown in tables: strings quoted only when they would be ambiguous. */
export function showValue(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value === '' || /^\s|\s$/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** A virtual-clock offset: `+0 ms`, `+120 ms`, `+3.003 s`. */
export function formatOffset(ms: number): string {
  if (Math.abs(ms) < 1000) return `+${Math.round(ms * 1000) / 1000} ms`;
  return `+${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')} s`;
}
