/**
 * JSON PushRequest decoding, read off the bytes by a scanner rather than by `JSON.parse` and
 * protobuf-es's `fromJson`: it builds only the series, samples, labels and annotations the body
 * carries (any other value is checked and skipped without building it), counts them against the
 * object bound first, building nothing, and yields between slices. So a 16 MiB body of `{},{},…` never becomes millions of
 * objects, and never holds the event loop for long (`JSON.parse` alone holds it for a second).
 *
 * It accepts what `fromJsonString(…, { ignoreUnknownFields: true })` accepts and builds the same
 * message: proto and JSON field names (`rawProfile`, `raw_profile`), both base64 alphabets, null
 * for a default or an empty list, a leading byte order mark; strings are decoded as `JSON.parse`
 * decodes them. Errors are worded as protobuf-es words them (`cannot decode field
 * types.v1.LabelPair.name from JSON: expected string, got 1`). Differences on purpose: a problem is
 * reported where it is found, even when the body breaks further on; only a field's key written
 * twice is refused, not an unknown key nor anything inside a skipped value (the reference's
 * protojson does not look there either); nesting deeper than 1000 levels is refused.
 */
import { base64Decode } from '@bufbuild/protobuf/wire';
import { CLOSE_ARRAY, CLOSE_OBJECT, JsonDecodeError, JsonScanner, OPEN_ARRAY, OPEN_OBJECT, QUOTE, skipValue } from '../../lib/json-scan.js';
import type { LabelPair, ProfileAnnotation } from '../../lib/pyroscope/gen/types/v1/types_pb.js';
import type { PushRequest, RawProfileSeries, RawSample } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { isWellFormed } from '../../lib/regex/well-formed.js';
import { ObjectLimitError, PushObjects } from './push-objects.js';

type Scanner = JsonScanner<PushObjects>;

const REQUEST = 'push.v1.PushRequest';

/**
 * Decodes a JSON PushRequest in slices: yields after every slice of objects (as `budget` counts
 * them) or of bytes scanned. Throws Error in protobuf-es's words, or ObjectLimitError at the first
 * object past the budget's bound.
 */
export function* decodePushJsonSteps(bytes: Uint8Array, budget = new PushObjects()): Generator<void, PushRequest, void> {
  let buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The text decoder protobuf-es's caller uses drops a byte order mark.
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
  if (budget.bounded) {
    // Counted before anything is built, so a body past the bound is refused having built nothing.
    yield* countObjects(new JsonScanner(buf, budget));
    budget.restart();
  }
  const sc: Scanner = new JsonScanner(buf, budget);
  try {
    const request = yield* readRequest(sc);
    sc.finish();
    return request;
  } catch (err) {
    if (err instanceof JsonDecodeError) throw new Error(`cannot decode message ${REQUEST} from JSON: ${err.message}`);
    throw err;
  }
}

/**
 * Counts the series, samples, labels and annotations where the decode will find them, building
 * nothing; throws ObjectLimitError past the bound. Where the body is not what the decode wants it
 * stops quietly: the decode that follows reports that.
 */
function* countObjects(sc: Scanner): Generator<void, void, void> {
  try {
    if (sc.space() !== OPEN_OBJECT || !sc.open(OPEN_OBJECT, CLOSE_OBJECT)) return;
    do {
      sc.budget.count();
      if (sc.key() === 'series') yield* countList(sc, 1, countSeriesLists);
      else if (!skippedScalar(sc)) yield* skipValue(sc, 1, undefined);
      if (sc.sliceFull()) yield;
    } while (sc.more(CLOSE_OBJECT));
  } catch (err) {
    if (err instanceof ObjectLimitError) throw err;
  }
}

/** Counts the items of a list of messages; `within` steps through an item's own lists. */
function* countList(sc: Scanner, depth: number, within?: (sc: Scanner) => Generator<void, void, void>): Generator<void, void, void> {
  if (sc.space() !== OPEN_ARRAY) return yield* skipValue(sc, depth, undefined);
  if (!sc.open(OPEN_ARRAY, CLOSE_ARRAY)) return;
  do {
    sc.budget.object();
    if (within && sc.space() === OPEN_OBJECT) yield* within(sc);
    else if (!skippedScalar(sc)) yield* skipValue(sc, depth + 1, undefined);
    if (sc.sliceFull()) yield;
  } while (sc.more(CLOSE_ARRAY));
}

function* countSeriesLists(sc: Scanner): Generator<void, void, void> {
  if (!sc.open(OPEN_OBJECT, CLOSE_OBJECT)) return;
  do {
    const key = sc.key();
    sc.budget.count();
    if (key === 'labels' || key === 'samples' || key === 'annotations') yield* countList(sc, 3);
    else if (!skippedScalar(sc)) yield* skipValue(sc, 3, undefined);
    if (sc.sliceFull()) yield;
  } while (sc.more(CLOSE_OBJECT));
}

function* readRequest(sc: Scanner): Generator<void, PushRequest, void> {
  const request: PushRequest = { $typeName: REQUEST, series: [] };
  const keys = yield* openMessage(sc, REQUEST, 0, REQUEST_FIELDS);
  if (!keys) return request;
  do {
    const key = keys.next();
    if (key === 'series') request.series = yield* readList(sc, `${REQUEST}.series`, readSeries);
    else if (!skippedScalar(sc)) yield* skipValue(sc, 1, undefined);
    if (sc.sliceFull()) yield;
  } while (sc.more(CLOSE_OBJECT));
  return request;
}

function* readSeries(sc: Scanner): Generator<void, RawProfileSeries, void> {
  const type = 'push.v1.RawProfileSeries';
  const series: RawProfileSeries = { $typeName: type, labels: [], samples: [], annotations: [] };
  sc.budget.object();
  const keys = yield* openMessage(sc, type, 2, SERIES_FIELDS);
  if (!keys) return series;
  do {
    const key = keys.next();
    if (key === 'labels') series.labels = yield* readList(sc, `${type}.labels`, readLabel);
    else if (key === 'samples') series.samples = yield* readList(sc, `${type}.samples`, readSample);
    else if (key === 'annotations') series.annotations = yield* readList(sc, `${type}.annotations`, readAnnotation);
    else if (!skippedScalar(sc)) yield* skipValue(sc, 3, undefined);
    if (sc.sliceFull()) yield;
  } while (sc.more(CLOSE_OBJECT));
  return series;
}

function* readLabel(sc: Scanner): Generator<void, LabelPair, void> {
  const [name, value] = yield* readStringPair(sc, 'types.v1.LabelPair', 'name');
  return { $typeName: 'types.v1.LabelPair', name, value };
}

function* readAnnotation(sc: Scanner): Generator<void, ProfileAnnotation, void> {
  const [key, value] = yield* readStringPair(sc, 'types.v1.ProfileAnnotation', 'key');
  return { $typeName: 'types.v1.ProfileAnnotation', key, value };
}

/** A message of two string fields, `first` and `value`, as LabelPair and ProfileAnnotation are. */
function* readStringPair(sc: Scanner, type: string, first: string): Generator<void, [string, string], void> {
  sc.budget.object();
  let firstValue = '';
  let secondValue = '';
  const keys = yield* openMessage(sc, type, 4, [first, 'value']);
  if (!keys) return [firstValue, secondValue];
  do {
    const key = keys.next();
    if (key === first) firstValue = yield* readString(sc, `${type}.${first}`);
    else if (key === 'value') secondValue = yield* readString(sc, `${type}.value`);
    else if (!skippedScalar(sc)) yield* skipValue(sc, 5, undefined);
    if (sc.sliceFull()) yield;
  } while (sc.more(CLOSE_OBJECT));
  return [firstValue, secondValue];
}

function* readSample(sc: Scanner): Generator<void, RawSample, void> {
  const type = 'push.v1.RawSample';
  const sample: RawSample = { $typeName: type, rawProfile: new Uint8Array(0), ID: '' };
  sc.budget.object();
  const keys = yield* openMessage(sc, type, 4, SAMPLE_FIELDS);
  if (!keys) return sample;
  let profileSet = false;
  do {
    const key = keys.next();
    if (key === 'rawProfile' || key === 'raw_profile') {
      // The proto name and the JSON name are one field.
      if (profileSet) throw fieldError(`${type}.raw_profile`, 'set multiple times');
      profileSet = true;
      sample.rawProfile = yield* readBytes(sc, `${type}.raw_profile`);
    } else if (key === 'ID') sample.ID = yield* readString(sc, `${type}.ID`);
    else if (!skippedScalar(sc)) yield* skipValue(sc, 5, undefined);
    if (sc.sliceFull()) yield;
  } while (sc.more(CLOSE_OBJECT));
  return sample;
}

/** A repeated message field: null is an empty list, and no item may be null. */
function* readList<T>(sc: Scanner, field: string, readItem: (sc: Scanner) => Generator<void, T, void>): Generator<void, T[], void> {
  const items: T[] = [];
  if (sc.null()) return items;
  if (sc.valueStart() !== OPEN_ARRAY) throw fieldError(field, `expected Array, got ${yield* describe(sc)}`);
  if (!sc.open(OPEN_ARRAY, CLOSE_ARRAY)) return items;
  do {
    if (sc.null()) throw fieldError(field, 'list item must not be null');
    items.push(yield* readItem(sc));
    if (sc.sliceFull()) yield;
  } while (sc.more(CLOSE_ARRAY));
  return items;
}

/**
 * Opens a message's object: its keys (each read with its colon, a field's key written twice
 * refused), or undefined when it is empty. Anything but an object is refused as protobuf-es
 * refuses it.
 */
function* openMessage(sc: Scanner, type: string, depth: number, fields: readonly string[]): Generator<void, MessageKeys | undefined, void> {
  if (sc.valueStart() !== OPEN_OBJECT) throw new Error(`cannot decode message ${type} from JSON: ${yield* describe(sc, depth)}`);
  return sc.open(OPEN_OBJECT, CLOSE_OBJECT) ? new MessageKeys(sc, fields) : undefined;
}

const REQUEST_FIELDS = ['series'];
const SERIES_FIELDS = ['labels', 'samples', 'annotations'];
const SAMPLE_FIELDS = ['rawProfile', 'raw_profile', 'ID'];

/**
 * The keys of one message object, in order. A field's key seen twice is refused; unknown keys are
 * not remembered (the reference's protojson does not either), so a body of millions of distinct
 * unknown keys costs no memory here.
 */
class MessageKeys {
  private readonly seen: string[] = [];

  constructor(
    private readonly sc: Scanner,
    private readonly fields: readonly string[],
  ) {}

  next(): string {
    const key = this.sc.key();
    this.sc.budget.count();
    if (!this.fields.includes(key)) return key;
    if (this.seen.includes(key)) throw new Error(`cannot decode message ${REQUEST} from JSON: duplicate object key "${key}"`);
    this.seen.push(key);
    return key;
  }
}

/** A string field: null is the default, and a lone surrogate (no UTF-8 form) is refused. */
function* readString(sc: Scanner, field: string): Generator<void, string, void> {
  if (sc.null()) return '';
  if (sc.valueStart() !== QUOTE) throw fieldError(field, `expected string, got ${yield* describe(sc)}`);
  const text = sc.string();
  if (!isWellFormed(text)) throw fieldError(field, 'expected string: invalid UTF8');
  return text;
}

/** Canonical base64 (either alphabet, padding at the end only): what the native decoder reads alike. */
const PLAIN_BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** A bytes field: base64, as protobuf-es reads it; null is the default. */
function* readBytes(sc: Scanner, field: string): Generator<void, Uint8Array, void> {
  if (sc.null()) return new Uint8Array(0);
  if (sc.valueStart() !== QUOTE) throw fieldError(field, `expected Uint8Array, got ${yield* describe(sc)}`);
  const text = sc.string();
  const digits = text.length - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
  // Native decoding is lenient where protobuf-es is strict, so it is used only where both agree.
  if (digits % 4 !== 1 && PLAIN_BASE64.test(text)) return Buffer.from(text, 'base64');
  try {
    return base64Decode(text);
  } catch {
    throw fieldError(field, 'invalid base64 string');
  }
}

/**
 * Steps over a value of the wrong kind, naming it as protobuf-es names the parsed value:
 * `null`, `Array(2)`, `object`, a short string quoted, a number or boolean as written.
 */
function* describe(sc: Scanner, depth = 6): Generator<void, string, void> {
  const c = sc.valueStart();
  if (c === OPEN_ARRAY) {
    let length = 0;
    if (sc.open(OPEN_ARRAY, CLOSE_ARRAY)) {
      do {
        yield* skipValue(sc, depth + 1, undefined);
        length++;
      } while (sc.more(CLOSE_ARRAY));
    }
    return `Array(${length})`;
  }
  if (c === OPEN_OBJECT) {
    yield* skipValue(sc, depth, undefined);
    return 'object';
  }
  if (c === QUOTE) {
    const text = sc.string();
    return text.length > 30 ? 'string' : `"${text.split('"').join('\\"')}"`;
  }
  const start = sc.pos;
  sc.scalar();
  const literal = sc.buf.toString('latin1', start, sc.pos);
  return c === 0x74 || c === 0x66 || c === 0x6e ? literal : String(Number(literal));
}

/** Steps over the next value when it is a scalar (no generator needed for it); false when it is a container. */
function skippedScalar(sc: Scanner): boolean {
  const c = sc.space();
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) return false;
  sc.scalar();
  return true;
}

function fieldError(field: string, reason: string): Error {
  return new Error(`cannot decode field ${field} from JSON: ${reason}`);
}
