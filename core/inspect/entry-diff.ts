/**
 * What a stage changed in an entry, part by part: one structured diff for `--inspect`, the
 * playground's traces and its browser UI. Pure, so the browser bundle imports it as it is.
 */
import type { Entry } from '../entry.js';

/**
 * The parts of an entry a diff compares: an `Entry`'s (see `entryParts`) or the playground's JSON
 * form of one, whose timestamps are RFC 3339 text.
 */
export interface EntryParts {
  readonly labels: Readonly<Record<string, string>>;
  readonly line: string;
  readonly timestamp: bigint | string;
  readonly structured_metadata: Readonly<Record<string, string>>;
  readonly extracted: Readonly<Record<string, unknown>>;
}

/** One changed part of an entry: a label, metadata pair or extracted value, the line or the timestamp. */
export interface EntryChange {
  readonly part: 'labels' | 'line' | 'timestamp' | 'structured_metadata' | 'extracted';
  /** The key within the part; empty for the line and the timestamp. */
  readonly key: string;
  readonly op: 'added' | 'removed' | 'changed';
  readonly before?: unknown;
  readonly after?: unknown;
}

type KeyedPart = 'labels' | 'structured_metadata' | 'extracted';

/** What changed, in the order `--inspect` reports it: labels, line, timestamp, metadata, extracted. */
export function entryChanges(before: EntryParts, after: EntryParts): EntryChange[] {
  const changes: EntryChange[] = [];
  changes.push(...keyedChanges('labels', before.labels, after.labels));
  if (before.line !== after.line) changes.push({ part: 'line', key: '', op: 'changed', before: before.line, after: after.line });
  if (before.timestamp !== after.timestamp)
    changes.push({ part: 'timestamp', key: '', op: 'changed', before: before.timestamp, after: after.timestamp });
  changes.push(...keyedChanges('structured_metadata', before.structured_metadata, after.structured_metadata));
  changes.push(...keyedChanges('extracted', before.extracted, after.extracted));
  return changes;
}

function keyedChanges(part: KeyedPart, before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): EntryChange[] {
  const out: EntryChange[] = [];
  for (const key of Object.keys(after)) {
    if (!Object.hasOwn(before, key)) out.push({ part, key, op: 'added', after: after[key] });
    else if (showJson(before[key]) !== showJson(after[key])) out.push({ part, key, op: 'changed', before: before[key], after: after[key] });
  }
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) out.push({ part, key, op: 'removed', before: before[key] });
  return out;
}

/** An entry's parts as the diff compares them; metadata pairs become a map (a later pair wins). */
export function entryParts(entry: Entry): EntryParts {
  return {
    labels: entry.labels,
    line: entry.line,
    timestamp: entry.timestamp,
    structured_metadata: Object.fromEntries(entry.structuredMetadata.map((p) => [p.name, p.value])),
    extracted: entry.extracted,
  };
}

/** One change as `--inspect` prints it: `labels +level="info"`, `labels ~a="1"->"2"`, `line "a" -> "b"`. */
export function describeChange(change: EntryChange): string {
  switch (change.part) {
    case 'line':
      return `line ${JSON.stringify(change.before)} -> ${JSON.stringify(change.after)}`;
    case 'timestamp':
      return `timestamp ${change.before} -> ${change.after}`;
    default:
      if (change.op === 'added') return `${change.part} +${change.key}=${showJson(change.after)}`;
      if (change.op === 'changed') return `${change.part} ~${change.key}=${showJson(change.before)}->${showJson(change.after)}`;
      return `${change.part} -${change.key}`;
  }
}

/** JSON with bigints as numbers, as the entry's JSON form shows them. */
function showJson(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? Number(v) : v));
}
