/**
 * The compressions a log push uses, each with an output cap checked before the output is
 * allocated, so a small hostile body cannot expand into an out-of-memory.
 * - snappy block format (the protobuf push): its length header is read first, and the block is
 *   decoded in slices so a caller can give the event loop a turn between them;
 * - gzip and deflate (`Content-Encoding`): zlib stops at `maxOutputLength`; the streaming form
 *   runs on the thread pool and hands each chunk to the caller as it comes.
 */
import {
  createGunzip,
  createInflate,
  createInflateRaw,
  gunzipSync,
  inflateRawSync,
  inflateSync,
  type Gunzip,
  type Inflate,
  type InflateRaw,
} from 'node:zlib';
import { compress } from 'snappyjs';

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

/** Bytes of snappy output decoded between two yields of `snappyDecodeSteps`. */
export const SNAPPY_SLICE_BYTES = 1 << 20;

/** Copies shorter than this are cheaper as a loop than as a native call. */
const NATIVE_COPY_BYTES = 64;

/**
 * Decodes a snappy block of at most `maxLength` output bytes, yielding the output length so far
 * after every `sliceBytes` of output; returns the output. Throws TooLargeError or Error. Unlike
 * a lenient decoder, a block whose elements do not fill exactly the announced length is corrupt,
 * as the reference's decoder holds.
 */
export function* snappyDecodeSteps(block: Uint8Array, maxLength: number, sliceBytes = SNAPPY_SLICE_BYTES): Generator<number, Buffer, void> {
  const length = snappyLength(block);
  if (length < 0) throw new Error('invalid snappy block: bad length header');
  if (length > maxLength) throw new TooLargeError(maxLength, 'decompressed body');
  const input = Buffer.isBuffer(block) ? block : Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  // Every byte is written before the buffer is returned (checked below), so it need not be zeroed.
  const out = Buffer.allocUnsafe(length);
  let pos = 0;
  while (input[pos++]! >= 0x80);
  let outPos = 0;
  let yieldAt = sliceBytes;
  const corrupt = () => new Error('invalid snappy block: Invalid Snappy bitstream');
  while (pos < input.length) {
    const tag = input[pos++]!;
    let len: number;
    if ((tag & 3) === 0) {
      len = (tag >>> 2) + 1;
      if (len > 60) {
        const extra = len - 60;
        if (pos + extra > input.length) throw corrupt();
        len = 0;
        for (let i = extra - 1; i >= 0; i--) len = len * 256 + input[pos + i]!;
        len += 1;
        pos += extra;
      }
      if (pos + len > input.length || outPos + len > length) throw corrupt();
      if (len < NATIVE_COPY_BYTES) for (let i = 0; i < len; i++) out[outPos + i] = input[pos + i]!;
      else input.copy(out, outPos, pos, pos + len);
      pos += len;
      outPos += len;
    } else {
      let offset: number;
      if ((tag & 3) === 1) {
        if (pos + 1 > input.length) throw corrupt();
        len = ((tag >>> 2) & 7) + 4;
        offset = ((tag >>> 5) << 8) | input[pos]!;
        pos += 1;
      } else if ((tag & 3) === 2) {
        if (pos + 2 > input.length) throw corrupt();
        len = (tag >>> 2) + 1;
        offset = input[pos]! | (input[pos + 1]! << 8);
        pos += 2;
      } else {
        if (pos + 4 > input.length) throw corrupt();
        len = (tag >>> 2) + 1;
        offset = input.readUInt32LE(pos);
        pos += 4;
      }
      if (offset === 0 || offset > outPos || outPos + len > length) throw corrupt();
      if (offset >= len && len >= NATIVE_COPY_BYTES) out.copyWithin(outPos, outPos - offset, outPos - offset + len);
      else for (let i = 0; i < len; i++) out[outPos + i] = out[outPos - offset + i]!;
      outPos += len;
    }
    if (outPos >= yieldAt) {
      yield outPos;
      yieldAt = outPos + sliceBytes;
    }
  }
  if (outPos !== length) throw corrupt();
  return out;
}

/** Decodes a snappy block of at most `maxLength` output bytes at once. Throws TooLargeError or Error. */
export function snappyDecode(block: Uint8Array, maxLength: number): Buffer {
  const steps = snappyDecodeSteps(block, maxLength, Number.POSITIVE_INFINITY);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
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

/** Output chunk size of the streaming inflate: few callbacks, little held beyond the output. */
const INFLATE_CHUNK_BYTES = 64 << 10;

/**
 * `inflateBody` off the event loop: zlib works on the thread pool and each output chunk is handed
 * to `admit` before it is kept; an error `admit` throws ends the inflate with that error.
 * Rejects with TooLargeError, Error (corrupt input) or what `admit` threw.
 */
export async function inflateBodyAsync(
  body: Buffer,
  encoding: 'gzip' | 'deflate',
  maxLength: number,
  admit: (bytes: number) => void = () => {},
): Promise<Buffer> {
  const options = { chunkSize: INFLATE_CHUNK_BYTES };
  if (encoding === 'gzip') return (await inflateStream(createGunzip(options), body, encoding, maxLength, admit, false))!;
  // Some clients send a bare deflate stream without the zlib header.
  return (
    (await inflateStream(createInflate(options), body, encoding, maxLength, admit, true)) ??
    (await inflateStream(createInflateRaw(options), body, encoding, maxLength, admit, false))!
  );
}

/** One streaming inflate; undefined when `headerless` allows a retry and the zlib header was wrong. */
function inflateStream(
  inflate: Gunzip | Inflate | InflateRaw,
  body: Buffer,
  encoding: string,
  maxLength: number,
  admit: (bytes: number) => void,
  headerless: boolean,
): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: Buffer | undefined, err?: Error) => {
      if (settled) return;
      settled = true;
      if (err || result === undefined) {
        chunks.length = 0;
        inflate.destroy();
      }
      if (err) reject(err);
      else resolve(result);
    };
    inflate.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > maxLength) return settle(undefined, new TooLargeError(maxLength, 'decompressed body'));
      try {
        admit(chunk.length);
      } catch (err) {
        return settle(undefined, err as Error);
      }
      chunks.push(chunk);
    });
    inflate.on('error', (err: NodeJS.ErrnoException) => {
      if (headerless && size === 0 && err.code === 'Z_DATA_ERROR') settle(undefined);
      else settle(undefined, new Error(`invalid ${encoding} body: ${err.message}`));
    });
    inflate.on('end', () => settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    inflate.end(body);
  });
}
