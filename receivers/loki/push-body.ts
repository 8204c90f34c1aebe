/**
 * Decodes the body of `POST /loki/api/v1/push`: JSON (`application/json`) or snappy-compressed
 * protobuf (`application/x-protobuf`, or no content type at all, as the reference assumes),
 * either optionally under a gzip or deflate `Content-Encoding`; and the body of
 * `POST /loki/api/v1/raw`, one entry per line.
 *
 * Decoding runs in slices: each decoder is a generator that yields, between slices, the bytes of
 * memory it is estimated to hold so far (`decodedBytes`, plus the snappy output while that is
 * alive), before it builds more, so the caller can refuse a push as soon as it outgrows its
 * bound and give the event loop a turn in between. Every decoder stops at the first entry past
 * `maxEntries`.
 *
 * Where the reference silently tries anything that is not JSON as protobuf, an explicit other
 * media type is answered 415 here: a client sending `text/plain` to the push path is a
 * configuration mistake worth naming. Invalid UTF-8 is a 400 rather than a silent U+FFFD.
 */
import { isUtf8 } from 'node:buffer';
import type { Labels } from '../../core/entry.js';
import { inflateBody, inflateBodyAsync, snappyDecodeSteps, TooLargeError } from '../../lib/loki/compression.js';
import { LabelTextError, parseLabelText } from '../../lib/loki/label-text.js';
import {
  decodePushRequestSteps,
  EntryLimitError,
  SliceBudget,
  WireError,
  type DecodeProgress,
  type WireEntry,
} from '../../lib/loki/wire.js';
import { decodedBytes, PushError, type DecodedPush, type PushedStream } from './decoded-push.js';
import { decodeJsonPushSteps, JsonPushError } from './json-push.js';

export type { DecodedPush, PushedStream } from './decoded-push.js';

export type BodyFormat = 'json' | 'protobuf';

/** What bounds one decode. */
export interface DecodeLimits {
  /** Largest decompressed body. */
  readonly maxBytes: number;
  /** Most entries in one push; unlimited when absent. */
  readonly maxEntries?: number;
  /** Streams, entries and metadata pairs decoded between two yields. */
  readonly sliceItems?: number;
}

const PROTOBUF_TYPES = new Set(['', 'application/x-protobuf', 'application/protobuf', 'application/octet-stream']);

/** The body format a `Content-Type` header asks for. Throws PushError 415. */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/json') return 'json';
  if (PROTOBUF_TYPES.has(media)) return 'protobuf';
  throw new PushError(
    415,
    'unsupported_content_type',
    `unsupported Content-Type ${JSON.stringify(contentType)}: send application/json or application/x-protobuf`,
  );
}

/** The compression a `Content-Encoding` names, or undefined for none. Throws PushError 415. */
function contentCompression(contentEncoding: string | undefined): 'gzip' | 'deflate' | undefined {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return undefined;
  if (encoding === 'gzip' || encoding === 'x-gzip') return 'gzip';
  if (encoding === 'deflate') return 'deflate';
  throw new PushError(415, 'unsupported_encoding', `Content-Encoding ${JSON.stringify(contentEncoding)} not supported`);
}

function compressionError(err: unknown): PushError {
  if (err instanceof PushError) return err;
  if (err instanceof TooLargeError) return new PushError(413, 'body_too_large', err.message);
  return new PushError(400, 'bad_compression', (err as Error).message);
}

/** Undoes the `Content-Encoding`, staying within `maxBytes`. Throws PushError. */
export function decodeContentEncoding(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Buffer {
  const compression = contentCompression(contentEncoding);
  if (compression === undefined) return body;
  try {
    return inflateBody(body, compression, maxBytes);
  } catch (err) {
    throw compressionError(err);
  }
}

/**
 * `decodeContentEncoding` off the event loop, each decompressed chunk handed to `admit` before it
 * is kept (a PushError it throws ends the inflate). Rejects with PushError.
 */
export async function decodeContentEncodingAsync(
  body: Buffer,
  contentEncoding: string | undefined,
  maxBytes: number,
  admit: (bytes: number) => void,
): Promise<Buffer> {
  const compression = contentCompression(contentEncoding);
  if (compression === undefined) return body;
  try {
    return await inflateBodyAsync(body, compression, maxBytes, admit);
  } catch (err) {
    throw compressionError(err);
  }
}

/** Decodes a whole push body at once, without an entry limit. Throws PushError. */
export function decodePushBody(
  raw: Buffer,
  contentType: string | undefined,
  contentEncoding: string | undefined,
  maxBytes: number,
): DecodedPush {
  const format = bodyFormat(contentType);
  const steps = pushBodySteps(decodeContentEncoding(raw, contentEncoding, maxBytes), format, {
    maxBytes,
    sliceItems: Number.POSITIVE_INFINITY,
  });
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Decodes a push body whose `Content-Encoding` is already undone, in slices: yields the bytes it
 * is estimated to hold so far before building more. Throws PushError.
 */
export function* pushBodySteps(body: Buffer, format: BodyFormat, limits: DecodeLimits): Generator<number, DecodedPush, void> {
  return format === 'json' ? yield* jsonPushSteps(body, limits) : yield* protobufPushSteps(body, limits);
}

function budgetFor(limits: DecodeLimits): SliceBudget {
  return new SliceBudget({ maxEntries: limits.maxEntries, sliceItems: limits.sliceItems });
}

function tooManyEntries(err: EntryLimitError): PushError {
  return new PushError(413, 'too_many_entries', `push has more than ${err.limit} entries, the limit of max_entries_per_push`);
}

function* protobufPushSteps(body: Buffer, limits: DecodeLimits): Generator<number, DecodedPush, void> {
  let bytes: Buffer;
  try {
    // The first step announces the decompressed length, before a byte of it is allocated.
    const inflating = snappyDecodeSteps(body, limits.maxBytes);
    for (;;) {
      const step = inflating.next();
      if (step.done) {
        bytes = step.value;
        break;
      }
      yield step.value;
    }
  } catch (err) {
    throw compressionError(err);
  }
  const budget = budgetFor(limits);
  return yield* weighed(protobufStreams(bytes, budget), budget, bytes.length, (err) => {
    if (!(err instanceof WireError)) return undefined;
    return new PushError(400, err.invalidUtf8 ? 'invalid_utf8' : 'bad_protobuf', `invalid protobuf push request: ${err.message}`);
  });
}

function* protobufStreams(bytes: Buffer, budget: SliceBudget): Generator<DecodeProgress, PushedStream[], void> {
  const wire = yield* decodePushRequestSteps(bytes, budget);
  return wire.map((s): PushedStream => {
    try {
      return { labels: parseLabelText(s.labels), entries: s.entries };
    } catch (err) {
      if (!(err instanceof LabelTextError)) throw err;
      return { labels: undefined, labelError: err.message, entries: s.entries };
    }
  });
}

function* jsonPushSteps(body: Buffer, limits: DecodeLimits): Generator<number, DecodedPush, void> {
  if (!isUtf8(body)) throw new PushError(400, 'invalid_utf8', 'invalid JSON push request: body is not valid UTF-8');
  const budget = budgetFor(limits);
  return yield* weighed(decodeJsonPushSteps(body, budget), budget, 0, (err) => {
    if (!(err instanceof JsonPushError)) return undefined;
    return new PushError(400, 'bad_json', `invalid JSON push request: ${err.message}`);
  });
}

/**
 * The raw endpoint's body: one entry per non-empty line (trailing `\r` dropped), labelled with
 * `labels`. Yields like `pushBodySteps`. Throws PushError.
 */
export function* rawBodySteps(body: Buffer, labels: Labels, limits: DecodeLimits): Generator<number, DecodedPush, void> {
  if (!isUtf8(body)) throw new PushError(400, 'invalid_utf8', 'request body is not valid UTF-8');
  const budget = budgetFor(limits);
  return yield* weighed(rawLines(body, labels, budget), budget, 0, () => undefined);
}

function* rawLines(body: Buffer, labels: Labels, budget: SliceBudget): Generator<DecodeProgress, PushedStream[], void> {
  budget.stream();
  const entries: WireEntry[] = [];
  let start = 0;
  while (start < body.length) {
    let end = body.indexOf(0x0a, start);
    if (end < 0) end = body.length;
    let stop = end;
    while (stop > start && (body[stop - 1] === 0x0d || body[stop - 1] === 0x0a)) stop--;
    if (stop > start) {
      budget.entry(stop - start);
      entries.push({ timestampNs: 0n, line: body.toString('utf8', start, stop), structuredMetadata: [] });
      if (budget.sliceFull()) yield budget.progress;
    }
    start = end + 1;
  }
  return [{ labels, entries }];
}

/**
 * Runs a decoder, yielding the bytes its progress is estimated to hold (plus `transient`, what it
 * holds only while decoding, such as a decompressed body) and returning the streams with the
 * estimate of what stays. `failure` maps the decoder's own errors to PushError (undefined:
 * rethrow as is).
 */
function* weighed(
  decoding: Generator<DecodeProgress, PushedStream[], void>,
  budget: SliceBudget,
  transient: number,
  failure: (err: unknown) => PushError | undefined,
): Generator<number, DecodedPush, void> {
  try {
    for (;;) {
      const step = decoding.next();
      if (step.done) return { streams: step.value, bytes: decodedBytes(budget.progress) };
      yield transient + decodedBytes(step.value);
    }
  } catch (err) {
    if (err instanceof EntryLimitError) throw tooManyEntries(err);
    throw failure(err) ?? err;
  }
}
