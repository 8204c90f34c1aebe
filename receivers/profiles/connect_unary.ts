/**
 * The Connect protocol's unary form for Push, served directly: its wire format is the bare
 * message (no envelope, no trailers), so answering it needs no protocol machinery beyond what
 * connect-es exports for it (content types, timeout parsing, error JSON and status codes).
 *
 * Answers as the reference's server does: a `Connect-Protocol-Version` other than `1` and a body
 * that does not decode are `invalid_argument`; only gzip is undone; success is 200 with an empty
 * body (`{}` for JSON); errors are JSON `{code, message}` with the code's HTTP status.
 *
 * Added here: a body over `max_body_size`, before or after gzip is undone, is `resource_exhausted`
 * answered with HTTP 413; one that does not fit within `max_pending_size` is `resource_exhausted`
 * (HTTP 429) with `Retry-After`.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus, errorToJsonBytes, parseTimeout } from '@connectrpc/connect/protocol-connect';
import { BodyBudgetError, BodyTooLargeError, readBody, RETRY_AFTER_SECONDS, type BodyLimits } from '../http/body.js';
import { firstHeader } from '../http/headers.js';
import type { HttpRequest, HttpResponse } from '../http/server.js';
import { bodyRefused, decodePush, encodingOf, inflate, unknownEncoding, type PushImplementation } from './push_protocol.js';
import { requestAborted } from './request_signal.js';

export async function serveConnectUnary(
  req: HttpRequest,
  res: HttpResponse,
  binary: boolean,
  implementation: PushImplementation,
  limits?: BodyLimits,
): Promise<void> {
  const arrived = Date.now();
  let status = 200;
  // Text, so the body goes out in the same write as the header (a Buffer costs a second write).
  let body = binary ? '' : '{}';
  let contentType = binary ? 'application/proto' : 'application/json';
  let closeConnection = false;
  let retryAfter = false;
  try {
    const version = firstHeader(req, 'connect-protocol-version');
    if (version !== undefined && version !== '1')
      throw new ConnectError(`Connect-Protocol-Version must be "1": got "${version}"`, Code.InvalidArgument);
    const timeout = parseTimeout(firstHeader(req, 'connect-timeout-ms') ?? null, Number.MAX_SAFE_INTEGER);
    if (timeout.error) throw timeout.error;
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
    if (encoding === 'gzip') payload = inflate(payload, limits?.maxBytes);
    const message = decodePush(payload, binary);
    await implementation(message, {
      signal: requestAborted(req, res),
      ...(timeout.timeoutMs !== undefined ? { deadlineMs: arrived + timeout.timeoutMs } : {}),
      protocol: 'connect',
    });
  } catch (err) {
    const error = ConnectError.from(err, Code.Internal);
    // A body over the size limit keeps HTTP's own status; its JSON code is what Connect clients read.
    status = error.cause instanceof BodyTooLargeError ? 413 : codeToHttpStatus(error.code);
    retryAfter = error.cause instanceof BodyBudgetError;
    body = Buffer.from(errorToJsonBytes(error, {})).toString();
    contentType = 'application/json';
  }
  const headers: Record<string, string> = { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) };
  if (retryAfter) headers['Retry-After'] = String(RETRY_AFTER_SECONDS);
  if (closeConnection && !('stream' in req)) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(body);
}
