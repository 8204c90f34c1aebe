import type { Entry, Extracted, Labels, MetadataPair } from './entry.js';
import { formatRFC3339Nano, parseRFC3339 } from '../lib/time/rfc3339.js';
import type { Clock } from './clock.js';

/**
 * The JSON line form of an entry used by `rivulet process` and `logs.echo`:
 * `{"labels":{..},"line":..,"timestamp":"…9 fraction digits…Z","structured_metadata":{..}}`,
 * plus `extracted` when asked (values as JSON; bigint as a number). Labels are sorted by name.
 *
 * Written by hand rather than through `JSON.stringify` of a view object (the same bytes: strings
 * go through `JSON.stringify` unless they need no escape, and keys keep the order an object would
 * give them), because it is the hot end of `rivulet process`: no view objects, no replacer call
 * per value.
 */
export function entryToJson(entry: Entry, withExtracted: boolean): string {
  const line = JSON.stringify(entry.line);
  const json = `{"labels":${labelsJson(entry.labels)},"line":${line},"timestamp":"${formatRFC3339Nano(entry.timestamp)}","structured_metadata":${metadataJson(entry.structuredMetadata)}`;
  if (!withExtracted) return `${json}}`;
  return `${json},"extracted":${extractedJson(entry.extracted, entry.line, line)}}`;
}

/** What `--output` prints per entry: the full JSON form, the entry without extracted values, or the line alone. */
export type EntryOutputFormat = 'json' | 'entry' | 'line';

/** One output line (without the newline) of an entry in `format`. */
export function formatEntry(entry: Entry, format: EntryOutputFormat): string {
  if (format === 'line') return entry.line;
  return entryToJson(entry, format === 'json');
}

/**
 * Strings longer than this go straight to JSON.stringify: its native scan beats a JavaScript one
 * on long text, while on short names and values the call costs more than the scan.
 */
const SHORT_STRING = 48;

/** Whether JSON.stringify writes `text` as it is between quotes; most names and short values it does. */
function isPlain(text: string): boolean {
  if (text.length > SHORT_STRING) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A quote, a backslash, a control character or a surrogate (lone ones are escaped).
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return false;
  }
  return true;
}

/** A string as JSON.stringify writes it. */
function quote(text: string): string {
  return isPlain(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * How an object with these keys (as Object.keys lists them) is written by hand: the keys in the
 * order written and, for each, the text before its value. That text holds the separator (`{` for
 * the first value, `,` after a value, `",` after a string whose closing quote is still to come),
 * the quoted key and colon, and the opening quote when the value is a plain string: a plain string
 * then adds one piece to the output instead of three, and fewer pieces make the string cheaper to
 * build and to flatten when it is written out.
 */
interface ObjectLayout {
  /** The keys as Object.keys listed them, to tell whether the next object has the same. */
  readonly names: readonly string[];
  readonly order: readonly string[];
  /** PREFIXES_PER_KEY per key, at `PREFIXES_PER_KEY * i + after + (plain string ? 1 : 0)`. */
  readonly prefixes: readonly string[];
}

/** What a value comes after: nothing (it is the first), a whole value, or a string left open. */
const AFTER_NOTHING = 0;
const AFTER_VALUE = 2;
const AFTER_OPEN_STRING = 4;
const PREFIXES_PER_KEY = 6;

function objectLayout(names: readonly string[], order: readonly string[]): ObjectLayout {
  const prefixes: string[] = [];
  for (const name of order) {
    const key = `${quote(name)}:`;
    prefixes.push(`{${key}`, `{${key}"`, `,${key}`, `,${key}"`, `",${key}`, `",${key}"`);
  }
  return { names, order, prefixes };
}

/** The end of an object written by hand, after what came last. */
function objectEnd(after: number): string {
  if (after === AFTER_NOTHING) return '{}';
  return after === AFTER_OPEN_STRING ? '"}' : '}';
}

/**
 * The last layouts built: consecutive entries of a pipeline mostly carry the same label names and
 * extracted keys in the same order, so sorting and quoting names happen once per change of names.
 */
let lastLabelsLayout: ObjectLayout | undefined;
let lastExtractedLayout: ObjectLayout | undefined;

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function labelsJson(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length === 0) return '{}';
  if (lastLabelsLayout === undefined || !sameNames(lastLabelsLayout.names, names)) {
    // An object lists array-index names first, so the view object's order is not the sorted one.
    if (names.some(isArrayIndex)) return JSON.stringify(sortedObject(labels));
    lastLabelsLayout = objectLayout(names, sortedNames(names));
  }
  const { order, prefixes } = lastLabelsLayout;
  let json = '';
  let after = AFTER_NOTHING;
  for (let i = 0; i < order.length; i++) {
    const value = labels[order[i]!]!;
    if (isPlain(value)) {
      json += prefixes[PREFIXES_PER_KEY * i + after + 1]! + value;
      after = AFTER_OPEN_STRING;
    } else {
      json += prefixes[PREFIXES_PER_KEY * i + after]! + JSON.stringify(value);
      after = AFTER_VALUE;
    }
  }
  return json + objectEnd(after);
}

/**
 * Names in the order Array.prototype.sort gives (UTF-16 code units), sorted by insertion: label
 * sets are small, and the default sort costs several times more on them.
 */
function sortedNames(unsorted: readonly string[]): string[] {
  const names = unsorted.slice();
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    for (; j >= 0 && names[j]! > name; j--) names[j + 1] = names[j]!;
    names[j + 1] = name;
  }
  return names;
}

function metadataJson(pairs: readonly MetadataPair[]): string {
  if (pairs.length === 0) return '{}';
  // A later pair of the same name wins, at the position of the first, as Object.fromEntries does.
  if (pairs.length > 1 || isArrayIndex(pairs[0]!.name)) return JSON.stringify(Object.fromEntries(pairs.map((p) => [p.name, p.value])));
  return `{${quote(pairs[0]!.name)}:${quote(pairs[0]!.value)}}`;
}

/**
 * The extracted map as JSON.stringify (with bigint as numbers) writes it. Flat maps of text,
 * numbers, booleans and null, the usual case, are written here; anything else (nested values,
 * other prototypes, functions that could be a `toJSON`) goes to JSON.stringify whole. Keys come in
 * Object.keys order, which is JSON.stringify's own (array indices first). A value that is the
 * entry's line (`content` after stage.cri) reuses the line's JSON.
 */
function extractedJson(extracted: Extracted, line: string, lineJson: string): string {
  const prototype = Object.getPrototypeOf(extracted);
  if (prototype !== Object.prototype && prototype !== null) return valueJson(extracted);
  const keys = Object.keys(extracted);
  if (lastExtractedLayout === undefined || !sameNames(lastExtractedLayout.names, keys)) lastExtractedLayout = objectLayout(keys, keys);
  const { prefixes } = lastExtractedLayout;
  let json = '';
  let after = AFTER_NOTHING;
  for (let i = 0; i < keys.length; i++) {
    const value = extracted[keys[i]!];
    if (typeof value === 'string' && value !== line && isPlain(value)) {
      json += prefixes[PREFIXES_PER_KEY * i + after + 1]! + value;
      after = AFTER_OPEN_STRING;
      continue;
    }
    let valueText: string;
    if (typeof value === 'string') valueText = value === line ? lineJson : JSON.stringify(value);
    else if (typeof value === 'number') valueText = numberJson(value);
    else if (typeof value === 'boolean') valueText = value ? 'true' : 'false';
    else if (value === null) valueText = 'null';
    else if (value === undefined) continue;
    else if (typeof value === 'bigint') valueText = numberJson(Number(value));
    else return valueJson(extracted);
    json += prefixes[PREFIXES_PER_KEY * i + after]! + valueText;
    after = AFTER_VALUE;
  }
  return json + objectEnd(after);
}

/** A number as JSON writes it: NaN and the infinities as null, -0 as 0 (as String gives it). */
function numberJson(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
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
