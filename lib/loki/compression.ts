/**
 * The compressions a log push uses, each with an output cap checked before the output is
 * allocated, so a small hostile body cannot expand into an out-of-memory.
 * - snappy block format (the protobuf push): its length header is read first;
 * - gzip and deflate (`Content-Encoding`): zlib stops at `maxOutputLength`.
 */
import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { compress, uncompress } from 'snappyjs';

/** Decompressed output beyond the allowed size. */
export class TooLargeError extends Error {
  constructor(
    readonly limit: number,
    what: string,
  ) {
    super(`${what} is larger than the limit of ${limit} bytes`);
    this.name = 'TooLargeError';
  }
}

/** The uncompressed length a snappy block announces in its varint header, or -1 when malformed. */
export function snappyLength(block: Uint8Array): number {
  let length = 0;
  let multiplier = 1;
  for (let i = 0; i < 5 && i < block.length; i++) {
    const byte = block[i]!;
    length += (byte & 0x7f) * multiplier;
    if (byte < 0x80) return length;
    multiplier *= 128;
  }
  return -1;
}

/** Decodes a snappy block of at most `maxLength` output bytes. Throws TooLargeError or Error. */
export function snappyDecode(block: Uint8Array, maxLength: number): Buffer {
  const length = snappyLength(block);
  if (length < 0) throw new Error('invalid snappy block: bad length header');
  if (length > maxLength) throw new TooLargeError(maxLength, 'decompressed body');
  let out: Uint8Array;
  try {
    out = uncompress(block, maxLength);
  } catch (err) {
    throw new Error(`invalid snappy block: ${(err as Error).message}`);
  }
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** Compresses bytes as one snappy block. */
export function snappyEncode(bytes: Uint8Array): Buffer {
  const out = compress(bytes);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** Undoes a `Content-Encoding` of gzip or deflate (zlib-wrapped or raw) within `maxLength`. */
export function inflateBody(body: Buffer, encoding: 'gzip' | 'deflate', maxLength: number): Buffer {
  const options = { maxOutputLength: Math.max(1, maxLength) };
  try {
    if (encoding === 'gzip') return gunzipSync(body, options);
    try {
      return inflateSync(body, options);
    } catch (err) {
      // Some clients send a bare deflate stream without the zlib header.
      if ((err as NodeJS.ErrnoException).code === 'Z_DATA_ERROR') return inflateRawSync(body, options);
      throw err;
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_BUFFER_TOO_LARGE' || e.message.includes('Cannot create a Buffer larger'))
      throw new TooLargeError(maxLength, 'decompressed body');
    throw new Error(`invalid ${encoding} body: ${e.message}`);
  }
}
