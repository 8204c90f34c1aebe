/**
 * Decodes the body of `POST /loki/api/v1/push`: JSON (`application/json`) or snappy-compressed
 * protobuf (`application/x-protobuf`, or no content type at all, as the reference assumes),
 * either optionally under a gzip or deflate `Content-Encoding`.
 *
 * Where the reference silently tries anything that is not JSON as protobuf, an explicit other
 * media type is answered 415 here: a client sending `text/plain` to the push path is a
 * configuration mistake worth naming. Invalid UTF-8 is a 400 rather than a silent U+FFFD.
 */
import { isUtf8 } from 'node:buffer';
import type { Labels, MetadataPair } from '../../core/entry.js';
import { inflateBody, snappyDecode, TooLargeError } from '../../lib/loki/compression.js';
import { LabelTextError, parseLabelText } from '../../lib/loki/label_text.js';
import { decodePushRequest, WireError, type WireEntry } from '../../lib/loki/wire.js';

/** Why a push was refused; doubles as the `reason` label of the rejection counter. */
export type RejectReason =
  | 'unsupported_content_type'
  | 'unsupported_encoding'
  | 'body_too_large'
  | 'bad_compression'
  | 'bad_protobuf'
  | 'bad_json'
  | 'invalid_utf8'
  | 'invalid_labels'
  | 'queue_full'
  | 'forward_failed'
  | 'shutting_down'
  | 'read_failed';

/** A push refused as a whole: the HTTP status, the metric reason and the text answered. */
export class PushError extends Error {
  constructor(
    readonly status: number,
    readonly reason: RejectReason,
    message: string,
  ) {
    super(message);
    this.name = 'PushError';
  }
}

/** One decoded stream: its labels, or why they could not be read, and its entries. */
export interface PushedStream {
  readonly labels: Labels | undefined;
  readonly labelError?: string;
  readonly entries: readonly WireEntry[];
}

export interface DecodedPush {
  readonly streams: readonly PushedStream[];
  /** Size of the decompressed body, the measure the pending-bytes bound counts. */
  readonly bytes: number;
}

type BodyFormat = 'json' | 'protobuf';

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

/** Undoes the `Content-Encoding`, staying within `maxBytes`. Throws PushError. */
export function decodeContentEncoding(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Buffer {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return body;
  if (encoding !== 'gzip' && encoding !== 'x-gzip' && encoding !== 'deflate') {
    throw new PushError(415, 'unsupported_encoding', `Content-Encoding ${JSON.stringify(contentEncoding)} not supported`);
  }
  try {
    return inflateBody(body, encoding === 'deflate' ? 'deflate' : 'gzip', maxBytes);
  } catch (err) {
    if (err instanceof TooLargeError) throw new PushError(413, 'body_too_large', err.message);
    throw new PushError(400, 'bad_compression', (err as Error).message);
  }
}

/** Decodes a whole push body. Throws PushError for a body that cannot be read at all. */
export function decodePushBody(
  raw: Buffer,
  contentType: string | undefined,
  contentEncoding: string | undefined,
  maxBytes: number,
): DecodedPush {
  const format = bodyFormat(contentType);
  const body = decodeContentEncoding(raw, contentEncoding, maxBytes);
  return format === 'json' ? decodeJsonPush(body) : decodeProtobufPush(body, maxBytes);
}

function decodeProtobufPush(body: Buffer, maxBytes: number): DecodedPush {
  let bytes: Buffer;
  try {
    bytes = snappyDecode(body, maxBytes);
  } catch (err) {
    if (err instanceof TooLargeError) throw new PushError(413, 'body_too_large', err.message);
    throw new PushError(400, 'bad_compression', (err as Error).message);
  }
  let wire;
  try {
    wire = decodePushRequest(bytes);
  } catch (err) {
    if (!(err instanceof WireError)) throw err;
    throw new PushError(400, err.invalidUtf8 ? 'invalid_utf8' : 'bad_protobuf', `invalid protobuf push request: ${err.message}`);
  }
  const streams = wire.map((s): PushedStream => {
    try {
      return { labels: parseLabelText(s.labels), entries: s.entries };
    } catch (err) {
      if (!(err instanceof LabelTextError)) throw err;
      return { labels: undefined, labelError: err.message, entries: s.entries };
    }
  });
  return { streams, bytes: bytes.length };
}

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NANOSECONDS = /^-?[0-9]{1,19}$/;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * The JSON push: `{"streams":[{"stream":{labels},"values":[["<ns>","line",{metadata}?],…]}]}`.
 * Structural problems fail the whole push (nothing is forwarded), as the reference's decoder does.
 */
export function decodeJsonPush(body: Buffer): DecodedPush {
  if (!isUtf8(body)) throw new PushError(400, 'invalid_utf8', 'invalid JSON push request: body is not valid UTF-8');
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new PushError(400, 'bad_json', `invalid JSON push request: ${(err as Error).message}`);
  }
  const bad = (where: string, what: string): never => {
    throw new PushError(400, 'bad_json', `invalid JSON push request: ${where}: ${what}`);
  };
  if (!isObject(doc)) return bad('body', 'expected an object');
  const rawStreams = doc.streams;
  if (rawStreams === undefined || rawStreams === null) return { streams: [], bytes: body.length };
  if (!Array.isArray(rawStreams)) return bad('streams', 'expected an array');
  const streams: PushedStream[] = [];
  for (let s = 0; s < rawStreams.length; s++) {
    const raw = rawStreams[s] as unknown;
    const at = `streams[${s}]`;
    if (!isObject(raw)) return bad(at, 'expected an object');
    const labels: Labels = {};
    let labelError: string | undefined;
    const rawLabels = raw.stream ?? {};
    if (!isObject(rawLabels)) return bad(`${at}.stream`, 'expected an object of label values');
    for (const [name, value] of Object.entries(rawLabels)) {
      if (typeof value !== 'string') return bad(`${at}.stream.${name}`, 'label values must be strings');
      if (!LABEL_NAME.test(name)) labelError ??= `invalid label name ${JSON.stringify(name)}`;
      labels[name] = value;
    }
    const rawValues = raw.values ?? [];
    if (!Array.isArray(rawValues)) return bad(`${at}.values`, 'expected an array');
    const entries: WireEntry[] = new Array(rawValues.length);
    for (let v = 0; v < rawValues.length; v++) {
      const value = rawValues[v] as unknown;
      const vAt = `${at}.values[${v}]`;
      if (!Array.isArray(value) || value.length < 2 || value.length > 3)
        return bad(vAt, 'expected ["<unix epoch in nanoseconds>", "<log line>"] with optional structured metadata');
      const [ts, line, meta] = value as unknown[];
      if (typeof ts !== 'string' || !NANOSECONDS.test(ts))
        return bad(`${vAt}[0]`, `timestamp must be a string of nanoseconds since the epoch, got ${JSON.stringify(ts)}`);
      const timestampNs = BigInt(ts);
      if (timestampNs < INT64_MIN || timestampNs > INT64_MAX) return bad(`${vAt}[0]`, `timestamp ${ts} is out of range`);
      if (typeof line !== 'string') return bad(`${vAt}[1]`, 'the log line must be a string');
      const structuredMetadata: MetadataPair[] = [];
      if (meta !== undefined && meta !== null) {
        if (!isObject(meta)) return bad(`${vAt}[2]`, 'structured metadata must be an object of strings');
        for (const [name, metaValue] of Object.entries(meta)) {
          if (typeof metaValue !== 'string') return bad(`${vAt}[2].${name}`, 'structured metadata values must be strings');
          structuredMetadata.push({ name, value: metaValue });
        }
      }
      entries[v] = { timestampNs, line, structuredMetadata };
    }
    streams.push(labelError === undefined ? { labels, entries } : { labels: undefined, labelError, entries });
  }
  return { streams, bytes: body.length };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
