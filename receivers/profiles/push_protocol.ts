/**
 * What every Push protocol shares: the call the implementation sees, and reading a request body
 * the way the reference's server does — undo gzip, decode binary protobuf or JSON (unknown JSON
 * fields ignored, proto field names and either base64 alphabet accepted), and call anything that
 * does not decode `invalid_argument`.
 */
import { gunzipSync } from 'node:zlib';
import { fromJsonString } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { PushRequestSchema, type PushRequest } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { type BodyBudgetError, BodyTooLargeError } from '../http/body.js';
import { decodePushBinary } from './push_decode.js';

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
 * Undoes gzip; a stream that does not inflate is the client's error. With `maxBytes` (0: no
 * limit) a message that inflates past it is `resource_exhausted`, its cause a BodyTooLargeError.
 */
export function inflate(bytes: Uint8Array, maxBytes = 0): Uint8Array {
  try {
    return maxBytes > 0 ? gunzipSync(bytes, { maxOutputLength: maxBytes }) : gunzipSync(bytes);
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

const utf8 = new TextDecoder();

/** Decodes a PushRequest; throws `invalid_argument` with the decoder's reason. */
export function decodePush(payload: Uint8Array, binary: boolean): PushRequest {
  try {
    return binary ? decodePushBinary(payload) : fromJsonString(PushRequestSchema, utf8.decode(payload), { ignoreUnknownFields: true });
  } catch (err) {
    throw new ConnectError(`unmarshal message: ${(err as Error).message}`, Code.InvalidArgument);
  }
}
