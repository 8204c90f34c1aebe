/**
 * What every Push protocol shares: the call the implementation sees, and reading a request body
 * the way the reference's server does — undo gzip, decode binary protobuf or JSON (unknown JSON
 * fields ignored, proto field names and either base64 alphabet accepted), and call anything that
 * does not decode `invalid_argument`.
 *
 * Added here: gzip is undone off the event loop within `max_body_size`, and decoding runs in
 * slices within the object bound (push-objects.ts), so no Push holds the loop for long.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import type { PushRequest } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { runSteps } from '../../lib/slices.js';
import { type BodyBudgetError, BodyTooLargeError } from '../http/body.js';
import { decodePushBinarySteps } from './push-decode.js';
import { decodePushJsonSteps } from './push-decode-json.js';
import { ObjectLimitError } from './push-objects.js';

const gunzipAsync = promisify(gunzip);

/** Output chunk of the inflate: each one is a round trip to the thread pool, so few and large. */
const INFLATE_CHUNK_BYTES = 256 << 10;

/** What the Push implementation learns about one call besides its message. */
export interface PushCall {
  /** Aborts when the client goes away (and, for gRPC, when the call ends). */
  readonly signal: AbortSignal;
  /** The call's deadline (epoch milliseconds) from `Connect-Timeout-Ms` / `grpc-timeout`. */
  readonly deadlineMs?: number;
  /** `connect`, `grpc` or `grpc_web`. */
  readonly protocol: string;
}

/** Handles one decoded Push; a thrown ConnectError becomes the call's error. */
export type PushImplementation = (request: PushRequest, call: PushCall) => Promise<void>;

/** Request compressions the server undoes; the reference's server registers only gzip. */
export const ACCEPTED_ENCODINGS = ['gzip'] as const;

/** `identity`, `gzip`, or undefined for an encoding the server does not accept. */
export function encodingOf(value: string | null): 'identity' | 'gzip' | undefined {
  if (value === null || value === '' || value === 'identity') return 'identity';
  if (value === 'gzip') return 'gzip';
  return undefined;
}

export function unknownEncoding(name: string): ConnectError {
  return new ConnectError(`unknown compression "${name}": supported encodings are ${ACCEPTED_ENCODINGS.join(',')}`, Code.Unimplemented);
}

/**
 * Undoes gzip on the thread pool; a stream that does not inflate is the client's error. With
 * `maxBytes` (0: no limit) zlib stops as soon as the output passes it (nothing past it is kept),
 * and the message is `resource_exhausted`, its cause a BodyTooLargeError.
 */
export async function inflate(bytes: Uint8Array, maxBytes = 0): Promise<Uint8Array> {
  try {
    return await gunzipAsync(
      bytes,
      maxBytes > 0 ? { chunkSize: INFLATE_CHUNK_BYTES, maxOutputLength: maxBytes } : { chunkSize: INFLATE_CHUNK_BYTES },
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw bodyRefused(new BodyTooLargeError(maxBytes), 'decompressed ');
    throw new ConnectError(`decompress message: ${(err as Error).message}`, Code.InvalidArgument);
  }
}

/**
 * A body refused for its size or for want of room, as a Push error: `resource_exhausted`, as
 * Connect and gRPC servers answer a message over their read limit. The refusal stays its cause,
 * so the Connect answer can carry its HTTP status.
 */
export function bodyRefused(refusal: BodyTooLargeError | BodyBudgetError, what = ''): ConnectError {
  const message = refusal instanceof BodyTooLargeError ? `${what}message is larger than ${refusal.limit} bytes` : refusal.message;
  return new ConnectError(message, Code.ResourceExhausted, undefined, undefined, refusal);
}

/**
 * Decodes a PushRequest in slices, giving the event loop a turn between them. What does not
 * decode is `invalid_argument` with the decoder's reason; a message past the object bound is
 * `resource_exhausted`, its cause the ObjectLimitError (answered 413 where HTTP shows through).
 */
export async function decodePush(payload: Uint8Array, binary: boolean): Promise<PushRequest> {
  try {
    return await runSteps(binary ? decodePushBinarySteps(payload) : decodePushJsonSteps(payload));
  } catch (err) {
    if (err instanceof ObjectLimitError) throw new ConnectError(err.message, Code.ResourceExhausted, undefined, undefined, err);
    throw new ConnectError(`unmarshal message: ${(err as Error).message}`, Code.InvalidArgument);
  }
}
