/**
 * `POST /ingest`, the legacy ingest API the profiler SDKs use. The profile is never parsed: the
 * body (never inflated, never size-limited), the raw query and every `Content-Type` value travel
 * on untouched, and only the `name` parameter is read, leniently, for labels.
 *
 * Reference behaviour kept: a `name` that does not parse, or no `name` at all, only empties the
 * label set (a warning, never a 4xx); every receiver is called concurrently and all are awaited;
 * any failure fails the request, answered with the first downstream status found in the errors
 * (its reason phrase as body) or with 500 `Failed to process request`.
 */
import type { Context } from 'koa';
import {
  findError,
  joinErrors,
  firstQueryValue,
  RemoteStatusError,
  sortLabels,
  WrappedError,
  type IngestProfile,
  type ProfileLabels,
  type ProfilesReceiver,
} from '../../core/profiles';
import { readBody } from '../http/body';
import { httpError, statusText } from '../http/errors';
import type { HttpRequest } from '../http/server';
import { ensureServiceName } from './labels';
import { parseLabelSet } from '../../core/profiles-labelset';
import { requestAborted } from './request_signal';

export type Log = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

/** Every value of a header, in order, from the raw header list (Node keeps only the first content-type). */
export function headerValues(req: HttpRequest, name: string): string[] {
  const raw = req.rawHeaders;
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === wanted) values.push(raw[i + 1]!);
  }
  return values;
}

interface ParsedName {
  readonly labels: ProfileLabels;
  readonly error?: string;
}

/** Profilers send the same `name` with every profile, so parsed names are kept (bounded). */
const parsedNames = new Map<string, ParsedName>();
const PARSED_NAMES_LIMIT = 1024;

function parseName(name: string): ParsedName {
  let parsed = parsedNames.get(name);
  if (parsed) return parsed;
  let pairs: Array<{ name: string; value: string }> = [];
  let error: string | undefined;
  if (name !== '') {
    try {
      pairs = [...parseLabelSet(name)].map(([n, value]) => ({ name: n, value }));
    } catch (err) {
      error = (err as Error).message;
    }
  }
  parsed = { labels: ensureServiceName(sortLabels(pairs)), ...(error !== undefined ? { error } : {}) };
  if (parsedNames.size >= PARSED_NAMES_LIMIT) parsedNames.clear();
  parsedNames.set(name, parsed);
  return parsed;
}

/** The labels the `name` query parameter yields: parse failures give none (and a warning). */
export function labelsFromName(rawQuery: string, log: Log): ProfileLabels {
  const name = firstQueryValue(rawQuery, 'name');
  const parsed = parseName(name);
  if (parsed.error !== undefined) log('warn', 'Failed to parse labels from name parameter', { name, err: parsed.error });
  return parsed.labels;
}

export async function handleIngest(ctx: Context, receivers: readonly ProfilesReceiver[], log: Log): Promise<void> {
  const url = ctx.req.url ?? '';
  const q = url.indexOf('?');
  const rawQuery = q < 0 ? '' : url.slice(q + 1);
  const labels = labelsFromName(rawQuery, log);

  let body: Buffer;
  try {
    body = await readBody(ctx.req);
  } catch (err) {
    log('warn', 'Failed to read request body', { err: (err as Error).message });
    // The rest of the body is never read, so the connection cannot be reused.
    answerEmpty(ctx, 500, { Connection: 'close' });
    return;
  }

  const contentType = headerValues(ctx.req, 'content-type');
  const signal = requestAborted(ctx.req, ctx.res);
  const errors: unknown[] = [];
  await Promise.all(
    receivers.map(async (receiver, i) => {
      const profile: IngestProfile = { body, contentType: [...contentType], path: ctx.path, rawQuery, labels: labels.map((l) => ({ ...l })) };
      try {
        await receiver.appendIngest(profile, signal);
      } catch (err) {
        errors.push(new WrappedError(`failed to ingest profile to appendable ${i}`, err));
      }
    }),
  );

  const failure = joinErrors(errors);
  if (failure) {
    log('warn', 'Failed to ingest profiles', { err: failure.message });
    const remote = findError(failure, (e): e is RemoteStatusError => e instanceof RemoteStatusError);
    if (remote) throw httpError(remote.statusCode, statusText(remote.statusCode));
    ctx.throw(500, 'Failed to process request', { expose: true });
  }
  answerEmpty(ctx, 200);
}

/** The reference's bare status answer: no body and no content type (Koa would add both). */
function answerEmpty(ctx: Context, status: number, headers: Record<string, string> = {}): void {
  ctx.respond = false;
  ctx.res.writeHead(status, { ...headers, 'Content-Length': '0' });
  ctx.res.end();
}
