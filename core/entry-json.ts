import type { Entry, Labels, MetadataPair } from './entry.js';
import { formatRFC3339Nano, parseRFC3339 } from '../lib/time/rfc3339.js';
import type { Clock } from './clock.js';

/**
 * The JSON line form of an entry used by `rivulet process` and `logs.echo`:
 * `{"labels":{..},"line":..,"timestamp":"…9 fraction digits…Z","structured_metadata":{..}}`,
 * plus `extracted` when asked (values as JSON; bigint as a number). Labels are sorted by name.
 *
 * Written by hand rather than through `JSON.stringify` of a view object (the same bytes: strings
 * go through `JSON.stringify`, and keys keep the order an object would give them), because it is
 * the hot end of `rivulet process`: no view objects, no replacer call per value.
 */
export function entryToJson(entry: Entry, withExtracted: boolean): string {
  let json = `{"labels":${labelsJson(entry.labels)},"line":${JSON.stringify(entry.line)},"timestamp":"${formatRFC3339Nano(entry.timestamp)}","structured_metadata":${metadataJson(entry.structuredMetadata)}`;
  if (withExtracted) json += `,"extracted":${valueJson(entry.extracted)}`;
  return `${json}}`;
}

/** Characters JSON.stringify writes as escapes: quote, backslash, controls and lone surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON.stringify writes it; most label values and keys need no escape at all. */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** What `--output` prints per entry: the full JSON form, the entry without extracted values, or the line alone. */
export type EntryOutputFormat = 'json' | 'entry' | 'line';

/** One output line (without the newline) of an entry in `format`. */
export function formatEntry(entry: Entry, format: EntryOutputFormat): string {
  if (format === 'line') return entry.line;
  return entryToJson(entry, format === 'json');
}

function labelsJson(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length === 0) return '{}';
  if (names.some(isArrayIndex)) return JSON.stringify(sortedObject(labels));
  sortNames(names);
  let json = '';
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    json += `${i === 0 ? '{' : ','}${quote(name)}:${quote(labels[name]!)}`;
  }
  return `${json}}`;
}

/**
 * Sorts a few names in place in the order Array.prototype.sort gives (UTF-16 code units), by
 * insertion: label sets are small, and the default sort costs several times more on them.
 */
function sortNames(names: string[]): void {
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    for (; j >= 0 && names[j]! > name; j--) names[j + 1] = names[j]!;
    names[j + 1] = name;
  }
}

function metadataJson(pairs: readonly MetadataPair[]): string {
  if (pairs.length === 0) return '{}';
  // A later pair of the same name wins, at the position of the first, as Object.fromEntries does.
  if (pairs.length > 1 || isArrayIndex(pairs[0]!.name)) return JSON.stringify(Object.fromEntries(pairs.map((p) => [p.name, p.value])));
  return `{${quote(pairs[0]!.name)}:${quote(pairs[0]!.value)}}`;
}

function valueJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    // Only bigint values make JSON.stringify throw; they are written as numbers.
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? Number(v) : v));
  }
}

/** Keys an object lists first, in numeric order, whatever the insertion order. */
function isArrayIndex(key: string): boolean {
  if (key.length === 0 || key.length > 10) return false;
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && n < 4294967295 && String(n) === key;
}

function sortedObject(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(labels).sort()) out[name] = labels[name]!;
  return out;
}

/** One line of the JSON-lines input form (`rivulet process --input jsonl`, the playground). */
export function parseInputEntry(text: string, clock: Clock): Entry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`invalid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('expected a JSON object');
  const obj = value as Record<string, unknown>;
  if (typeof obj.line !== 'string') throw new Error('"line" must be a string');
  const labels = stringMap(obj.labels, 'labels');
  const metadata = stringMap(obj.structured_metadata, 'structured_metadata');
  let timestamp: bigint;
  if (obj.timestamp === null || obj.timestamp === undefined) timestamp = clock.nowNs();
  else if (typeof obj.timestamp === 'string') timestamp = parseRFC3339(obj.timestamp);
  else throw new Error('"timestamp" must be an RFC 3339 string or null');
  const extracted = obj.extracted ?? {};
  if (extracted === null || typeof extracted !== 'object' || Array.isArray(extracted)) throw new Error('"extracted" must be an object');
  return {
    labels,
    line: obj.line,
    timestamp,
    structuredMetadata: Object.entries(metadata).map(([name, v]) => ({ name, value: v })),
    extracted: { ...(extracted as Record<string, unknown>) },
  };
}

function stringMap(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`"${field}" must be an object of strings`);
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new Error(`"${field}.${k}" must be a string`);
  }
  return value as Record<string, string>;
}
