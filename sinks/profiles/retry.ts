/**
 * Which failed requests are worth another attempt, by the reference's rules:
 * - a passed deadline always is (the backoff then stops anyway when it was the caller's);
 * - a downstream status: 408 and 5xx yes, 429 only with `retry_on_http_429`, other codes no;
 * - a Push error by its code: deadline_exceeded, unknown, internal, unavailable, data_loss and
 *   aborted yes, resource_exhausted only with the flag, the rest no;
 * - anything else counts as `unknown`, so it is retried.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToString } from '@connectrpc/connect/protocol-connect';
import { CanceledError, DeadlineExceededError } from '../../lib/go/context-errors.js';
import { findError } from '../../lib/go/error-chain.js';
import { RemoteStatusError } from '../../lib/pyroscope/remote-status-error.js';

const RETRIED_CODES = new Set<Code>([Code.DeadlineExceeded, Code.Unknown, Code.Internal, Code.Unavailable, Code.DataLoss, Code.Aborted]);

export function shouldRetry(err: unknown, retryOnHttp429: boolean): boolean {
  if (findError(err, (e): e is DeadlineExceededError => e instanceof DeadlineExceededError)) return true;
  const remote = findError(err, (e): e is RemoteStatusError => e instanceof RemoteStatusError);
  if (remote) {
    if (remote.statusCode === 429) return retryOnHttp429;
    return remote.statusCode === 408 || remote.statusCode >= 500;
  }
  const code = codeOf(err);
  if (code === Code.ResourceExhausted) return retryOnHttp429;
  return RETRIED_CODES.has(code);
}

/** The Connect code of an error; errors that are not Connect errors count as unknown. */
export function codeOf(err: unknown): Code {
  const connect = findError(err, (e): e is ConnectError => e instanceof ConnectError);
  if (connect) return connect.code;
  if (findError(err, (e): e is CanceledError => e instanceof CanceledError)) return Code.Canceled;
  if (findError(err, (e): e is DeadlineExceededError => e instanceof DeadlineExceededError)) return Code.DeadlineExceeded;
  return Code.Unknown;
}

/** The Connect client's own timeout (it fires at the same moment as the attempt's deadline). */
function isClientTimeout(err: unknown): boolean {
  return err instanceof ConnectError && err.code === Code.DeadlineExceeded && err.rawMessage === 'the operation timed out';
}

/**
 * A Push failure as the reference prints it, `<code>: <message>` (`unavailable: …`). A timeout
 * and a caller that gave up read as `deadline_exceeded: context deadline exceeded` and
 * `canceled: context canceled` whichever layer noticed first.
 */
export function pushFailure(err: unknown, callerSignal: AbortSignal, attemptTimedOut: boolean): Error {
  let reason: Error;
  if (callerSignal.aborted && callerSignal.reason instanceof DeadlineExceededError) reason = callerSignal.reason;
  else if (callerSignal.aborted) reason = new CanceledError();
  else if (attemptTimedOut || isClientTimeout(err)) reason = new DeadlineExceededError();
  else if (err instanceof ConnectError) {
    const text = err.rawMessage ? `${codeToString(err.code)}: ${err.rawMessage}` : codeToString(err.code);
    return Object.assign(new Error(text), { cause: err });
  } else reason = err instanceof Error ? err : new Error(String(err));
  const code =
    reason instanceof DeadlineExceededError ? Code.DeadlineExceeded : reason instanceof CanceledError ? Code.Canceled : Code.Unknown;
  const text = `${codeToString(code)}: ${reason.message}`;
  return Object.assign(new Error(text), { cause: new ConnectError(reason.message, code, undefined, undefined, reason) });
}
