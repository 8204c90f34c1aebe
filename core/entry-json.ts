import type { Entry, Extracted, Labels, MetadataPair } from './entry.js';
import { parseRFC3339, RFC3339NanoFormatter } from '../lib/time/rfc3339.js';
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
 *
 * The text is built of as few pieces as it can be: every piece is an object to allocate and, when
 * the line is written out, one more to visit, and that, more than the bytes, is what a line costs.
 * Text that recurs from one entry to the next is kept whole: a label's key with its value, and the
 * timestamp's key with the date and second.
 */
export function entryToJson(entry: Entry, withExtracted: boolean): string {
  return entryJson(entry, withExtracted, quote(entry.line));
}

/**
 * The JSON form of an entry (what entryToJson gives) as pieces to write one after another, the
 * line's own JSON cut every `pieceLength` code units (never between the halves of a surrogate
 * pair): built whole, a line of 100 MiB would be copied twice more, once escaped and once flattened
 * to be written.
 */
export function* entryJsonPieces(entry: Entry, withExtracted: boolean, pieceLength: number): Generator<string, void, void> {
  // A raw control character stands nowhere else in the text (JSON escapes every one), so the
  // text built around it splits exactly where the line's JSON goes, however often that is.
  const parts = entryJson(entry, withExtracted, LINE_MARK).split(LINE_MARK);
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) yield* lineJsonPieces(entry.line, pieceLength);
    yield parts[i]!;
  }
}

const LINE_MARK = '\u0001';

/** The line as JSON (see quote), in pieces; each piece escaped as JSON.stringify escapes it within the whole. */
function* lineJsonPieces(line: string, pieceLength: number): Generator<string, void, void> {
  const plain = isPlain(line);
  yield '"';
  for (let at = 0; at < line.length; ) {
    const end = pieceEnd(line, at, pieceLength);
    const piece = line.slice(at, end);
    yield plain ? piece : JSON.stringify(piece).slice(1, -1);
    at = end;
  }
  yield '"';
}

/**
 * Where a piece of `text` from `at` of at most `pieceLength` code units ends: never between the
 * halves of a surrogate pair, since each piece is escaped or encoded on its own.
 */
export function pieceEnd(text: string, at: number, pieceLength: number): number {
  const end = Math.min(at + pieceLength, text.length);
  return end < text.length && end - at > 1 && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800 ? end - 1 : end;
}

/** What `--output` prints per entry: the full JSON form, the entry without extracted values, or the line alone. */
export type EntryOutputFormat = 'json' | 'entry' | 'line';

/** One output line (without the newline) of an entry in `format`. */
export function formatEntry(entry: Entry, format: EntryOutputFormat): string {
  if (format === 'line') return entry.line;
  return entryToJson(entry, format === 'json');
}

/**
 * The output lines of a run of entries in `format`, into `lines`: what formatEntry gives for each,
 * for less. The lines that need escapes (a JSON body's quotes) go through one JSON.stringify
 * together and are cut apart again: each call of it costs as much as escaping a line, and its
 * result is a string of several pieces where a cut is one.
 */
export function formatEntries(entries: readonly Entry[], format: EntryOutputFormat, lines: string[]): void {
  if (format === 'line') {
    for (let i = 0; i < entries.length; i++) lines[i] = entries[i]!.line;
    return;
  }
  // The lines that need escapes, and each entry's line as JSON (undefined: the next escaped one).
  const toEscape: string[] = [];
  const lineJsons: (string | undefined)[] = [];
  for (let i = 0; i < entries.length; i++) {
    const line = entries[i]!.line;
    if (isPlain(line)) lineJsons.push(`"${line}"`);
    else {
      lineJsons.push(undefined);
      toEscape.push(line);
    }
  }
  const escaped = quoteEach(toEscape);
  let next = 0;
  for (let i = 0; i < entries.length; i++) lines[i] = entryJson(entries[i]!, format === 'json', lineJsons[i] ?? escaped[next++]!);
}

/**
 * The JSON string of each text, as JSON.stringify writes it: cut from
 * `JSON.stringify(texts)`, `["…","…"]`. An element ends at the first quote after its opening one
 * that no backslash escapes (inside a JSON string every quote is escaped), which is followed by
 * `","` or, for the last, by `]`. No character is written shorter than it is, so that quote is
 * at least the text's length past the opening one, and the search starts there.
 */
function quoteEach(texts: readonly string[]): string[] {
  const json: string[] = [];
  if (texts.length === 0) return json;
  const all = JSON.stringify(texts);
  let start = 1;
  for (let i = 0; i < texts.length - 1; i++) {
    let end = all.indexOf('","', start + texts[i]!.length + 1);
    while (isEscapedAt(all, end)) end = all.indexOf('","', end + 1);
    json[i] = all.slice(start, end + 1);
    start = end + 2;
  }
  json[texts.length - 1] = all.slice(start, all.length - 1);
  return json;
}

/** Whether the character at `index` follows an odd run of backslashes. */
function isEscapedAt(text: string, index: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(index - 1 - backslashes) === 0x5c) backslashes++;
  return backslashes % 2 === 1;
}

/** The JSON form of an entry whose line is written `lineJson`. */
function entryJson(entry: Entry, withExtracted: boolean, lineJson: string): string {
  const fraction = timestamps.fraction(entry.timestamp);
  if (timestamps.secondPrefix !== timestampSecond) {
    timestampSecond = timestamps.secondPrefix;
    timestampHead = flat([',"timestamp":"', timestampSecond]);
  }
  const json = `${labelsHead(entry.labels)}${lineJson}${timestampHead}${fraction}${metadataJson(entry.structuredMetadata)}`;
  if (!withExtracted) return `${json}}`;
  return json + extractedTail(entry.extracted, entry.line, lineJson);
}

/** A quote, a backslash, a control character or a surrogate (lone ones are escaped). */
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/**
 * Whether JSON.stringify writes `text` as it is between quotes; most names and values it does.
 * The regular expression scans in native code, several times faster than JSON.stringify's own
 * escaping, which then only the strings that need it pay for.
 */
function isPlain(text: string): boolean {
  return !NEEDS_ESCAPE.test(text);
}

/** A string as JSON.stringify writes it. */
function quote(text: string): string {
  return isPlain(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * One flat string of the parts (Array.prototype.join makes one; `+` makes a tree of them): text
 * kept for many entries is then one piece of each, copied in one go when it is written out.
 */
function flat(parts: readonly string[]): string {
  return parts.join('');
}

const timestamps = new RFC3339NanoFormatter();
/** The formatter's second that `timestampHead` was built for. */
let timestampSecond = '';
/** `,"timestamp":"YYYY-MM-DDThh:mm:ss.`, what the fraction digits follow. */
let timestampHead = '';

/**
 * How the label names last seen are written: which name goes where once sorted, and the text of
 * the last few values of each name (key and quoted value). The entries of a run mostly carry the
 * same names, and each name few values, so names are sorted and values quoted once per change, and
 * a label whose value comes again adds one piece to the output.
 */
interface LabelsLayout {
  /** The names as for…in lists them, to tell whether the next labels have the same. */
  readonly names: readonly string[];
  /** For each name in sorted order, the index in `names` of the name. */
  readonly sortedIndex: readonly number[];
  /** For each name in sorted order, the text before its value: `{"labels":{"name":` or `,"name":`. */
  readonly keys: readonly string[];
  /** For each name in sorted order, its last few values' texts. */
  readonly valueTexts: Recent<ValueText>[];
}

/** A label's value and its text: the key before it and the value quoted. */
interface ValueText {
  readonly value: string;
  text: string;
  /**
   * Whether `text` is one flat string: it is made one when the value comes again, so that a name
   * with more values than are kept costs no more than writing each value afresh.
   */
  flat: boolean;
}

/** The last few items added: the oldest gives way to a new one. */
interface Recent<T> {
  readonly items: T[];
  added: number;
}

/** Values kept per label name: enough for the streams of a few pods interleaved. */
const RECENT_KEPT = 8;

function addRecent<T>(recent: Recent<T>, item: T): T {
  if (recent.items.length < RECENT_KEPT) recent.items.push(item);
  else recent.items[recent.added % RECENT_KEPT] = item;
  recent.added++;
  return item;
}

const LABELS_KEY = '{"labels":';
const LINE_KEY = ',"line":';
const LABELS_END = `}${LINE_KEY}`;
const NO_LABELS = `${LABELS_KEY}{${LABELS_END}`;

let lastLabelsLayout: LabelsLayout | undefined;
/** The values of the labels being written, in `names` order (reused from entry to entry). */
const labelValues: string[] = [];

/** `{"labels":{…},"line":` for these labels. */
function labelsHead(labels: Labels): string {
  const layout = labelsLayout(labels);
  if (layout === undefined) return `${LABELS_KEY}${JSON.stringify(sortedObject(labels))}${LINE_KEY}`;
  const { sortedIndex, valueTexts } = layout;
  const count = sortedIndex.length;
  if (count === 0) return NO_LABELS;
  let text = '';
  for (let i = 0; i < count; i++) text += valueText(valueTexts[i]!, layout.keys[i]!, labelValues[sortedIndex[i]!]!).text;
  return text + LABELS_END;
}

/** The text of one label's key and value, from the last few or made now. */
function valueText(recent: Recent<ValueText>, key: string, value: string): ValueText {
  for (const item of recent.items) {
    if (item.value !== value) continue;
    if (!item.flat) {
      item.text = flat([key, quote(value)]);
      item.flat = true;
    }
    return item;
  }
  return addRecent(recent, { value, text: key + quote(value), flat: false });
}

/**
 * The layout for these labels' names, their values left in `labelValues`; undefined when a name
 * is an array index (an object lists those first, so the view object's order is not the sorted one).
 */
function labelsLayout(labels: Labels): LabelsLayout | undefined {
  const layout = lastLabelsLayout;
  if (layout !== undefined && valuesByNames(labels, layout.names, labelValues)) return layout;
  const names = Object.keys(labels);
  if (names.some(isArrayIndex)) return undefined;
  const order = sortedNames(names);
  for (let i = 0; i < names.length; i++) labelValues[i] = labels[names[i]!]!;
  lastLabelsLayout = {
    names,
    sortedIndex: order.map((name) => names.indexOf(name)),
    keys: order.map((name, i) => `${i === 0 ? `${LABELS_KEY}{` : ','}${quote(name)}:`),
    valueTexts: order.map(() => ({ items: [], added: 0 })),
  };
  return lastLabelsLayout;
}

/**
 * Whether `object` has exactly `names`, in that order, its values then left in `values`. for…in
 * lists the names without making an array of them; a name it lists that is not the next of
 * `names` (an inherited one included) means other names.
 */
function valuesByNames<T>(object: Record<string, T>, names: readonly string[], values: T[]): boolean {
  let count = 0;
  for (const name in object) {
    if (names[count] !== name) return false;
    values[count++] = object[name]!;
  }
  return count === names.length;
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

/** What follows the timestamp's fraction digits: its end and the metadata key. */
const METADATA_KEY = 'Z","structured_metadata":';
const NO_METADATA = `${METADATA_KEY}{}`;

/** `Z","structured_metadata":{…}`: the end of the timestamp and the metadata. */
function metadataJson(pairs: readonly MetadataPair[]): string {
  if (pairs.length === 0) return NO_METADATA;
  // A later pair of the same name wins, at the position of the first, as Object.fromEntries does.
  if (pairs.length > 1 || isArrayIndex(pairs[0]!.name))
    return METADATA_KEY + JSON.stringify(Object.fromEntries(pairs.map((p) => [p.name, p.value])));
  return `${METADATA_KEY}{${quote(pairs[0]!.name)}:${quote(pairs[0]!.value)}}`;
}

/**
 * How an extracted map with these keys (as Object.keys lists them) is written by hand: for each
 * key, the text before its value. That text holds the separator (`,"extracted":{` for the first
 * value, `,` after a value, `",` after a string whose closing quote is still to come), the quoted
 * key and colon, and the opening quote when the value is a plain string: a plain string then adds
 * one piece to the output instead of three.
 */
interface ExtractedLayout {
  /** The keys as Object.keys listed them, to tell whether the next map has the same. */
  readonly names: readonly string[];
  /** PREFIXES_PER_KEY per key, at `PREFIXES_PER_KEY * i + after + (plain string ? 1 : 0)`. */
  readonly prefixes: readonly string[];
  /**
   * Per key, the last short string value found plain. Short values (a stream, a level, a flag)
   * mostly repeat from one entry to the next, and comparing one costs less than scanning it.
   */
  readonly lastShortPlain: (string | undefined)[];
}

/** The longest value compared with its key's last one: longer values mostly differ every time. */
const SHORT_VALUE = 16;

/** What a value comes after: nothing (it is the first), a whole value, or a string left open. */
const AFTER_NOTHING = 0;
const AFTER_VALUE = 2;
const AFTER_OPEN_STRING = 4;
const PREFIXES_PER_KEY = 6;

const EXTRACTED_KEY = ',"extracted":';
/** The end of the extracted map and of the entry, after what came last. */
const EXTRACTED_ENDS = [`${EXTRACTED_KEY}{}}`, '', '}}', '', '"}}'];

function extractedLayout(names: readonly string[]): ExtractedLayout {
  const prefixes: string[] = [];
  for (const name of names) {
    const key = `${quote(name)}:`;
    prefixes.push(`${EXTRACTED_KEY}{${key}`, `${EXTRACTED_KEY}{${key}"`, `,${key}`, `,${key}"`, `",${key}`, `",${key}"`);
  }
  return { names, prefixes, lastShortPlain: names.map(() => undefined) };
}

let lastExtractedLayout: ExtractedLayout | undefined;
/** The values of the extracted map being written, in `names` order (reused from entry to entry). */
const extractedValues: unknown[] = [];

/**
 * `,"extracted":{…}}`: the extracted map as JSON.stringify (with bigint as numbers) writes it,
 * and the entry's closing brace. Flat maps of text, numbers, booleans and null, the usual case,
 * are written here; anything else (nested values, other prototypes, functions that could be a
 * `toJSON`) goes to JSON.stringify whole. Keys come in Object.keys order, which is JSON.stringify's
 * own (array indices first). A value that is the entry's line (`content` after stage.cri) reuses
 * the line's JSON.
 */
function extractedTail(extracted: Extracted, line: string, lineJson: string): string {
  const prototype = Object.getPrototypeOf(extracted);
  if (prototype !== Object.prototype && prototype !== null) return `${EXTRACTED_KEY}${valueJson(extracted)}}`;
  const layout = extractedLayoutOf(extracted);
  const { prefixes, lastShortPlain } = layout;
  let json = '';
  let after = AFTER_NOTHING;
  for (let i = 0; i < layout.names.length; i++) {
    const value = extractedValues[i];
    if (typeof value === 'string' && value !== line && isPlainValue(lastShortPlain, i, value)) {
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
    else return `${EXTRACTED_KEY}${valueJson(extracted)}}`;
    json += prefixes[PREFIXES_PER_KEY * i + after]! + valueText;
    after = AFTER_VALUE;
  }
  return json + EXTRACTED_ENDS[after]!;
}

/** Whether the value of key `i` is plain: a short one that is the key's last plain value needs no scan. */
function isPlainValue(lastShortPlain: (string | undefined)[], i: number, value: string): boolean {
  if (value.length > SHORT_VALUE) return isPlain(value);
  if (value === lastShortPlain[i]) return true;
  if (!isPlain(value)) return false;
  lastShortPlain[i] = value;
  return true;
}

/** The layout for this map's keys, its values left in `extractedValues`. */
function extractedLayoutOf(extracted: Extracted): ExtractedLayout {
  const layout = lastExtractedLayout;
  if (layout !== undefined && valuesByNames(extracted, layout.names, extractedValues)) return layout;
  const names = Object.keys(extracted);
  for (let i = 0; i < names.length; i++) extractedValues[i] = extracted[names[i]!];
  lastExtractedLayout = extractedLayout(names);
  return lastExtractedLayout;
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
