/**
 * `POST /ingest`, the legacy ingest API the profiler SDKs use. The profile is never parsed: the
 * body (never inflated), the raw query and every `Content-Type` value travel on untouched, and
 * only the `name` parameter is read, leniently, for labels.
 *
 * Reference behaviour kept: a `name` that does not parse, or no `name` at all, only empties the
 * label set (a warning, never a 4xx); every receiver is called concurrently and all are awaited;
 * any failure fails the request, answered with the first downstream status found in the errors
 * (its reason phrase as body) or with 500 `Failed to process request`. A profiles source that is
 * not accepting (`SourceNotSubscribedError`) gets 503, its reason phrase as body.
 *
 * Added here (the reference reads any body whole): a body over `max_body_size` is answered 413
 * and one that does not fit within `max_pending_size` 429 with `Retry-After`, before anything is
 * forwarded.
 *
 * This is the receiver's busiest path, so it works on the Node request and response directly
 * (the Koa route and the server's direct lane both call it) and allocates little per request.
 */
import { copyLabel, sortLabels, type ProfileLabels } from '../../lib/pyroscope/labels.js';
import { findError, joinErrors, WrappedError } from '../../lib/go/error-chain.js';
import { firstQueryValue } from '../../lib/go/url-query.js';
import { RemoteStatusError } from '../../lib/pyroscope/remote-status-error.js';
import type { IngestProfile, ProfilesReceiver } from '../../core/profiles.js';
import { SourceNotSubscribedError } from '../../core/delivery.js';
import { ReceiverFailures } from '../../core/profile-delivery.js';
import type { Log } from '../../lib/log.js';
import { BodyBudgetError, BodyTooLargeError, readBody, RETRY_AFTER_SECONDS, type BodyLimits } from '../http/body.js';
import { httpError, statusText, writeGoError } from '../http/errors.js';
import { headerValues } from '../http/headers.js';
import type { HttpRequest, HttpResponse } from '../http/server.js';
import { ensureServiceName } from './labels.js';
import { parseLabelSet } from '../../lib/pyroscope/labelset.js';
import { requestAborted } from './request-signal.js';

export const INGEST_PATH = '/ingest';

interface ParsedQuery {
  readonly name: string;
  readonly labels: ProfileLabels;
  readonly error?: string;
}

/**
 * Profilers send the same query with every profile, so what each raw query yields is kept
 * (bounded; the whole cache is dropped when full, which only costs re-parsing).
 */
const parsedQueries = new Map<string, ParsedQuery>();
const PARSED_QUERIES_LIMIT = 1024;

/** The last query seen: a profiler sends the same one every time, and comparing is cheaper than hashing. */
let lastQuery: { readonly rawQuery: string; readonly parsed: ParsedQuery } | undefined;

function parseQueryName(rawQuery: string): ParsedQuery {
  if (lastQuery?.rawQuery === rawQuery) return lastQuery.parsed;
  const parsed = parsedQueries.get(rawQuery) ?? parseNewQuery(rawQuery);
  lastQuery = { rawQuery, parsed };
  return parsed;
}

function parseNewQuery(rawQuery: string): ParsedQuery {
  const name = firstQueryValue(rawQuery, 'name');
  let pairs: Array<{ name: string; value: string }> = [];
  let error: string | undefined;
  if (name !== '') {
    try {
      pairs = [...parseLabelSet(name)].map(([n, value]) => ({ name: n, value }));
    } catch (err) {
      error = (err as Error).message;
    }
  }
  const parsed: ParsedQuery = { name, labels: ensureServiceName(sortLabels(pairs)), ...(error !== undefined ? { error } : {}) };
  if (parsedQueries.size >= PARSED_QUERIES_LIMIT) parsedQueries.clear();
  parsedQueries.set(rawQuery, parsed);
  return parsed;
}

/** The labels the `name` query parameter yields: parse failures give none (and a warning). */
function labelsFromName(rawQuery: string, log: Log): ProfileLabels {
  const parsed = parseQueryName(rawQuery);
  if (parsed.error !== undefined) log('warn', 'Failed to parse labels from name parameter', { name: parsed.name, err: parsed.error });
  return parsed.labels;
}

/** Serves one ingest request to the end; never rejects (failures become the reference's answers). */
export async function serveIngest(
  req: HttpRequest,
  res: HttpResponse,
  receivers: readonly ProfilesReceiver[],
  log: Log,
  limits?: BodyLimits,
): Promise<void> {
  try {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    const labels = labelsFromName(rawQuery, log);

    let body: Buffer;
    try {
      body = await readBody(req, res, limits);
    } catch (err) {
      log('warn', 'Failed to read request body', { err: (err as Error).message });
      // The rest of the body is never read, so the connection cannot be reused.
      if (err instanceof BodyTooLargeError || err instanceof BodyBudgetError) answerRefused(req, res, err);
      else answerEmpty(req, res, 500, true);
      return;
    }

    const contentType = headerValues(req, 'content-type');
    const signal = requestAborted(req, res);
    // The route matched the decoded path `/ingest` exactly, whatever escapes the request used.
    const path = INGEST_PATH;
    const failure = await appendToAll(
      receivers,
      () => ({ body, contentType: contentType.slice(), path, rawQuery, labels: labels.map(copyLabel) }),
      signal,
    );
    if (failure) {
      log('warn', 'Failed to ingest profiles', { err: failure.message });
      // A profiles source that was not accepting took nothing: the client may send it again.
      if (findError(failure, (e): e is SourceNotSubscribedError => e instanceof SourceNotSubscribedError))
        throw httpError(503, statusText(503));
      const remote = findError(failure, (e): e is RemoteStatusError => e instanceof RemoteStatusError);
      if (remote) throw httpError(remote.statusCode, statusText(remote.statusCode));
      throw httpError(500, 'Failed to process request');
    }
    answerEmpty(req, res, 200, false);
  } catch (err) {
    writeGoError(res, err, (e) => log('error', 'request failed', { err: (e as Error).message }));
  }
}

/**
 * Calls every receiver at once, each with its own profile (`profileFor()`: own label and
 * content-type lists; the body is shared and never written), and resolves when all have settled:
 * to undefined, or to their failures joined in the order they happened, as the reference joins them.
 */
function appendToAll(
  receivers: readonly ProfilesReceiver[],
  profileFor: () => IngestProfile,
  signal: AbortSignal,
): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const fanOut = new IngestFanOut(receivers.length, resolve);
    receivers.forEach((receiver, index) => {
      try {
        receiver.appendIngest(profileFor(), signal).then(
          () => fanOut.settled(),
          (err: unknown) => fanOut.failed(index, err),
        );
      } catch (err) {
        fanOut.failed(index, err);
      }
    });
  });
}

/**
 * The receivers still to answer for one profile. A class rather than closures: this runs per
 * request, and named closures made per call cost more than method calls.
 */
class IngestFanOut {
  private readonly errors: unknown[] = [];

  constructor(
    private waiting: number,
    private readonly resolve: (failure: Error | undefined) => void,
  ) {
    if (waiting === 0) resolve(undefined);
  }

  settled(): void {
    if (--this.waiting === 0) this.resolve(joinErrors(this.errors));
  }

  failed(index: number, err: unknown): void {
    // A profiles source reports its forward_to list's failures by their own indexes.
    if (err instanceof ReceiverFailures)
      for (const f of err.failures) this.errors.push(new WrappedError(`failed to ingest profile to appendable ${f.index}`, f.error));
    else this.errors.push(new WrappedError(`failed to ingest profile to appendable ${index}`, err));
    this.settled();
  }
}

const EMPTY_OK = { 'Content-Length': '0' };
const EMPTY_CLOSE = { 'Content-Length': '0', Connection: 'close' };

/**
 * A body over `max_body_size` (413) or one that does not fit within `max_pending_size` (429, with
 * `Retry-After`), in the plain-text form of every other error answer.
 */
function answerRefused(req: HttpRequest, res: HttpResponse, err: BodyTooLargeError | BodyBudgetError): void {
  const text = Buffer.from(`${err.message}\n`);
  const headers: Record<string, string> = {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': String(text.length),
  };
  if (err instanceof BodyBudgetError) headers['Retry-After'] = String(RETRY_AFTER_SECONDS);
  if (!('stream' in req)) headers.Connection = 'close';
  res.writeHead(err.status, headers);
  res.end(text);
}

/** The reference's bare status answer: no body and no content type. */
function answerEmpty(req: HttpRequest, res: HttpResponse, status: number, closeConnection: boolean): void {
  res.writeHead(status, closeConnection && !('stream' in req) ? EMPTY_CLOSE : EMPTY_OK);
  res.end();
}
