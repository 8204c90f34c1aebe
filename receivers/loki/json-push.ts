/**
 * The JSON push, `{"streams":[{"stream":{labels},"values":[["<ns>","<line>",{metadata}?],…]}]}`,
 * decoded by a scanner over the bytes rather than by `JSON.parse`: it builds only the streams,
 * entries and metadata the push carries (any other value is checked and skipped without building
 * it), counts them as it goes, stops at the first entry past the limit, and yields between slices.
 * So a small body of millions of `["0",""]` entries, or of a huge unknown array, never becomes
 * millions of objects, and never holds the event loop for long.
 *
 * It accepts what `JSON.parse` accepts and decodes strings as it does; a key written twice counts
 * once, the last winning, and label sets and metadata keep `JSON.parse`'s key order. Structural
 * problems fail the whole push with the same messages as before. Differences on purpose: a
 * structural problem is reported where it is found, even when the body breaks further on;
 * nesting deeper than 1000 levels is refused; syntax errors name the byte offset.
 */
import type { Labels, MetadataPair } from '../../core/entry.js';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  JsonDecodeError,
  JsonScanner,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  skipValue as skipJsonValue,
} from '../../lib/json-scan.js';
import { SliceBudget, type DecodeProgress, type WireEntry } from '../../lib/loki/wire.js';
import type { PushedStream } from './decoded-push.js';

/** A body that is not a valid JSON push (JsonPushError): the message says what and where. */
export { JsonDecodeError as JsonPushError, MAX_JSON_DEPTH } from '../../lib/json-scan.js';

type Scanner = JsonScanner<SliceBudget>;

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NANOSECONDS = /^-?[0-9]{1,19}$/;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * Decodes a JSON push body, which must be valid UTF-8. Yields its progress after every slice of
 * decoded items (as `budget` counts them) or scanned bytes; `budget.progress` holds the final
 * count. Throws JsonPushError, or EntryLimitError past the budget's entry limit.
 */
export function* decodeJsonPushSteps(body: Buffer, budget = new SliceBudget()): Generator<DecodeProgress, PushedStream[], void> {
  const sc = new JsonScanner(body, budget);
  let streams: PushedStream[] = [];
  if (sc.valueStart() !== OPEN_OBJECT) bad('body', 'expected an object');
  if (sc.open(OPEN_OBJECT, CLOSE_OBJECT)) {
    do {
      // A key written twice: the last value wins, as with JSON.parse.
      if (sc.key() === 'streams') streams = yield* decodeStreams(sc);
      else yield* skipValue(sc, 1);
    } while (sc.more(CLOSE_OBJECT));
  }
  sc.finish();
  return streams;
}

function* decodeStreams(sc: Scanner): Generator<DecodeProgress, PushedStream[], void> {
  const streams: PushedStream[] = [];
  if (sc.null()) return streams;
  if (sc.valueStart() !== OPEN_ARRAY) bad('streams', 'expected an array');
  if (sc.open(OPEN_ARRAY, CLOSE_ARRAY)) {
    do streams.push(yield* decodeStream(sc, `streams[${streams.length}]`));
    while (sc.more(CLOSE_ARRAY));
  }
  return streams;
}

function* decodeStream(sc: Scanner, at: string): Generator<DecodeProgress, PushedStream, void> {
  if (sc.valueStart() !== OPEN_OBJECT) bad(at, 'expected an object');
  sc.budget.stream();
  let labels: Labels = {};
  let labelError: string | undefined;
  let entries: WireEntry[] = [];
  if (sc.open(OPEN_OBJECT, CLOSE_OBJECT)) {
    do {
      const key = sc.key();
      if (key === 'stream') {
        const start = sc.pos;
        const raw = yield* stringMap(sc, `${at}.stream`, 'expected an object of label values');
        sc.budget.text(sc.pos - start);
        labels = {};
        labelError = undefined;
        for (const [name, value] of Object.entries(raw)) {
          if (typeof value !== 'string') bad(`${at}.stream.${name}`, 'label values must be strings');
          if (!LABEL_NAME.test(name)) labelError ??= `invalid label name ${JSON.stringify(name)}`;
          labels[name] = value;
        }
      } else if (key === 'values') entries = yield* decodeValues(sc, `${at}.values`);
      else yield* skipValue(sc, 3);
    } while (sc.more(CLOSE_OBJECT));
  }
  return labelError === undefined ? { labels, entries } : { labels: undefined, labelError, entries };
}

/**
 * The entries of one stream, each parsed here rather than by a helper per entry (the hot loop);
 * its elements are read first and then checked in the order the messages have always come in.
 */
function* decodeValues(sc: Scanner, at: string): Generator<DecodeProgress, WireEntry[], void> {
  const entries: WireEntry[] = [];
  if (sc.null()) return entries;
  if (sc.valueStart() !== OPEN_ARRAY) bad(at, 'expected an array');
  if (!sc.open(OPEN_ARRAY, CLOSE_ARRAY)) return entries;
  const vAt = () => `${at}[${entries.length}]`;
  do {
    const start = sc.pos;
    if (sc.valueStart() !== OPEN_ARRAY)
      bad(vAt(), 'expected ["<unix epoch in nanoseconds>", "<log line>"] with optional structured metadata');
    sc.budget.entry(0);
    let count = 0;
    let ts: string | undefined;
    let tsShown = '';
    let line: string | undefined;
    let meta: Record<string, unknown> | undefined;
    let metaIsObject = true;
    if (sc.open(OPEN_ARRAY, CLOSE_ARRAY)) {
      do {
        const c = sc.valueStart();
        if (count === 0) {
          if (c === QUOTE) ts = sc.string();
          else tsShown = yield* describeValue(sc);
        } else if (count === 1 && c === QUOTE) line = sc.string();
        // An object, so stringMap has no shape to complain about (hence no place or message).
        else if (count === 2 && c === OPEN_OBJECT) meta = yield* stringMap(sc, '', '');
        else if (count !== 2 || !sc.null()) {
          if (count === 2) metaIsObject = false;
          yield* skipValue(sc, 5);
        }
        count++;
      } while (sc.more(CLOSE_ARRAY));
    }
    if (count < 2 || count > 3) bad(vAt(), 'expected ["<unix epoch in nanoseconds>", "<log line>"] with optional structured metadata');
    if (ts === undefined || !NANOSECONDS.test(ts))
      bad(
        `${vAt()}[0]`,
        `timestamp must be a string of nanoseconds since the epoch, got ${ts === undefined ? tsShown : JSON.stringify(ts)}`,
      );
    const timestampNs = BigInt(ts);
    if (timestampNs < INT64_MIN || timestampNs > INT64_MAX) bad(`${vAt()}[0]`, `timestamp ${ts} is out of range`);
    if (line === undefined) bad(`${vAt()}[1]`, 'the log line must be a string');
    if (!metaIsObject) bad(`${vAt()}[2]`, 'structured metadata must be an object of strings');
    const structuredMetadata: MetadataPair[] = [];
    if (meta !== undefined) {
      for (const [name, value] of Object.entries(meta)) {
        if (typeof value !== 'string') bad(`${vAt()}[2].${name}`, 'structured metadata values must be strings');
        structuredMetadata.push({ name, value });
      }
    }
    entries.push({ timestampNs, line, structuredMetadata });
    sc.budget.text(sc.pos - start);
    if (sc.sliceFull()) yield sc.budget.progress;
  } while (sc.more(CLOSE_ARRAY));
  return entries;
}

/**
 * An object read into a plain object the way JSON.parse builds it (so `Object.entries` gives its
 * key order); values that are not strings are kept as null, as the callers only need to know
 * that. `null` reads as an empty object. Anything else fails with `what` at `at`.
 */
function* stringMap(sc: Scanner, at: string, what: string): Generator<DecodeProgress, Record<string, unknown>, void> {
  const out: Record<string, unknown> = {};
  if (sc.null()) return out;
  if (sc.valueStart() !== OPEN_OBJECT) bad(at, what);
  if (!sc.open(OPEN_OBJECT, CLOSE_OBJECT)) return out;
  do {
    const key = sc.key();
    sc.budget.pair();
    let value: string | null = null;
    if (sc.valueStart() === QUOTE) value = sc.string();
    else yield* skipValue(sc, 6);
    // JSON.parse makes `__proto__` an own key; plain assignment would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
    if (sc.sliceFull()) yield sc.budget.progress;
  } while (sc.more(CLOSE_OBJECT));
  return out;
}

/** A value that is not what its place wants, shown as JSON.stringify would show the parsed value. */
function* describeValue(sc: Scanner): Generator<DecodeProgress, string, void> {
  const start = sc.pos;
  const c = sc.space();
  yield* skipValue(sc, 5);
  const text = sc.buf.toString('utf8', start, sc.pos);
  if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
    // A large container is named rather than echoed back.
    if (sc.pos - start > 1024) return c === OPEN_ARRAY ? 'an array' : 'an object';
  }
  return JSON.stringify(JSON.parse(text));
}

/** Checks and steps over one value without building it; `depth` is where it starts. */
function skipValue(sc: Scanner, depth: number): Generator<DecodeProgress, void, void> {
  return skipJsonValue(sc, depth, sc.budget.progress);
}

function bad(where: string, what: string): never {
  throw new JsonDecodeError(`${where}: ${what}`);
}
