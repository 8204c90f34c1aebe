/**
 * Readable counterexamples: entries, configs and runs written out one entry per line, so a
 * failing property says what went in and what came out without a debugger.
 */
import { labelsKey, type Entry } from '../core/entry.js';
import { formatRFC3339Nano } from '../lib/time/rfc3339.js';
import type { StageConfigInput } from './run-stage.js';

/** Longest line text shown before it is cut with `…`. */
const MAX_SHOWN = 160;

/** `{app="api"} 2023-11-14T22:13:20.000000000Z "text" metadata={trace="t1"} extracted={"n":1}` */
export function describeEntry(entry: Entry): string {
  let text = `${labelsKey(entry.labels)} ${describeTimestamp(entry.timestamp)} ${quoteShown(entry.line)}`;
  if (entry.structuredMetadata.length > 0)
    text += ` metadata=${labelsKey(Object.fromEntries(entry.structuredMetadata.map((p) => [p.name, p.value])))}`;
  if (Object.keys(entry.extracted).length > 0) text += ` extracted=${showValue(entry.extracted)}`;
  return text;
}

function describeTimestamp(ns: bigint): string {
  try {
    return formatRFC3339Nano(ns);
  } catch {
    return `${ns}ns`;
  }
}

function quoteShown(line: string): string {
  return JSON.stringify(line.length > MAX_SHOWN ? line.slice(0, MAX_SHOWN) + '…' : line);
}

/** JSON, with bigints as `123n` and keys in insertion order. */
export function showValue(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(value);
}

/** A config as it was given: the text indented, or the object as JSON. */
export function describeConfig(config: StageConfigInput<any>): string {
  if (typeof config === 'string')
    return (
      '\n' +
      config
        .trimEnd()
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n')
    );
  return ' ' + showValue(config);
}

/** The inputs of a run, numbered, with arrival times. */
export function describeInputs(inputs: readonly Entry[], arrivalsMs: readonly number[]): string {
  if (inputs.length === 0) return 'input: none';
  return [`input (${count(inputs.length)}):`, ...inputs.map((e, i) => `  #${i} at ${arrivalsMs[i] ?? 0}ms ${describeEntry(e)}`)].join('\n');
}

/** The outputs of a run, numbered, each with the input it came from when known. */
export function describeOutputs(outputs: readonly Entry[], origins: readonly number[], emittedAtMs: readonly number[]): string {
  if (outputs.length === 0) return 'output: none';
  return [
    `output (${count(outputs.length)}):`,
    ...outputs.map(
      (e, i) => `  #${i} at ${emittedAtMs[i] ?? 0}ms${origins[i]! >= 0 ? ` from input #${origins[i]}` : ''} ${describeEntry(e)}`,
    ),
  ].join('\n');
}

function count(n: number): string {
  return n === 1 ? '1 entry' : `${n} entries`;
}

/** The parts of an entry, by the names invariants use. */
export type EntryField = 'labels' | 'line' | 'timestamp' | 'structuredMetadata' | 'extracted';

export const ENTRY_FIELDS: readonly EntryField[] = ['labels', 'line', 'timestamp', 'structuredMetadata', 'extracted'];

/** How `after` differs from `before` in the given fields: `line "a" -> "b"`, `labels {} -> {x="1"}`. */
export function entryDifferences(before: Entry, after: Entry, fields: readonly EntryField[] = ENTRY_FIELDS): string[] {
  const out: string[] = [];
  for (const field of fields) {
    if (showField(before, field, false) !== showField(after, field, false))
      out.push(`${field} ${showField(before, field, true)} -> ${showField(after, field, true)}`);
  }
  return out;
}

/** A field in a form where equal values give equal text (label and key order ignored). */
function showField(entry: Entry, field: EntryField, shortened: boolean): string {
  switch (field) {
    case 'labels':
      return labelsKey(entry.labels);
    case 'line':
      return shortened ? quoteShown(entry.line) : JSON.stringify(entry.line);
    case 'timestamp':
      return describeTimestamp(entry.timestamp);
    case 'structuredMetadata':
      return showValue(entry.structuredMetadata.map((p) => [p.name, p.value]));
    case 'extracted':
      return showValue(sortedKeys(entry.extracted));
  }
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return out;
}
