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

/** Decodes a PushRequest body (already decompressed). Throws WireError. */
export function decodePushRequest(bytes: Uint8Array): WireStream[] {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const reader = new Reader(buf, 0, buf.length);
  const streams: WireStream[] = [];
  while (reader.pos < reader.end) {
    const [field, wireType] = reader.tag();
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'PushRequest', 'streams');
      const [start, end] = reader.span();
      streams.push(decodeStream(new Reader(buf, start, end)));
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'PushRequest', 'format');
      reader.string('PushRequest.format');
    } else reader.skip(wireType, field);
  }
  return streams;
}

function decodeStream(reader: Reader): WireStream {
  let labels = '';
  const entries: WireEntry[] = [];
  while (reader.pos < reader.end) {
    const [field, wireType] = reader.tag();
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'StreamAdapter', 'labels');
      labels = reader.string('StreamAdapter.labels');
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'StreamAdapter', 'entries');
      const [start, end] = reader.span();
      entries.push(decodeEntry(new Reader(reader.buf, start, end)));
    } else reader.skip(wireType, field);
  }
  return { labels, entries };
}

function decodeEntry(reader: Reader): WireEntry {
  let seconds = 0n;
  let nanos = 0n;
  let line = '';
  const structuredMetadata: MetadataPair[] = [];
  while (reader.pos < reader.end) {
    const [field, wireType] = reader.tag();
    if (field === 1) {
      expectWireType(wireType, LENGTH_DELIMITED, 'EntryAdapter', 'timestamp');
      const [start, end] = reader.span();
      // A message field written twice merges: each scalar seen later wins.
      const ts = new Reader(reader.buf, start, end);
      while (ts.pos < ts.end) {
        const [tsField, tsWire] = ts.tag();
        if (tsField === 1) {
          expectWireType(tsWire, VARINT, 'Timestamp', 'seconds');
          seconds = ts.int64();
        } else if (tsField === 2) {
          expectWireType(tsWire, VARINT, 'Timestamp', 'nanos');
          nanos = BigInt(BigInt.asIntN(32, ts.int64()));
        } else ts.skip(tsWire, tsField);
      }
    } else if (field === 2) {
      expectWireType(wireType, LENGTH_DELIMITED, 'EntryAdapter', 'line');
      line = reader.string('EntryAdapter.line');
    } else if (field === 3) {
      expectWireType(wireType, LENGTH_DELIMITED, 'EntryAdapter', 'structuredMetadata');
      const [start, end] = reader.span();
      structuredMetadata.push(decodePair(new Reader(reader.buf, start, end)));
    } else reader.skip(wireType, field);
  }
  return { timestampNs: seconds * NS_PER_SECOND + nanos, line, structuredMetadata };
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
