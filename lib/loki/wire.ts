/**
 * The binary protobuf form of `logproto.PushRequest`, encoded and decoded by hand.
 *
 * The generated messages in `./gen` describe the same wire format and the tests hold this codec
 * to them byte for byte; this one exists because a push carries up to hundreds of thousands of
 * entries, and the reflective generated codec spends about 20 µs on each where this spends well
 * under one. Field numbers: PushRequest{streams=1, format=2}, StreamAdapter{labels=1, entries=2,
 * hash=3}, EntryAdapter{timestamp=1, line=2, structuredMetadata=3}, Timestamp{seconds=1,
 * nanos=2}, LabelPairAdapter{name=1, value=2}.
 */
import { isUtf8 } from 'node:buffer';
import { finishSteps, ItemSlices } from '../slices.js';

/** One structured-metadata name/value pair; a list of them keeps the order it was sent in. */
export interface MetadataPair {
  name: string;
  value: string;
}

/** One entry as it travels on the wire. */
export interface WireEntry {
  /** Nanoseconds since the Unix epoch. */
  readonly timestampNs: bigint;
  readonly line: string;
  readonly structuredMetadata: readonly MetadataPair[];
}

/** One stream: its label set in text form (`{a="1", b="2"}`) and its entries in order. */
export interface WireStream {
  readonly labels: string;
  readonly entries: readonly WireEntry[];
}

/** A body that is not a valid PushRequest; the message says what and where. */
export class WireError extends Error {
  constructor(
    message: string,
    /** Set when the structure is fine but a string field is not valid UTF-8. */
    readonly invalidUtf8 = false,
  ) {
    super(message);
    this.name = 'WireError';
  }
}

const NS_PER_SECOND = 1_000_000_000n;

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

// ---------------------------------------------------------------------------------------------
// Decoding

/** Varints of at most this many bytes hold less than 2^49: a JS number holds them exactly. */
const NUMBER_VARINT_BYTES = 7;

class Reader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start: number,
    /** Where the message being read ends; set to a nested message's end while that is read. */
    public end: number,
  ) {
    this.pos = start;
  }

  /** A varint that fits a JS number exactly (lengths, tags, field numbers). */
  varint(): number {
    const buf = this.buf;
    let result = 0;
    let multiplier = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('unexpected end of data');
      const byte = buf[this.pos++]!;
      result += (byte & 0x7f) * multiplier;
      if (byte < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) throw new WireError(`length or tag too large at offset ${this.pos}`);
        return result;
      }
      multiplier *= 128;
    }
    throw new WireError(`varint longer than 10 bytes at offset ${this.pos}`);
  }

  /**
   * A varint read as a signed 64-bit integer: a number when it is short enough to be a small
   * non-negative value (timestamps are), else a bigint, so the usual case allocates nothing.
   */
  int64Small(): number | bigint {
    const buf = this.buf;
    const start = this.pos;
    let result = 0;
    let multiplier = 1;
    for (let i = 0; i < NUMBER_VARINT_BYTES && start + i < this.end; i++) {
      const byte = buf[start + i]!;
      result += (byte & 0x7f) * multiplier;
      if (byte < 0x80) {
        this.pos = start + i + 1;
        return result;
      }
      multiplier *= 128;
    }
    return this.int64();
  }

  /** A varint read as a signed 64-bit integer (int64 and negative int32 use ten bytes). */
  int64(): bigint {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('unexpected end of data');
      const byte = buf[this.pos++]!;
      const bits = byte & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >> 4;
      } else hi |= bits << (7 * i - 32);
      if (byte < 0x80) return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
    }
    throw new WireError(`varint longer than 10 bytes at offset ${this.pos}`);
  }

  /**
   * Reads a length-delimited field's length and returns where its payload ends; `pos` is then at
   * the payload's start, and the caller moves it to the end once it has read the payload.
   */
  payloadEnd(): number {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) throw new WireError(`field length ${length} runs past the end of its message at offset ${start}`);
    return start + length;
  }

  string(field: string): string {
    const end = this.payloadEnd();
    const start = this.pos;
    this.pos = end;
    return this.text(start, end, field);
  }

  /**
   * The UTF-8 text between `start` and `end`. Decoding turns every invalid sequence into U+FFFD,
   * so only a text holding one needs the exact check (checking every field first needed a Buffer
   * view per string, which cost more than decoding it).
   */
  text(start: number, end: number, field: string): string {
    if (start === end) return '';
    const text = this.buf.toString('utf8', start, end);
    if (text.includes('\uFFFD') && !isUtf8(this.buf.subarray(start, end))) throw new WireError(`${field} is not valid UTF-8`, true);
    return text;
  }

  skip(wireType: number, fieldNumber: number): void {
    switch (wireType) {
      case VARINT:
        this.varint64Skip();
        return;
      case FIXED64:
        this.advance(8);
        return;
      case LENGTH_DELIMITED:
        this.pos = this.payloadEnd();
        return;
      case FIXED32:
        this.advance(4);
        return;
      default:
        throw new WireError(`field ${fieldNumber} has unsupported wire type ${wireType}`);
    }
  }

  private varint64Skip(): void {
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('unexpected end of data');
      if (this.buf[this.pos++]! < 0x80) return;
    }
    throw new WireError(`varint longer than 10 bytes at offset ${this.pos}`);
  }

  private advance(n: number): void {
    if (this.end - this.pos < n) throw new WireError('unexpected end of data');
    this.pos += n;
  }

  /** The next field's tag: field number × 8 + wire type (read them with `fieldOf`, `wireTypeOf`). */
  tag(): number {
    const tag = this.varint();
    if (tag < 8) throw new WireError(`invalid field number 0 at offset ${this.pos}`);
    return tag;
  }
}

function fieldOf(tag: number): number {
  return Math.floor(tag / 8);
}

function wireTypeOf(tag: number): number {
  return tag & 7;
}

function expectWireType(actual: number, expected: number, message: string, field: string): void {
  if (actual !== expected) throw new WireError(`${message}.${field} has wire type ${actual}, expected ${expected}`);
}

/** A push with more entries than the decode allowed; thrown as soon as the next one starts. */
export class EntryLimitError extends Error {
  constructor(readonly limit: number) {
    super(`push request has more than ${limit} entries`);
    this.name = 'EntryLimitError';
  }
}

/** What a decode has built so far: a measure of the memory it holds, reported between slices. */
export interface DecodeProgress {
  streams: number;
  entries: number;
  /** Structured-metadata pairs. */
  pairs: number;
  /** Wire bytes of the entries and label texts decoded, an upper bound of the text they hold. */
  bytes: number;
}

export interface DecodeOptions {
  /** Most entries decoded; one more throws EntryLimitError. Unlimited when absent. */
  readonly maxEntries?: number;
  /** Streams, entries and metadata pairs decoded between two yields; 1024 when absent. */
  readonly sliceItems?: number;
}

/** Items decoded between two yields unless the caller says otherwise. */
export const DECODE_SLICE_ITEMS = 1024;

/** Decodes a PushRequest body (already decompressed) at once. Throws WireError. */
export function decodePushRequest(bytes: Uint8Array): WireStream[] {
  return finishSteps(decodePushRequestSteps(bytes, new SliceBudget({ sliceItems: Number.POSITIVE_INFINITY })));
}

/**
 * Decodes a PushRequest body (already decompressed) in slices: after every slice of streams,
 * entries and metadata pairs (as `budget` counts them) it yields its progress, so the caller can
 * weigh what was built and give the event loop a turn before asking for more; `budget.progress`
 * holds the final count. Throws WireError or EntryLimitError.
 */
export function* decodePushRequestSteps(bytes: Uint8Array, budget = new SliceBudget()): Generator<DecodeProgress, WireStream[], void> {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const reader = new Reader(buf, 0, buf.length);
  const streams: WireStream[] = [];
  while (reader.pos < reader.end) {
    const tag = reader.tag();
    const field = fieldOf(tag);
    const wireType = wireTypeOf(tag);
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'PushRequest', 'streams');
      const end = reader.payloadEnd();
      const start = reader.pos;
      reader.pos = end;
      streams.push(yield* decodeStream(new Reader(buf, start, end), budget));
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'PushRequest', 'format');
      reader.string('PushRequest.format');
    } else reader.skip(wireType, field);
  }
  return streams;
}

/**
 * Counts what a decode built, stops it at the entry limit and says when a slice is full; shared
 * by the decoders of the other push formats so every format is sliced and bounded alike.
 */
export class SliceBudget extends ItemSlices {
  readonly progress: DecodeProgress = { streams: 0, entries: 0, pairs: 0, bytes: 0 };
  private readonly maxEntries: number;

  constructor(options: DecodeOptions = {}) {
    super(options.sliceItems ?? DECODE_SLICE_ITEMS);
    this.maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
  }

  stream(): void {
    this.progress.streams++;
    this.count();
  }

  /** One more entry of `bytes` on the wire. Throws EntryLimitError past the limit. */
  entry(bytes: number): void {
    if (this.progress.entries === this.maxEntries) throw new EntryLimitError(this.maxEntries);
    this.progress.entries++;
    this.progress.bytes += bytes;
    this.count();
  }

  pair(): void {
    this.progress.pairs++;
    this.count();
  }

  /** Text decoded beside the entries (label sets, say). */
  text(bytes: number): void {
    this.progress.bytes += bytes;
  }
}

/**
 * One stream, its entries decoded in place (not by a helper per entry) so that a slice may end
 * between two metadata pairs of one entry: an entry of a million empty pairs is a slice like any
 * other. Nested messages are read with the stream's reader, its `end` narrowed to theirs.
 */
function* decodeStream(reader: Reader, budget: SliceBudget): Generator<DecodeProgress, WireStream, void> {
  let labels = '';
  const entries: WireEntry[] = [];
  const streamEnd = reader.end;
  // One for all entries: each is read into it, then turned into its timestamp.
  const time: EntryTime = { seconds: 0, nanos: 0 };
  budget.stream();
  while (reader.pos < streamEnd) {
    const tag = reader.tag();
    const field = fieldOf(tag);
    const wireType = wireTypeOf(tag);
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'StreamAdapter', 'labels');
      const end = reader.payloadEnd();
      const start = reader.pos;
      reader.pos = end;
      labels = reader.text(start, end, 'StreamAdapter.labels');
      budget.text(end - start);
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'StreamAdapter', 'entries');
      const entryEnd = reader.payloadEnd();
      budget.entry(entryEnd - reader.pos);
      reader.end = entryEnd;
      time.seconds = 0;
      time.nanos = 0;
      let line = '';
      const structuredMetadata: MetadataPair[] = [];
      while (reader.pos < entryEnd) {
        const entryTag = reader.tag();
        const entryField = fieldOf(entryTag);
        const entryWire = wireTypeOf(entryTag);
        if (entryField === 1) {
          expectWireType(entryWire, LENGTH_DELIMITED, 'EntryAdapter', 'timestamp');
          decodeTimestamp(reader, time);
        } else if (entryField === 2) {
          expectWireType(entryWire, LENGTH_DELIMITED, 'EntryAdapter', 'line');
          line = reader.string('EntryAdapter.line');
        } else if (entryField === 3) {
          expectWireType(entryWire, LENGTH_DELIMITED, 'EntryAdapter', 'structuredMetadata');
          budget.pair();
          structuredMetadata.push(decodePair(reader));
          if (budget.sliceFull()) yield budget.progress;
        } else reader.skip(entryWire, entryField);
      }
      reader.end = streamEnd;
      entries.push({ timestampNs: timestampNs(time), line, structuredMetadata });
      if (budget.sliceFull()) yield budget.progress;
    } else reader.skip(wireType, field);
  }
  if (budget.sliceFull()) yield budget.progress;
  return { labels, entries };
}

/** A Timestamp as read so far: numbers while they are small (the usual case), else bigints. */
interface EntryTime {
  seconds: number | bigint;
  nanos: number;
}

/**
 * Reads a Timestamp message (its length first) into `time`: a message field written twice
 * merges, each scalar seen later wins. Leaves the reader after it.
 */
function decodeTimestamp(reader: Reader, time: EntryTime): void {
  const end = reader.payloadEnd();
  const outer = reader.end;
  reader.end = end;
  while (reader.pos < end) {
    const tag = reader.tag();
    const field = fieldOf(tag);
    const wireType = wireTypeOf(tag);
    if (field === 1) {
      expectWireType(wireType, VARINT, 'Timestamp', 'seconds');
      time.seconds = reader.int64Small();
    } else if (field === 2) {
      expectWireType(wireType, VARINT, 'Timestamp', 'nanos');
      const nanos = reader.int64Small();
      // int32: the low 32 bits, signed.
      time.nanos = typeof nanos === 'number' ? nanos | 0 : Number(BigInt.asIntN(32, nanos));
    } else reader.skip(wireType, field);
  }
  reader.end = outer;
}

/** The second last converted to nanoseconds: the entries of a push mostly share their seconds. */
let cachedSeconds = 0;
let cachedSecondsNs = 0n;

function timestampNs(time: EntryTime): bigint {
  const { seconds, nanos } = time;
  if (typeof seconds === 'bigint') return seconds * NS_PER_SECOND + BigInt(nanos);
  if (seconds !== cachedSeconds) {
    cachedSecondsNs = BigInt(seconds) * NS_PER_SECOND;
    cachedSeconds = seconds;
  }
  return nanos === 0 ? cachedSecondsNs : cachedSecondsNs + BigInt(nanos);
}

/** Reads a LabelPairAdapter message (its length first); leaves the reader after it. */
function decodePair(reader: Reader): MetadataPair {
  const end = reader.payloadEnd();
  const outer = reader.end;
  reader.end = end;
  let name = '';
  let value = '';
  while (reader.pos < end) {
    const tag = reader.tag();
    const field = fieldOf(tag);
    const wireType = wireTypeOf(tag);
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'LabelPairAdapter', 'name');
      name = reader.string('LabelPairAdapter.name');
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'LabelPairAdapter', 'value');
      value = reader.string('LabelPairAdapter.value');
    } else reader.skip(wireType, field);
  }
  reader.end = outer;
  return { name, value };
}

// ---------------------------------------------------------------------------------------------
// Encoding: sizes first (every nested message is length-prefixed), then one pass of writes.

function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/**
 * The second a run of timestamps falls in, split the way google.protobuf.Timestamp normalises a
 * time (non-negative nanos): entries of a batch mostly share their second, so the bigint division
 * is done once per second instead of once per entry, and `nanosOf` is a subtraction.
 */
class TimestampSplit {
  /** The second's first nanosecond, and the first of the next one. */
  private from = 0n;
  private to = NS_PER_SECOND;
  seconds = 0n;
  /** `seconds` as a number when it is one exactly, else undefined (written as a bigint). */
  secondsNumber: number | undefined = 0;
  /** Bytes of the seconds field (tag and varint; 0 when seconds is 0 and left out). */
  secondsFieldSize = 0;

  /** Moves to the second of `ns` and returns its nanos. */
  nanosOf(ns: bigint): number {
    this.at(ns);
    return Number(ns - this.from);
  }

  /** Moves to the second of `ns`. */
  at(ns: bigint): void {
    if (ns < this.from || ns >= this.to) this.moveTo(ns);
  }

  private moveTo(ns: bigint): void {
    let seconds = ns / NS_PER_SECOND;
    if (ns - seconds * NS_PER_SECOND < 0n) seconds -= 1n;
    this.seconds = seconds;
    this.from = seconds * NS_PER_SECOND;
    this.to = this.from + NS_PER_SECOND;
    this.secondsNumber = seconds >= 0n && seconds <= MAX_SAFE_BIGINT ? Number(seconds) : undefined;
    this.secondsFieldSize = seconds === 0n ? 0 : 1 + int64Size(seconds);
  }
}

const MAX_SAFE_BIGINT = BigInt(Number.MAX_SAFE_INTEGER);

/** Strings up to this many UTF-16 units are measured and copied in JS: a native call costs more. */
const SHORT_STRING = 32;

/** The UTF-8 length of `value`, without a native call for a short ASCII string. */
export function utf8Length(value: string): number {
  if (value.length > SHORT_STRING) return Buffer.byteLength(value, 'utf8');
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) >= 0x80) return Buffer.byteLength(value, 'utf8');
  return value.length;
}

function int64Size(value: bigint): number {
  if (value < 0n) return 10;
  if (value <= MAX_SAFE_BIGINT) return varintSize(Number(value));
  let size = 1;
  while (value >= 128n) {
    value >>= 7n;
    size++;
  }
  return size;
}

class Writer {
  pos = 0;

  constructor(readonly buf: Buffer) {}

  varint(value: number): void {
    const buf = this.buf;
    while (value >= 128) {
      buf[this.pos++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    buf[this.pos++] = value;
  }

  int64(value: bigint): void {
    let v = BigInt.asUintN(64, value);
    if (v <= MAX_SAFE_BIGINT) {
      this.varint(Number(v));
      return;
    }
    while (v >= 128n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  string(tag: number, value: string, byteLength: number): void {
    const buf = this.buf;
    buf[this.pos++] = tag;
    this.varint(byteLength);
    // As many bytes as units: ASCII, which a short string copies faster by hand.
    if (byteLength <= SHORT_STRING && byteLength === value.length) {
      for (let i = 0; i < byteLength; i++) buf[this.pos + i] = value.charCodeAt(i);
      this.pos += byteLength;
    } else this.pos += buf.write(value, this.pos, byteLength, 'utf8');
  }
}

/** Proto3 leaves empty strings and zero numbers out; so do we, to match byte for byte. */
function stringFieldSize(byteLength: number): number {
  return byteLength === 0 ? 0 : 1 + varintSize(byteLength) + byteLength;
}

/** Slots of the size list kept between encodes (8 bytes each); a larger batch gets its own. */
const KEPT_SIZE_SLOTS = 1 << 16;
let keptSizes = new Float64Array(1024);

/**
 * The sizes the first pass of an encode computes, for the second to replay: a growable list over
 * a scratch array kept between encodes (encoding is synchronous, so one at a time uses it), so a
 * batch does not allocate and grow an array of its own.
 */
class SizeList {
  private slots = keptSizes;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(value: number): void {
    if (this.count === this.slots.length) this.grow();
    this.slots[this.count++] = value;
  }

  set(index: number, value: number): void {
    this.slots[index] = value;
  }

  at(index: number): number {
    return this.slots[index]!;
  }

  private grow(): void {
    const grown = new Float64Array(this.slots.length * 2);
    grown.set(this.slots);
    this.slots = grown;
    if (grown.length <= KEPT_SIZE_SLOTS) keptSizes = grown;
  }
}

/** Encodes a PushRequest (uncompressed protobuf). */
export function encodePushRequest(streams: readonly WireStream[]): Buffer {
  // Sizes (and each entry's nanos) are computed once and replayed in the same order while writing.
  const sizes = new SizeList();
  const split = new TimestampSplit();
  let total = 0;
  for (const stream of streams) {
    const streamSizeAt = sizes.length;
    sizes.push(0);
    const labelsBytes = utf8Length(stream.labels);
    sizes.push(labelsBytes);
    let streamSize = stringFieldSize(labelsBytes);
    for (const entry of stream.entries) {
      const entrySizeAt = sizes.length;
      sizes.push(0);
      const nanos = split.nanosOf(entry.timestampNs);
      const tsSize = split.secondsFieldSize + (nanos === 0 ? 0 : 1 + varintSize(nanos));
      const lineBytes = utf8Length(entry.line);
      sizes.push(tsSize);
      sizes.push(nanos);
      sizes.push(lineBytes);
      let entrySize = 1 + varintSize(tsSize) + tsSize + stringFieldSize(lineBytes);
      for (const pair of entry.structuredMetadata) {
        const nameBytes = utf8Length(pair.name);
        const valueBytes = utf8Length(pair.value);
        const pairSize = stringFieldSize(nameBytes) + stringFieldSize(valueBytes);
        sizes.push(pairSize);
        sizes.push(nameBytes);
        sizes.push(valueBytes);
        entrySize += 1 + varintSize(pairSize) + pairSize;
      }
      sizes.set(entrySizeAt, entrySize);
      streamSize += 1 + varintSize(entrySize) + entrySize;
    }
    sizes.set(streamSizeAt, streamSize);
    total += 1 + varintSize(streamSize) + streamSize;
  }

  const w = new Writer(Buffer.allocUnsafe(total));
  let s = 0;
  for (const stream of streams) {
    w.buf[w.pos++] = 0x0a; // streams = 1
    w.varint(sizes.at(s++));
    const labelsBytes = sizes.at(s++);
    if (labelsBytes > 0) w.string(0x0a, stream.labels, labelsBytes);
    for (const entry of stream.entries) {
      w.buf[w.pos++] = 0x12; // entries = 2
      w.varint(sizes.at(s++));
      const tsSize = sizes.at(s++);
      const nanos = sizes.at(s++);
      const lineBytes = sizes.at(s++);
      split.at(entry.timestampNs);
      w.buf[w.pos++] = 0x0a; // timestamp = 1
      w.varint(tsSize);
      if (split.secondsFieldSize > 0) {
        w.buf[w.pos++] = 0x08;
        if (split.secondsNumber !== undefined) w.varint(split.secondsNumber);
        else w.int64(split.seconds);
      }
      if (nanos !== 0) {
        w.buf[w.pos++] = 0x10;
        w.varint(nanos);
      }
      if (lineBytes > 0) w.string(0x12, entry.line, lineBytes);
      for (const pair of entry.structuredMetadata) {
        w.buf[w.pos++] = 0x1a; // structuredMetadata = 3
        w.varint(sizes.at(s++));
        const nameBytes = sizes.at(s++);
        const valueBytes = sizes.at(s++);
        if (nameBytes > 0) w.string(0x0a, pair.name, nameBytes);
        if (valueBytes > 0) w.string(0x12, pair.value, valueBytes);
      }
    }
  }
  return w.buf;
}
