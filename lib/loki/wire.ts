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

/** One structured-metadata name/value pair, in the order it was sent. */
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

class Reader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
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

  /** The bounds of a length-delimited field's payload; advances past it. */
  span(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) throw new WireError(`field length ${length} runs past the end of its message at offset ${start}`);
    this.pos = start + length;
    return [start, start + length];
  }

  string(field: string): string {
    const [start, end] = this.span();
    return this.text(start, end, field);
  }

  /** The UTF-8 text between `start` and `end`. */
  text(start: number, end: number, field: string): string {
    if (start === end) return '';
    const view = this.buf.subarray(start, end);
    if (!isUtf8(view)) throw new WireError(`${field} is not valid UTF-8`, true);
    return this.buf.toString('utf8', start, end);
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
        this.span();
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

  /** The next field's number and wire type. */
  tag(): [number, number] {
    const tag = this.varint();
    const fieldNumber = Math.floor(tag / 8);
    if (fieldNumber === 0) throw new WireError(`invalid field number 0 at offset ${this.pos}`);
    return [fieldNumber, tag & 7];
  }
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
  const steps = decodePushRequestSteps(bytes, new SliceBudget({ sliceItems: Number.POSITIVE_INFINITY }));
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
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
    const [field, wireType] = reader.tag();
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'PushRequest', 'streams');
      const [start, end] = reader.span();
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
export class SliceBudget {
  readonly progress: DecodeProgress = { streams: 0, entries: 0, pairs: 0, bytes: 0 };
  private readonly maxEntries: number;
  private readonly sliceItems: number;
  private items = 0;
  private yieldAt: number;

  constructor(options: DecodeOptions = {}) {
    this.maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
    this.sliceItems = options.sliceItems ?? DECODE_SLICE_ITEMS;
    this.yieldAt = this.sliceItems;
  }

  stream(): void {
    this.progress.streams++;
    this.items++;
  }

  /** One more entry of `bytes` on the wire. Throws EntryLimitError past the limit. */
  entry(bytes: number): void {
    if (this.progress.entries === this.maxEntries) throw new EntryLimitError(this.maxEntries);
    this.progress.entries++;
    this.progress.bytes += bytes;
    this.items++;
  }

  pair(): void {
    this.progress.pairs++;
    this.items++;
  }

  /** Text decoded beside the entries (label sets, say). */
  text(bytes: number): void {
    this.progress.bytes += bytes;
  }

  /** True once per full slice; the caller then yields `progress`. */
  sliceFull(): boolean {
    if (this.items < this.yieldAt) return false;
    this.yieldAt = this.items + this.sliceItems;
    return true;
  }

  /** Starts a new slice now (a caller that also slices by other measures, such as bytes scanned). */
  restartSlice(): void {
    this.yieldAt = this.items + this.sliceItems;
  }
}

/**
 * One stream, its entries decoded in place (not by a helper per entry) so that a slice may end
 * between two metadata pairs of one entry: an entry of a million empty pairs is a slice like any other.
 */
function* decodeStream(reader: Reader, budget: SliceBudget): Generator<DecodeProgress, WireStream, void> {
  let labels = '';
  const entries: WireEntry[] = [];
  budget.stream();
  while (reader.pos < reader.end) {
    const [field, wireType] = reader.tag();
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'StreamAdapter', 'labels');
      const [start, end] = reader.span();
      labels = reader.text(start, end, 'StreamAdapter.labels');
      budget.text(end - start);
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'StreamAdapter', 'entries');
      const [start, end] = reader.span();
      budget.entry(end - start);
      const entry = new Reader(reader.buf, start, end);
      const time = { seconds: 0n, nanos: 0n };
      let line = '';
      const structuredMetadata: MetadataPair[] = [];
      while (entry.pos < entry.end) {
        const [entryField, entryWire] = entry.tag();
        if (entryField === 1) {
          expectWireType(entryWire, LENGTH_DELIMITED, 'EntryAdapter', 'timestamp');
          const [tsStart, tsEnd] = entry.span();
          decodeTimestamp(new Reader(entry.buf, tsStart, tsEnd), time);
        } else if (entryField === 2) {
          expectWireType(entryWire, LENGTH_DELIMITED, 'EntryAdapter', 'line');
          line = entry.string('EntryAdapter.line');
        } else if (entryField === 3) {
          expectWireType(entryWire, LENGTH_DELIMITED, 'EntryAdapter', 'structuredMetadata');
          const [pairStart, pairEnd] = entry.span();
          budget.pair();
          structuredMetadata.push(decodePair(new Reader(entry.buf, pairStart, pairEnd)));
          if (budget.sliceFull()) yield budget.progress;
        } else entry.skip(entryWire, entryField);
      }
      entries.push({ timestampNs: time.seconds * NS_PER_SECOND + time.nanos, line, structuredMetadata });
      if (budget.sliceFull()) yield budget.progress;
    } else reader.skip(wireType, field);
  }
  if (budget.sliceFull()) yield budget.progress;
  return { labels, entries };
}

/** Reads a Timestamp into `time`: a message field written twice merges, each scalar seen later wins. */
function decodeTimestamp(ts: Reader, time: { seconds: bigint; nanos: bigint }): void {
  while (ts.pos < ts.end) {
    const [field, wireType] = ts.tag();
    if (field === 1) {
      expectWireType(wireType, VARINT, 'Timestamp', 'seconds');
      time.seconds = ts.int64();
    } else if (field === 2) {
      expectWireType(wireType, VARINT, 'Timestamp', 'nanos');
      time.nanos = BigInt(BigInt.asIntN(32, ts.int64()));
    } else ts.skip(wireType, field);
  }
}

function decodePair(reader: Reader): MetadataPair {
  let name = '';
  let value = '';
  while (reader.pos < reader.end) {
    const [field, wireType] = reader.tag();
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'LabelPairAdapter', 'name');
      name = reader.string('LabelPairAdapter.name');
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'LabelPairAdapter', 'value');
      value = reader.string('LabelPairAdapter.value');
    } else reader.skip(wireType, field);
  }
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

/** Seconds and non-negative nanos of a timestamp, as google.protobuf.Timestamp normalises them. */
function splitTimestamp(ns: bigint): [bigint, number] {
  let seconds = ns / NS_PER_SECOND;
  let nanos = ns - seconds * NS_PER_SECOND;
  if (nanos < 0n) {
    nanos += NS_PER_SECOND;
    seconds -= 1n;
  }
  return [seconds, Number(nanos)];
}

function int64Size(value: bigint): number {
  if (value < 0n) return 10;
  if (value <= BigInt(Number.MAX_SAFE_INTEGER)) return varintSize(Number(value));
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
    if (v <= BigInt(Number.MAX_SAFE_INTEGER)) {
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
    this.buf[this.pos++] = tag;
    this.varint(byteLength);
    this.pos += this.buf.write(value, this.pos, byteLength, 'utf8');
  }
}

/** Proto3 leaves empty strings and zero numbers out; so do we, to match byte for byte. */
function stringFieldSize(byteLength: number): number {
  return byteLength === 0 ? 0 : 1 + varintSize(byteLength) + byteLength;
}

/** Encodes a PushRequest (uncompressed protobuf). */
export function encodePushRequest(streams: readonly WireStream[]): Buffer {
  // Sizes are computed once and replayed in the same order while writing.
  const sizes: number[] = [];
  let total = 0;
  for (const stream of streams) {
    const streamSizeAt = sizes.length;
    sizes.push(0);
    const labelsBytes = Buffer.byteLength(stream.labels, 'utf8');
    sizes.push(labelsBytes);
    let streamSize = stringFieldSize(labelsBytes);
    for (const entry of stream.entries) {
      const entrySizeAt = sizes.length;
      sizes.push(0);
      const [seconds, nanos] = splitTimestamp(entry.timestampNs);
      const tsSize = (seconds === 0n ? 0 : 1 + int64Size(seconds)) + (nanos === 0 ? 0 : 1 + varintSize(nanos));
      const lineBytes = Buffer.byteLength(entry.line, 'utf8');
      sizes.push(tsSize, lineBytes);
      let entrySize = 1 + varintSize(tsSize) + tsSize + stringFieldSize(lineBytes);
      for (const pair of entry.structuredMetadata) {
        const nameBytes = Buffer.byteLength(pair.name, 'utf8');
        const valueBytes = Buffer.byteLength(pair.value, 'utf8');
        const pairSize = stringFieldSize(nameBytes) + stringFieldSize(valueBytes);
        sizes.push(pairSize, nameBytes, valueBytes);
        entrySize += 1 + varintSize(pairSize) + pairSize;
      }
      sizes[entrySizeAt] = entrySize;
      streamSize += 1 + varintSize(entrySize) + entrySize;
    }
    sizes[streamSizeAt] = streamSize;
    total += 1 + varintSize(streamSize) + streamSize;
  }

  const w = new Writer(Buffer.allocUnsafe(total));
  let s = 0;
  for (const stream of streams) {
    w.buf[w.pos++] = 0x0a; // streams = 1
    w.varint(sizes[s++]!);
    const labelsBytes = sizes[s++]!;
    if (labelsBytes > 0) w.string(0x0a, stream.labels, labelsBytes);
    for (const entry of stream.entries) {
      w.buf[w.pos++] = 0x12; // entries = 2
      w.varint(sizes[s++]!);
      const tsSize = sizes[s++]!;
      const lineBytes = sizes[s++]!;
      const [seconds, nanos] = splitTimestamp(entry.timestampNs);
      w.buf[w.pos++] = 0x0a; // timestamp = 1
      w.varint(tsSize);
      if (seconds !== 0n) {
        w.buf[w.pos++] = 0x08;
        w.int64(seconds);
      }
      if (nanos !== 0) {
        w.buf[w.pos++] = 0x10;
        w.varint(nanos);
      }
      if (lineBytes > 0) w.string(0x12, entry.line, lineBytes);
      for (const pair of entry.structuredMetadata) {
        w.buf[w.pos++] = 0x1a; // structuredMetadata = 3
        w.varint(sizes[s++]!);
        const nameBytes = sizes[s++]!;
        const valueBytes = sizes[s++]!;
        if (nameBytes > 0) w.string(0x0a, pair.name, nameBytes);
        if (valueBytes > 0) w.string(0x12, pair.value, valueBytes);
      }
    }
  }
  return w.buf;
}
