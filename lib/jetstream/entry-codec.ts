/**
 * The wire form of log entries on JetStream, spoken by logs.write.jetstream and
 * logs.source.jetstream: one message carries entries of one stream (one label set), in order, so
 * a stream's entries sent together are stored, delivered and acknowledged together.
 *
 * Version 1, all integers unsigned LEB128 varints unless said otherwise, strings as a varint byte
 * length followed by UTF-8:
 * ```
 * u8      version = 1
 * varint  label count, then (name string, value string) per label
 * varint  entry count, then per entry:
 *   i64   timestamp, nanoseconds since the Unix epoch, big-endian two's complement
 *   string line
 *   varint structured-metadata count, then (name string, value string) per pair, in order
 * ```
 * A reader meeting another version byte, a length running past the end or bytes left over
 * rejects the message as malformed rather than guessing.
 */

import { finishSteps, ItemSlices } from '../slices.js';

/** The version byte this module writes and the only one it reads. */
export const ENTRY_CODEC_VERSION = 1;

/** A stream's entries as the codec carries them (the kernel's Entry without pipeline state). */
export interface WireBatch {
  readonly labels: Readonly<Record<string, string>>;
  readonly entries: readonly WireEntry[];
}

export interface WireEntry {
  readonly timestamp: bigint;
  readonly line: string;
  readonly structuredMetadata: readonly { readonly name: string; readonly value: string }[];
}

/** A message that is not a version-1 entry batch; the message says where decoding stopped. */
export class MalformedEntryMessage extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedEntryMessage';
  }
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

function stringSize(s: string): number {
  const bytes = Buffer.byteLength(s, 'utf8');
  return varintSize(bytes) + bytes;
}

/** Bytes the encoding of one entry takes, so writers can cut messages to a size. */
export function encodedEntrySize(entry: WireEntry): number {
  let size = 8 + stringSize(entry.line) + varintSize(entry.structuredMetadata.length);
  for (const pair of entry.structuredMetadata) size += stringSize(pair.name) + stringSize(pair.value);
  return size;
}

/** Bytes the header (version and labels) of a batch with these labels takes. */
export function encodedLabelsSize(labels: Readonly<Record<string, string>>): number {
  const names = Object.keys(labels);
  let size = 1 + varintSize(names.length);
  for (const name of names) size += stringSize(name) + stringSize(labels[name]!);
  return size;
}

/** Encodes one stream's entries as a version-1 message. */
export function encodeEntryBatch(batch: WireBatch): Buffer {
  const names = Object.keys(batch.labels);
  let size = encodedLabelsSize(batch.labels) + varintSize(batch.entries.length);
  for (const entry of batch.entries) size += encodedEntrySize(entry);
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  const writeVarint = (n: number) => {
    while (n >= 0x80) {
      buf[at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[at++] = n;
  };
  const writeString = (s: string) => {
    const bytes = Buffer.byteLength(s, 'utf8');
    writeVarint(bytes);
    at += buf.write(s, at, 'utf8');
  };
  buf[at++] = ENTRY_CODEC_VERSION;
  writeVarint(names.length);
  for (const name of names) {
    writeString(name);
    writeString(batch.labels[name]!);
  }
  writeVarint(batch.entries.length);
  for (const entry of batch.entries) {
    buf.writeBigInt64BE(entry.timestamp, at);
    at += 8;
    writeString(entry.line);
    writeVarint(entry.structuredMetadata.length);
    for (const pair of entry.structuredMetadata) {
      writeString(pair.name);
      writeString(pair.value);
    }
  }
  return buf;
}

/** Decoded entries: fresh objects the caller may mutate. */
export interface DecodedBatch {
  labels: Record<string, string>;
  entries: DecodedEntry[];
}

export interface DecodedEntry {
  timestamp: bigint;
  line: string;
  structuredMetadata: { name: string; value: string }[];
}

/** A message declaring more entries than the reader takes in one message. */
export class EntryCountExceeded extends Error {
  constructor(
    readonly entries: number,
    readonly limit: number,
  ) {
    super(`message has ${entries} entries, more than the limit of ${limit}`);
    this.name = 'EntryCountExceeded';
  }
}

/** Decodes a version-1 message at once; throws MalformedEntryMessage for anything else. */
export function decodeEntryBatch(data: Uint8Array): DecodedBatch {
  return finishSteps(decodeEntryBatchSteps(data, new ItemSlices(Number.POSITIVE_INFINITY)));
}

/**
 * Decodes a version-1 message in slices of entries and metadata pairs, as `slices` counts them
 * (one count may serve several messages, so small messages share a slice). The whole message is
 * checked first, so a malformed one is refused before any of its entries is handed on, and a
 * message declaring more than `maxEntries` entries is refused (EntryCountExceeded) before even
 * that. After every full slice it yields the labels with the entries decoded since the last
 * yield (none while checking), and returns the labels with the rest; the labels object is one for
 * the whole message. Throws MalformedEntryMessage or EntryCountExceeded.
 */
export function* decodeEntryBatchSteps(
  data: Uint8Array,
  slices: ItemSlices,
  maxEntries = Number.POSITIVE_INFINITY,
): Generator<DecodedBatch, DecodedBatch, void> {
  const reader = new WireReader(data);
  const labels = reader.labels();
  const entryCount = reader.count(10, 'entries');
  if (entryCount > maxEntries) throw new EntryCountExceeded(entryCount, maxEntries);
  const entriesStart = reader.at;
  // Slices end between metadata pairs too: one entry of a million pairs is sliced like any other.
  for (let i = 0; i < entryCount; i++) {
    reader.skipTimestamp();
    reader.skipString();
    const pairs = reader.count(2, 'metadata pairs');
    for (let j = 0; j < pairs; j++) {
      reader.skipString();
      reader.skipString();
      slices.count();
      if (slices.sliceFull()) yield { labels, entries: [] };
    }
    slices.count();
    if (slices.sliceFull()) yield { labels, entries: [] };
  }
  if (reader.at !== reader.buf.length) reader.fail(`${reader.buf.length - reader.at} bytes left over`);
  reader.at = entriesStart;
  let entries: DecodedEntry[] = [];
  for (let i = 0; i < entryCount; i++) {
    const timestamp = reader.timestamp();
    const line = reader.string();
    const pairs = reader.count(2, 'metadata pairs');
    const structuredMetadata: { name: string; value: string }[] = new Array(pairs);
    for (let j = 0; j < pairs; j++) {
      structuredMetadata[j] = { name: reader.string(), value: reader.string() };
      slices.count();
      if (j < pairs - 1 && slices.sliceFull()) {
        yield { labels, entries };
        entries = [];
      }
    }
    entries.push({ timestamp, line, structuredMetadata });
    slices.count();
    if (slices.sliceFull()) {
      yield { labels, entries };
      entries = [];
    }
  }
  return { labels, entries };
}

/** A cursor over one message; every read is checked against the end. */
class WireReader {
  readonly buf: Buffer;
  at = 0;

  constructor(data: Uint8Array) {
    this.buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  fail(what: string): never {
    throw new MalformedEntryMessage(`${what} at byte ${this.at} of ${this.buf.length}`);
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.at >= this.buf.length) return this.fail('truncated varint');
      const b = this.buf[this.at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
    return this.fail('varint too long');
  }

  /** Skips a string, returning its byte length. */
  skipString(): number {
    const length = this.varint();
    if (length > this.buf.length - this.at) this.fail(`string of ${length} bytes runs past the end`);
    this.at += length;
    return length;
  }

  string(): string {
    const length = this.skipString();
    return this.buf.toString('utf8', this.at - length, this.at);
  }

  timestamp(): bigint {
    this.skipTimestamp();
    return this.buf.readBigInt64BE(this.at - 8);
  }

  skipTimestamp(): void {
    if (this.buf.length - this.at < 8) this.fail('truncated timestamp');
    this.at += 8;
  }

  /** A count of items each at least `minBytes` long, checked against what is left. */
  count(minBytes: number, what: string): number {
    const count = this.varint();
    if (count * minBytes > this.buf.length - this.at) this.fail(`${count} ${what} cannot fit`);
    return count;
  }

  labels(): Record<string, string> {
    if (this.buf.length === 0) this.fail('empty message');
    const version = this.buf[this.at++]!;
    if (version !== ENTRY_CODEC_VERSION) this.fail(`unknown version ${version}`);
    const labels: Record<string, string> = {};
    const labelCount = this.count(2, 'labels');
    for (let i = 0; i < labelCount; i++) {
      const name = this.string();
      const value = this.string();
      // Label names come from the wire: keep `__proto__` an own property.
      if (name === '__proto__') Object.defineProperty(labels, name, { value, writable: true, enumerable: true, configurable: true });
      else labels[name] = value;
    }
    return labels;
  }
}
