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
import { SliceBudget, type DecodeProgress, type WireEntry } from '../../lib/loki/wire.js';
import type { PushedStream } from './decoded_push.js';

/** A body that is not a valid JSON push; the message says what and where. */
export class JsonPushError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPushError';
  }
}

/** Deepest nesting accepted; the push itself needs six levels. */
export const MAX_JSON_DEPTH = 1000;

/** Bytes scanned between two yields, for bodies of few but large or skipped values. */
const SLICE_BYTES = 1 << 20;

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NANOSECONDS = /^-?[0-9]{1,19}$/;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * Decodes a JSON push body, which must be valid UTF-8. Yields its progress after every slice of
 * decoded items (as `budget` counts them) or scanned bytes; `budget.progress` holds the final
 * count. Throws JsonPushError, or EntryLimitError past the budget's entry limit.
 */
export function* decodeJsonPushSteps(body: Buffer, budget = new SliceBudget()): Generator<DecodeProgress, PushedStream[], void> {
  const sc = new Scanner(body, budget);
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

/**
 * Checks and steps over one value of any kind without building it. Iterative (a stack of
 * container kinds, not recursion), so nesting costs no call stack; `depth` is where it starts.
 */
function* skipValue(sc: Scanner, depth: number): Generator<DecodeProgress, void, void> {
  const inObject: boolean[] = [];
  for (;;) {
    const c = sc.space();
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth + inObject.length >= MAX_JSON_DEPTH) throw new JsonPushError(`nesting is deeper than ${MAX_JSON_DEPTH} levels`);
      const isObject = c === OPEN_OBJECT;
      if (sc.open(c, isObject ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        inObject.push(isObject);
        if (isObject) sc.skipKey();
        continue;
      }
    } else sc.scalar();
    // After a value: close containers until one has a next member.
    for (;;) {
      if (inObject.length === 0) return;
      if (sc.sliceFull()) yield sc.budget.progress;
      const isObject = inObject[inObject.length - 1]!;
      if (sc.more(isObject ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        if (isObject) sc.skipKey();
        break;
      }
      inObject.pop();
    }
  }
}

function bad(where: string, what: string): never {
  throw new JsonPushError(`${where}: ${what}`);
}

/** The bytes and the position in them, with the token-level steps of JSON's grammar. */
class Scanner {
  pos = 0;
  private yieldAt = SLICE_BYTES;

  constructor(
    readonly buf: Buffer,
    readonly budget: SliceBudget,
  ) {}

  /** True once per full slice, counted in items decoded or bytes scanned. */
  sliceFull(): boolean {
    if (this.budget.sliceFull() || this.pos >= this.yieldAt) {
      this.budget.restartSlice();
      this.yieldAt = this.pos + SLICE_BYTES;
      return true;
    }
    return false;
  }

  /**
   * Skips whitespace to the next value; its first byte. Fails unless a value can start there, so
   * a broken body is named as broken rather than as the wrong shape.
   */
  valueStart(): number {
    const c = this.space();
    if (
      c === OPEN_OBJECT ||
      c === OPEN_ARRAY ||
      c === QUOTE ||
      c === 0x2d ||
      (c >= 0x30 && c <= 0x39) ||
      c === 0x74 ||
      c === 0x66 ||
      c === 0x6e
    )
      return c;
    return this.fail();
  }

  /** Skips whitespace; the next byte, or -1 at the end. */
  space(): number {
    const buf = this.buf;
    let pos = this.pos;
    while (pos < buf.length) {
      const c = buf[pos]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
    return pos < buf.length ? buf[pos]! : -1;
  }

  fail(): never {
    if (this.pos >= this.buf.length) throw new JsonPushError('Unexpected end of JSON input');
    const token = String.fromCodePoint(this.buf.toString('utf8', this.pos, Math.min(this.pos + 4, this.buf.length)).codePointAt(0)!);
    throw new JsonPushError(`Unexpected token ${JSON.stringify(token)} at byte ${this.pos}`);
  }

  /** Consumes `open`; false (and the close consumed too) when the container is empty. */
  open(open: number, close: number): boolean {
    if (this.space() !== open) this.fail();
    this.pos++;
    if (this.space() !== close) return true;
    this.pos++;
    return false;
  }

  /** After a member: true past a comma (another member follows), false past `close`. */
  more(close: number): boolean {
    const c = this.space();
    this.pos++;
    if (c === COMMA) return true;
    if (c === close) return false;
    this.pos--;
    return this.fail();
  }

  /** An object key and its colon. */
  key(): string {
    if (this.space() !== QUOTE) this.fail();
    const key = this.string();
    if (this.space() !== COLON) this.fail();
    this.pos++;
    return key;
  }

  skipKey(): void {
    if (this.space() !== QUOTE) this.fail();
    this.stringEnd();
    this.pos++;
    if (this.space() !== COLON) this.fail();
    this.pos++;
  }

  /** Consumes a `null`, if that is what comes next. */
  null(): boolean {
    if (this.space() !== 0x6e) return false;
    this.literal('null');
    return true;
  }

  /** A string, number, true, false or null. */
  scalar(): void {
    const c = this.space();
    if (c === QUOTE) {
      this.stringEnd();
      this.pos++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.number();
    else if (c === 0x74) this.literal('true');
    else if (c === 0x66) this.literal('false');
    else if (c === 0x6e) this.literal('null');
    else this.fail();
  }

  private literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      if (this.buf[this.pos] !== word.charCodeAt(i)) this.fail();
      this.pos++;
    }
  }

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` */
  private number(): void {
    const buf = this.buf;
    if (buf[this.pos] === 0x2d) this.pos++;
    if (buf[this.pos] === 0x30) this.pos++;
    else if (!this.digits()) this.fail();
    if (buf[this.pos] === 0x2e) {
      this.pos++;
      if (!this.digits()) this.fail();
    }
    if (buf[this.pos] === 0x65 || buf[this.pos] === 0x45) {
      this.pos++;
      if (buf[this.pos] === 0x2b || buf[this.pos] === 0x2d) this.pos++;
      if (!this.digits()) this.fail();
    }
  }

  private digits(): boolean {
    const start = this.pos;
    while (this.pos < this.buf.length && this.buf[this.pos]! >= 0x30 && this.buf[this.pos]! <= 0x39) this.pos++;
    return this.pos > start;
  }

  /** The string starting at the current quote, decoded as JSON.parse decodes it. */
  string(): string {
    const start = this.pos;
    const escaped = this.stringEnd();
    const end = this.pos;
    this.pos++;
    // Escapes are rare in log pushes; JSON.parse of the one literal decodes them exactly.
    if (escaped) return JSON.parse(this.buf.toString('utf8', start, end + 1)) as string;
    return this.buf.toString('utf8', start + 1, end);
  }

  /**
   * Moves to the closing quote of the string starting here, checking its escapes and that it
   * holds no raw control character; true when it has escapes.
   */
  private stringEnd(): boolean {
    const buf = this.buf;
    let pos = this.pos + 1;
    let escaped = false;
    for (;;) {
      if (pos >= buf.length) {
        this.pos = pos;
        this.fail();
      }
      const c = buf[pos]!;
      if (c === QUOTE) break;
      if (c < 0x20) {
        this.pos = pos;
        this.fail();
      }
      if (c === BACKSLASH) {
        escaped = true;
        const next = buf[++pos];
        if (next === 0x75) {
          for (let i = 1; i <= 4; i++) {
            const h = buf[pos + i];
            const hex = h !== undefined && ((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66));
            if (!hex) {
              this.pos = Math.min(pos + i, buf.length);
              this.fail();
            }
          }
          pos += 4;
        } else if (next === undefined || !ESCAPABLE.has(next)) {
          this.pos = pos;
          this.fail();
        }
      }
      pos++;
    }
    this.pos = pos;
    return escaped;
  }

  /** Only whitespace may follow the body's value. */
  finish(): void {
    if (this.space() !== -1) this.fail();
  }
}

/** The characters that may follow a backslash (besides `u`): `"` `\` `/` b f n r t. */
const ESCAPABLE = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
