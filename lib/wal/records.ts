/**
 * How records sit in a write-ahead segment file (format 2): each one is a 24-byte header followed
 * by its payload. The header holds, little-endian: a 4-byte marker, the record's sequence number
 * (unsigned 64-bit, below 2^53), the payload's length and CRC-32 (unsigned 32-bit each), and a
 * CRC-32 of the 20 bytes before it.
 *
 * The header's own checksum makes a header trustworthy wherever it is found, so a reader that
 * meets damage scans forward to the next valid header and goes on from there instead of giving up
 * the rest of the file; a payload whose checksum fails under a valid header costs that record
 * alone, since its length is known. Sequence numbers in the records tell exactly which records a
 * damaged stretch held.
 */
import { Buffer } from 'node:buffer';
import { crc32 } from 'node:zlib';

/** Bytes of the header in front of every payload. */
export const RECORD_HEADER_BYTES = 24;

/** The largest payload a record may hold. */
export const MAX_RECORD_BYTES = 0x7fff_ffff;

/** Where a record starts: "RvW2", and the same bytes read as a little-endian u32. */
const MARKER_BYTES = Buffer.from('RvW2', 'latin1');
const MARKER = MARKER_BYTES.readUInt32LE(0);
const TWO_32 = 2 ** 32;

/** A record read back. */
export interface WalRecord {
  readonly seq: number;
  /** A view into the buffer it was parsed from. */
  readonly payload: Buffer;
  /** Offset in that buffer just past the record. */
  readonly end: number;
}

/** The bytes `payloads` take on disk, headers included. */
export function framedBytes(payloads: readonly Buffer[]): number {
  let bytes = 0;
  for (const payload of payloads) bytes += RECORD_HEADER_BYTES + payload.length;
  return bytes;
}

/** The payloads framed as consecutive records numbered from `firstSeq`, ready to append. */
export function frameRecords(payloads: readonly Buffer[], firstSeq: number): Buffer {
  const out = Buffer.allocUnsafe(framedBytes(payloads));
  let at = 0;
  let seq = firstSeq;
  for (const payload of payloads) {
    if (payload.length > MAX_RECORD_BYTES) throw new RangeError(`record of ${payload.length} bytes is too large`);
    if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`record number ${seq} is out of range`);
    out.writeUInt32LE(MARKER, at);
    out.writeUInt32LE(seq % TWO_32, at + 4);
    out.writeUInt32LE(Math.floor(seq / TWO_32), at + 8);
    out.writeUInt32LE(payload.length, at + 12);
    out.writeUInt32LE(crc32(payload), at + 16);
    out.writeUInt32LE(crc32(out.subarray(at, at + 20)), at + 20);
    payload.copy(out, at + RECORD_HEADER_BYTES);
    at += RECORD_HEADER_BYTES + payload.length;
    seq++;
  }
  return out;
}

export interface ParsedRecords {
  /** The intact records, in file order. */
  readonly records: WalRecord[];
  /** Bytes looked at for good: the next parse starts here. */
  readonly consumed: number;
  /** Bytes within `consumed` that were damaged and passed over. */
  readonly skipped: number;
  /** The highest sequence number in a valid header within `consumed`, its payload intact or not (-1 without one). */
  readonly highestSeq: number;
  /** Bytes the record at `consumed` needs in full, when its header is valid but its payload runs past the buffer. */
  readonly nextRecordBytes?: number;
}

/**
 * Reads up to `limit` intact records from the start of `buf`, passing over damage: a header that
 * fails its checks is skipped up to the next valid header, and a record whose payload fails its
 * checksum is skipped whole. What may be the start of a record cut off by the buffer's end is
 * left unconsumed.
 */
export function parseRecords(buf: Buffer, limit = Number.POSITIVE_INFINITY): ParsedRecords {
  const records: WalRecord[] = [];
  let at = 0;
  let skipped = 0;
  let highestSeq = -1;
  while (records.length < limit && buf.length - at >= RECORD_HEADER_BYTES) {
    if (!validHeader(buf, at)) {
      const next = nextHeader(buf, at + 1);
      skipped += next - at;
      at = next;
      continue;
    }
    const length = buf.readUInt32LE(at + 12);
    const end = at + RECORD_HEADER_BYTES + length;
    if (end > buf.length) return { records, consumed: at, skipped, highestSeq, nextRecordBytes: RECORD_HEADER_BYTES + length };
    const seq = headerSeq(buf, at);
    const payload = buf.subarray(at + RECORD_HEADER_BYTES, end);
    if (crc32(payload) === buf.readUInt32LE(at + 16)) records.push({ seq, payload, end });
    else skipped += end - at;
    highestSeq = Math.max(highestSeq, seq);
    at = end;
  }
  return { records, consumed: at, skipped, highestSeq };
}

/** The sequence number in the valid header at `at`. */
function headerSeq(buf: Buffer, at: number): number {
  return buf.readUInt32LE(at + 8) * TWO_32 + buf.readUInt32LE(at + 4);
}

function validHeader(buf: Buffer, at: number): boolean {
  if (buf.readUInt32LE(at) !== MARKER) return false;
  if (crc32(buf.subarray(at, at + 20)) !== buf.readUInt32LE(at + 20)) return false;
  return buf.readUInt32LE(at + 12) <= MAX_RECORD_BYTES && Number.isSafeInteger(headerSeq(buf, at));
}

/** The first valid header at or after `from` in `buf`, with its sequence number. */
export function findHeader(buf: Buffer, from = 0): { readonly at: number; readonly seq: number } | undefined {
  const at = nextHeader(buf, from);
  return at <= buf.length - RECORD_HEADER_BYTES && validHeader(buf, at) ? { at, seq: headerSeq(buf, at) } : undefined;
}

/**
 * The offset of the first valid header at or after `from`; when none is in the buffer, the first
 * offset where one could still start with more bytes read.
 */
function nextHeader(buf: Buffer, from: number): number {
  const last = buf.length - RECORD_HEADER_BYTES;
  for (let at = buf.indexOf(MARKER_BYTES, from); at !== -1 && at <= last; at = buf.indexOf(MARKER_BYTES, at + 1)) {
    if (validHeader(buf, at)) return at;
  }
  return Math.max(from, last + 1);
}
