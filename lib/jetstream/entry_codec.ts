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
  entries: { timestamp: bigint; line: string; structuredMetadata: { name: string; value: string }[] }[];
}

/** Decodes a version-1 message; throws MalformedEntryMessage for anything else. */
export function decodeEntryBatch(data: Uint8Array): DecodedBatch {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  const fail = (what: string): never => {
    throw new MalformedEntryMessage(`${what} at byte ${at} of ${buf.length}`);
  };
  const readVarint = (): number => {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (at >= buf.length) return fail('truncated varint');
      const b = buf[at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
    return fail('varint too long');
  };
  const readString = (): string => {
    const length = readVarint();
    if (length > buf.length - at) fail(`string of ${length} bytes runs past the end`);
    const s = buf.toString('utf8', at, at + length);
    at += length;
    return s;
  };
  /** A count of items each at least `minBytes` long, checked against what is left. */
  const readCount = (minBytes: number, what: string): number => {
    const count = readVarint();
    if (count * minBytes > buf.length - at) fail(`${count} ${what} cannot fit`);
    return count;
  };
  if (buf.length === 0) fail('empty message');
  const version = buf[at++]!;
  if (version !== ENTRY_CODEC_VERSION) fail(`unknown version ${version}`);
  const labels: Record<string, string> = {};
  const labelCount = readCount(2, 'labels');
  for (let i = 0; i < labelCount; i++) {
    const name = readString();
    const value = readString();
    // Label names come from the wire: keep `__proto__` an own property.
    if (name === '__proto__') Object.defineProperty(labels, name, { value, writable: true, enumerable: true, configurable: true });
    else labels[name] = value;
  }
  const entryCount = readCount(10, 'entries');
  const entries: DecodedBatch['entries'] = new Array(entryCount);
  for (let i = 0; i < entryCount; i++) {
    if (buf.length - at < 8) fail('truncated timestamp');
    const timestamp = buf.readBigInt64BE(at);
    at += 8;
    const line = readString();
    const pairs = readCount(2, 'metadata pairs');
    const structuredMetadata: { name: string; value: string }[] = new Array(pairs);
    for (let j = 0; j < pairs; j++) structuredMetadata[j] = { name: readString(), value: readString() };
    entries[i] = { timestamp, line, structuredMetadata };
  }
  if (at !== buf.length) fail(`${buf.length - at} bytes left over`);
  return { labels, entries };
}
