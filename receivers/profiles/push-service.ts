/**
 * Serves `push.v1.PusherService/Push` over Connect (proto and JSON), gRPC and gRPC-Web on one
 * path, as the reference's server does. Connect's unary form is a bare message and is answered
 * directly (connect-unary.ts). gRPC and gRPC-Web go through connect-es, which does their framing,
 * trailers, timeouts and error encoding; this module reads and decodes their message first and
 * hands connect-es an empty stand-in, so the message is decoded once and a body that does not
 * decode is `invalid_argument` (connect-es alone would say `internal`). Requests this module
 * cannot read (an unknown encoding, malformed framing) reach connect-es untouched and its answer
 * stands. Only gzip is undone, as the reference's server undoes only gzip.
 *
 * Added here: a body over `max_body_size` (before or after gzip is undone), one carrying more
 * objects than the Push bound (push-objects.ts) or one that does not fit within
 * `max_pending_size` is `resource_exhausted`; connect-es reads what it is left with under the same
 * size limit.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createConnectRouter, createContextKey, createContextValues, type HandlerContext } from '@connectrpc/connect';
import { compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import { createAsyncIterable, type UniversalHandler } from '@connectrpc/connect/protocol';
import { parseContentType as parseConnectContentType } from '@connectrpc/connect/protocol-connect';
import { parseContentType as parseGrpcContentType, parseTimeout as parseGrpcTimeout } from '@connectrpc/connect/protocol-grpc';
import { parseContentType as parseGrpcWebContentType } from '@connectrpc/connect/protocol-grpc-web';
import { type Clock, epochMs, systemClock } from '../../core/clock.js';
import { PushResponseSchema, PusherService, type PushRequest } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { BodyBudgetError, BodyTooLargeError, readBody, type BodyLimits } from '../http/body.js';
import { firstHeader } from '../http/headers.js';
import type { HttpRequest, HttpResponse } from '../http/server.js';
import { serveConnectUnary } from './connect-unary.js';
import { bodyRefused, decodePush, encodingOf, inflate, type PushImplementation } from './push-protocol.js';

export type { PushCall, PushImplementation } from './push-protocol.js';

/** What this module learned about a gRPC call before connect-es sees it. */
interface Prepared {
  readonly message?: PushRequest;
  readonly error?: ConnectError;
  readonly deadlineMs?: number;
}

const PREPARED = createContextKey<Prepared | undefined>(undefined, { description: 'pre-decoded push request' });

/**
 * A Node request listener for the PusherService paths. Any other procedure under the service
 * prefix is 404 with the reference's text. A call's timeout becomes its deadline on `clock`.
 */
export function createPushHandler(
  implementation: PushImplementation,
  limits: () => BodyLimits = () => ({ maxBytes: 0 }),
  clock: Clock = systemClock(),
): (req: HttpRequest, res: HttpResponse, path?: string) => Promise<void> {
  // connect-es reads the requests this module leaves to it under its own per-message limit, set
  // when its router is made: a new max_body_size makes a new router.
  let routed: { readonly maxBytes: number; readonly handlers: Map<string, UniversalHandler> } | undefined;
  const handlersFor = (maxBytes: number) => {
    if (routed?.maxBytes !== maxBytes) routed = { maxBytes, handlers: connectHandlers(implementation, maxBytes, clock) };
    return routed.handlers;
  };

  // Not an async function itself: the Connect unary path, the common one, hands back its own promise.
  // `path` is the decoded path when the router has read it; else the request's own path.
  return (req, res, path) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const current = limits();
    const handler = handlersFor(current.maxBytes).get(path ?? (q < 0 ? url : url.slice(0, q)));
    if (!handler) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      res.end('404 page not found\n');
      return Promise.resolve();
    }
    const connect = req.method === 'POST' ? connectContentType(firstHeader(req, 'content-type') ?? '') : undefined;
    if (connect && !connect.stream) return serveConnectUnary(req, res, connect.binary, implementation, current, clock);
    return serveThroughConnect(req, res, handler, current, clock);
  };
}

const CONNECT_UNARY_PROTO = { stream: false, binary: true } as const;

/** connect-es's reading of a Content-Type, with the one profilers send read without its pattern. */
function connectContentType(contentType: string): { readonly stream: boolean; readonly binary: boolean } | undefined {
  return contentType === 'application/proto' ? CONNECT_UNARY_PROTO : parseConnectContentType(contentType);
}

/** connect-es's handlers for the PusherService paths, reading at most `maxBytes` per message (0: no limit). */
function connectHandlers(implementation: PushImplementation, maxBytes: number, clock: Clock): Map<string, UniversalHandler> {
  const router = createConnectRouter({ acceptCompression: [compressionGzip], ...(maxBytes > 0 ? { readMaxBytes: maxBytes } : {}) });
  router.service(PusherService, {
    async push(request, context: HandlerContext) {
      const prepared = context.values.get(PREPARED);
      if (prepared?.error) throw prepared.error;
      const timeoutMs = context.timeoutMs();
      const deadlineMs = prepared?.deadlineMs ?? (timeoutMs === undefined ? undefined : epochMs(clock) + timeoutMs);
      await implementation(prepared?.message ?? request, {
        // connect-es also aborts this signal at the timeout, on its own real timer: the deadline
        // the receivers work under is the one kept on the component's clock.
        signal: context.signal,
        ...(deadlineMs !== undefined ? { deadlineMs } : {}),
        protocol: context.protocolName,
      });
      return create(PushResponseSchema);
    },
  });
  return new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));
}

/** gRPC, gRPC-Web and anything else on the path: connect-es's handler, after prepareGrpc. */
async function serveThroughConnect(
  req: HttpRequest,
  res: HttpResponse,
  handler: UniversalHandler,
  limits: BodyLimits,
  clock: Clock,
): Promise<void> {
  const values = createContextValues();
  const universal = universalRequestFromNodeRequest(req as never, res as never, undefined, values);
  const prepared = await prepareGrpc(req, res, universal.header, limits, clock);
  if (prepared) values.set(PREPARED, prepared.outcome);
  if (prepared?.closeConnection && !('stream' in req)) res.setHeader('Connection', 'close');
  const response = await handler(
    prepared ? { ...universal, header: prepared.header, body: createAsyncIterable([prepared.body]) } : universal,
  );
  await universalResponseToNodeResponse(response, res as never);
}

interface PreparedRequest {
  readonly outcome: Prepared;
  readonly header: Headers;
  readonly body: Uint8Array;
  /** The body was not read to its end, so the connection cannot carry another request. */
  readonly closeConnection?: boolean;
}

/**
 * Reads and decodes a gRPC or gRPC-Web request. The returned body is what connect-es then sees:
 * an empty message standing in for the decoded one (or for the error). Undefined leaves the
 * request to connect-es as it came; a replayed body is returned for requests whose bytes were
 * read but not understood.
 */
async function prepareGrpc(
  req: HttpRequest,
  res: HttpResponse,
  header: Headers,
  limits: BodyLimits,
  clock: Clock,
): Promise<PreparedRequest | undefined> {
  if (req.method !== 'POST') return undefined;
  const contentType = header.get('content-type') ?? '';
  const grpc = parseGrpcContentType(contentType);
  const grpcWeb = grpc ? undefined : parseGrpcWebContentType(contentType);
  if (!grpc && (!grpcWeb || grpcWeb.text)) return undefined;
  const binary = (grpc ?? grpcWeb)!.binary;
  const encoding = encodingOf(header.get('grpc-encoding'));
  if (!encoding) return undefined;
  const timeout = parseGrpcTimeout(header.get('grpc-timeout'), Number.MAX_SAFE_INTEGER);
  // A malformed timeout header is connect-es's to report.
  if (timeout.error) return undefined;

  const deadlineMs = timeout.timeoutMs === undefined ? undefined : epochMs(clock) + timeout.timeoutMs;
  const stripped = new Headers(header);
  for (const name of ['content-length', 'grpc-encoding']) stripped.delete(name);
  const standIn = (outcome: Prepared): PreparedRequest => ({
    outcome: { ...outcome, ...(deadlineMs !== undefined ? { deadlineMs } : {}) },
    header: stripped,
    body: emptyMessage(binary),
  });

  let body: Buffer;
  try {
    body = await readBody(req, res, limits);
  } catch (err) {
    const error =
      err instanceof BodyTooLargeError || err instanceof BodyBudgetError
        ? bodyRefused(err)
        : new ConnectError(`read message: ${(err as Error).message}`, Code.Unknown);
    return { ...standIn({ error }), closeConnection: true };
  }
  // Unary gRPC carries exactly one 5-byte-prefixed message; anything else is connect-es's to judge.
  if (body.length < 5 || body.readUInt32BE(1) !== body.length - 5) return { outcome: {}, header, body };
  const compressed = (body[0]! & 0x01) === 0x01;
  if (compressed && encoding !== 'gzip') return { outcome: {}, header, body };
  try {
    const payload = compressed ? await inflate(body.subarray(5), limits.maxBytes) : body.subarray(5);
    return standIn({ message: await decodePush(payload, binary) });
  } catch (err) {
    return standIn({ error: err as ConnectError });
  }
}

const EMPTY_JSON = new TextEncoder().encode('{}');

/** An empty PushRequest in one gRPC frame, in the request's codec. */
function emptyMessage(binary: boolean): Uint8Array {
  const message = binary ? new Uint8Array(0) : EMPTY_JSON;
  const framed = new Uint8Array(5 + message.length);
  new DataView(framed.buffer).setUint32(1, message.length);
  framed.set(message, 5);
  return framed;
}
