/**
 * The Connect protocol's unary form for Push, served directly: its wire format is the bare
 * message (no envelope, no trailers), so answering it needs no protocol machinery beyond what
 * connect-es exports for it (content types, timeout parsing, error JSON and status codes).
 *
 * Answers as the reference's server does: a `Connect-Protocol-Version` other than `1` and a body
 * that does not decode are `invalid_argument`; only gzip is undone; success is 200 with an empty
 * body (`{}` for JSON); errors are JSON `{code, message}` with the code's HTTP status.
 *
 * Added here: a body over `max_body_size`, before or after gzip is undone, or one carrying more
 * objects than the Push bound (push-objects.ts) is `resource_exhausted` answered with HTTP 413;
 * one that does not fit within `max_pending_size` is `resource_exhausted` (HTTP 429) with
 * `Retry-After`.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { type Clock, epochMs } from '../../core/clock.js';
import { codeToHttpStatus, errorToJsonBytes, parseTimeout } from '@connectrpc/connect/protocol-connect';
import { BodyBudgetError, BodyTooLargeError, readBody, RETRY_AFTER_SECONDS, type BodyLimits } from '../http/body.js';
import { firstHeader } from '../http/headers.js';
import type { HttpRequest, HttpResponse } from '../http/server.js';
import { ObjectLimitError } from './push-objects.js';
import { bodyRefused, decodePush, encodingOf, inflate, unknownEncoding, type PushImplementation } from './push-protocol.js';
import { requestAborted } from './request-signal.js';

/** What a call that succeeded is answered: an empty PushResponse, as text so it goes out in the header's write. */
interface Success {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}
const PROTO_SUCCESS: Success = { body: '', headers: Object.freeze({ 'Content-Type': 'application/proto', 'Content-Length': '0' }) };
const JSON_SUCCESS: Success = { body: '{}', headers: Object.freeze({ 'Content-Type': 'application/json', 'Content-Length': '2' }) };

export async function serveConnectUnary(
  req: HttpRequest,
  res: HttpResponse,
  binary: boolean,
  implementation: PushImplementation,
  limits: BodyLimits | undefined,
  clock: Clock,
): Promise<void> {
  let closeConnection = false;
  try {
    const version = firstHeader(req, 'connect-protocol-version');
    if (version !== undefined && version !== '1')
      throw new ConnectError(`Connect-Protocol-Version must be "1": got "${version}"`, Code.InvalidArgument);
    const deadlineMs = deadlineOf(firstHeader(req, 'connect-timeout-ms'), clock);
    const encodingHeader = firstHeader(req, 'content-encoding') ?? null;
    const encoding = encodingOf(encodingHeader);
    if (!encoding) throw unknownEncoding(encodingHeader!);
    let payload: Uint8Array;
    try {
      payload = await readBody(req, res, limits);
    } catch (err) {
      closeConnection = true;
      if (err instanceof BodyTooLargeError || err instanceof BodyBudgetError) throw bodyRefused(err);
      throw new ConnectError(`read message: ${(err as Error).message}`, Code.Unknown);
    }
    if (encoding === 'gzip') payload = await inflate(payload, limits?.maxBytes);
    const message = await decodePush(payload, binary);
    const signal = requestAborted(req, res);
    await implementation(message, deadlineMs === undefined ? { signal, protocol: 'connect' } : { signal, deadlineMs, protocol: 'connect' });
  } catch (err) {
    answerError(req, res, err, closeConnection);
    return;
  }
  const success = binary ? PROTO_SUCCESS : JSON_SUCCESS;
  res.writeHead(200, success.headers);
  res.end(success.body);
}

/**
 * The call's deadline (epoch milliseconds on `clock`) from its `Connect-Timeout-Ms`, counted from
 * now (the request's arrival: no byte of its body has been awaited yet); throws for a malformed value.
 */
function deadlineOf(timeoutHeader: string | undefined, clock: Clock): number | undefined {
  if (timeoutHeader === undefined) return undefined;
  const timeout = parseTimeout(timeoutHeader, Number.MAX_SAFE_INTEGER);
  if (timeout.error) throw timeout.error;
  return timeout.timeoutMs === undefined ? undefined : epochMs(clock) + timeout.timeoutMs;
}

/** Connect's JSON error answer, with the code's HTTP status. */
function answerError(req: HttpRequest, res: HttpResponse, err: unknown, closeConnection: boolean): void {
  const error = ConnectError.from(err, Code.Internal);
  // A body over the size or object bound keeps HTTP's own status; its JSON code is what Connect clients read.
  const status = error.cause instanceof BodyTooLargeError || error.cause instanceof ObjectLimitError ? 413 : codeToHttpStatus(error.code);
  // Text, so the body goes out in the same write as the header (a Buffer costs a second write).
  const body = Buffer.from(errorToJsonBytes(error, {})).toString();
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
  if (error.cause instanceof BodyBudgetError) headers['Retry-After'] = String(RETRY_AFTER_SECONDS);
  if (closeConnection && !('stream' in req)) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(body);
}
