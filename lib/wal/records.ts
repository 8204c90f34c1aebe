/**
 * How records sit in a write-ahead segment file: each one is an 8-byte header — the payload's
 * length and its CRC-32, both unsigned 32-bit little-endian — followed by the payload. The
 * checksum lets a reader tell a record torn by a crash mid-write, or damaged on disk, from a
 * good one.
 */
import { crc32 } from 'node:zlib';

/** Bytes of the header in front of every payload. */
export const RECORD_HEADER_BYTES = 8;

/** The largest payload a record may hold (a length above it marks a damaged header). */
export const MAX_RECORD_BYTES = 0x7fff_ffff;

/** The bytes `payloads` take on disk, headers included. */
export function framedBytes(payloads: readonly Buffer[]): number {
  let bytes = 0;
  for (const payload of payloads) bytes += RECORD_HEADER_BYTES + payload.length;
  return bytes;
}

/** The payloads framed as consecutive records, ready to append. */
export function frameRecords(payloads: readonly Buffer[]): Buffer {
  const out = Buffer.allocUnsafe(framedBytes(payloads));
  let at = 0;
  for (const payload of payloads) {
    if (payload.length > MAX_RECORD_BYTES) throw new RangeError(`record of ${payload.length} bytes is too large`);
    out.writeUInt32LE(payload.length, at);
    out.writeUInt32LE(crc32(payload), at + 4);
    payload.copy(out, at + RECORD_HEADER_BYTES);
    at += RECORD_HEADER_BYTES + payload.length;
  }
  return out;
}

export interface ParsedRecords {
  /** The payloads of the whole, intact records at the start of the buffer (views into it). */
  readonly payloads: Buffer[];
  /** Bytes those records take. */
  readonly consumed: number;
  /**
   * Set when a record's header or checksum is wrong: nothing at or after `consumed` can be
   * trusted. Otherwise what follows `consumed` is an incomplete record (read more to finish it).
   */
  readonly damaged: boolean;
  /** Bytes the next record needs in full, when its header was read but its payload was not. */
  readonly nextRecordBytes?: number;
}

/** Reads up to `limit` whole records from the start of `buf`. */
export function parseRecords(buf: Buffer, limit = Number.POSITIVE_INFINITY): ParsedRecords {
  const payloads: Buffer[] = [];
  let at = 0;
  while (payloads.length < limit && buf.length - at >= RECORD_HEADER_BYTES) {
    const length = buf.readUInt32LE(at);
    if (length > MAX_RECORD_BYTES) return { payloads, consumed: at, damaged: true };
    const end = at + RECORD_HEADER_BYTES + length;
    if (end > buf.length) return { payloads, consumed: at, damaged: false, nextRecordBytes: RECORD_HEADER_BYTES + length };
    const payload = buf.subarray(at + RECORD_HEADER_BYTES, end);
    if (crc32(payload) !== buf.readUInt32LE(at + 4)) return { payloads, consumed: at, damaged: true };
    payloads.push(payload);
    at = end;
  }
  return { payloads, consumed: at, damaged: false };
}
