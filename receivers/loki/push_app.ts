/**
 * The Koa app behind logs.source.api: `POST /loki/api/v1/push` (JSON or snappy protobuf),
 * `POST /loki/api/v1/raw` (one entry per line), the same two without the `/loki` prefix as the
 * reference also mounts them, and `GET /ready`.
 *
 * Delivery: a push is answered 204 only once every receiver has taken its entries over. What the
 * source holds meanwhile is bounded by `PendingBytes`; a push that does not fit is answered 429
 * with `Retry-After` and none of its entries is forwarded. Reference behaviour kept: streams whose
 * labels do not parse are skipped while the others are forwarded, and the answer is then 400 with
 * the last label error; labels starting with `__` are dropped after the configured `labels` are
 * added; the tenant from `X-Scope-OrgID` is kept as the `__tenant_id__` label.
 */
import { isUtf8 } from 'node:buffer';
import Koa, { type Context } from 'koa';
import { Router } from '@koa/router';
import type { Entry, Labels, MetadataPair } from '../../core/entry.js';
import { TENANT_LABEL } from '../../core/entry.js';
import { goErrorResponses, httpError } from '../http/errors.js';
import type { SourceApiMetrics } from './metrics.js';
import type { PendingBytes } from './pending.js';
import { bodyFormat, decodeContentEncoding, decodePushBody, PushError, type DecodedPush } from './push_body.js';
import { readBodyCapped } from './read_body.js';
import type { WireEntry } from '../../lib/loki/wire.js';

/** Seconds a client is asked to wait after a 429. */
export const RETRY_AFTER_SECONDS = 1;

/** What the app reads from its component on every request, so updates apply at once. */
export interface PushAppSettings {
  readonly labels: Labels;
  readonly useIncomingTimestamp: boolean;
  readonly maxBodyBytes: number;
}

export interface PushAppOptions {
  readonly componentId: string;
  readonly settings: () => PushAppSettings;
  readonly pending: PendingBytes;
  /** Hands entries to every receiver; resolves once all have taken them over. */
  readonly forward: (entries: Entry[]) => Promise<void>;
  /** Receive time in nanoseconds, used unless `use_incoming_timestamp` is set. */
  readonly nowNs: () => bigint;
  /** True once the component has begun stopping: new pushes are refused with 503. */
  readonly stopping: () => boolean;
  readonly metrics: SourceApiMetrics;
  readonly log: (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

const ROUTES = ['/loki/api/v1/push', '/api/v1/push', '/loki/api/v1/raw', '/api/v1/raw', '/ready'];

export function createPushApp(options: PushAppOptions): Koa {
  const { metrics, componentId } = options;
  const app = new Koa();
  app.silent = true;

  const reject = (ctx: Context, err: PushError): never => {
    metrics.rejected.inc({ component_id: componentId, reason: err.reason });
    if (err.status === 429) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
    // Leave the rest of a refused upload unread: the connection closes instead of draining it.
    if ((err.status === 413 || err.status === 415 || err.status === 429 || err.status === 503) && ctx.req.httpVersionMajor < 2)
      ctx.set('Connection', 'close');
    throw httpError(err.status, err.message);
  };

  const router = new Router({ strict: true, sensitive: true });
  router.get('/ready', (ctx) => {
    ctx.status = options.stopping() ? 503 : 200;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = options.stopping() ? 'not ready' : 'ready';
  });
  for (const path of ['/loki/api/v1/push', '/api/v1/push']) {
    router.post(path, (ctx) => handle(ctx, 'push').catch((err) => (err instanceof PushError ? reject(ctx, err) : Promise.reject(err))));
  }
  for (const path of ['/loki/api/v1/raw', '/api/v1/raw']) {
    router.post(path, (ctx) => handle(ctx, 'raw').catch((err) => (err instanceof PushError ? reject(ctx, err) : Promise.reject(err))));
  }

  app.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      const route = ROUTES.includes(ctx.path) ? ctx.path : 'other';
      metrics.requests.inc({ component_id: componentId, route, status_code: String(ctx.status) });
    }
  });
  app.use(goErrorResponses((err) => options.log('error', 'request failed', { error: (err as Error).message })));
  app.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body == null) ctx.throw(404);
  });
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => httpError(405, ''),
      notImplemented: () => httpError(405, ''),
    }),
  );
  return app;

  async function handle(ctx: Context, kind: 'push' | 'raw'): Promise<void> {
    if (options.stopping()) throw new PushError(503, 'shutting_down', 'the server is shutting down');
    const settings = options.settings();
    const tenant = ctx.get('X-Scope-OrgID').trim();
    if (kind === 'push') bodyFormat(ctx.get('Content-Type') || undefined);
    const pending = options.pending;
    if (!pending.hasRoom()) throw queueFull();

    let held = 0;
    try {
      const raw = await readBodyCapped(ctx.req, settings.maxBodyBytes, (bytes) => {
        if (!pending.tryAdmit(bytes, held)) return queueFull();
        held += bytes;
        return undefined;
      });
      metrics.pendingBytes.set({ component_id: componentId }, pending.bytes);
      // Decompression may grow the body only as far as the bound allows (or to the body limit
      // when this request is alone), so a small hostile body cannot inflate past it.
      const room = pending.roomFor(held, settings.maxBodyBytes);
      let decoded: DecodedPush;
      try {
        decoded =
          kind === 'push'
            ? decodePushBody(raw, ctx.get('Content-Type') || undefined, ctx.get('Content-Encoding') || undefined, room)
            : decodeRaw(decodeContentEncoding(raw, ctx.get('Content-Encoding') || undefined, room), settings.labels);
      } catch (err) {
        if (err instanceof PushError && err.reason === 'body_too_large' && room < settings.maxBodyBytes) throw queueFull();
        throw err;
      }
      if (decoded.bytes > held) {
        if (!pending.tryAdmit(decoded.bytes - held, held)) throw queueFull();
        held = decoded.bytes;
      }
      metrics.pendingBytes.set({ component_id: componentId }, pending.bytes);

      const { entries, labelError } = toEntries(decoded, kind === 'raw' ? undefined : settings, tenant);
      if (entries.length > 0) {
        try {
          await options.forward(entries);
        } catch (err) {
          options.log('error', 'forwarding pushed entries failed', { error: (err as Error).message });
          throw new PushError(500, 'forward_failed', `forwarding entries failed: ${(err as Error).message}`);
        }
        metrics.entries.inc({ component_id: componentId }, entries.length);
      }
      if (labelError !== undefined) throw new PushError(400, 'invalid_labels', labelError);
      ctx.status = 204;
    } finally {
      pending.release(held);
      metrics.pendingBytes.set({ component_id: componentId }, pending.bytes);
    }
  }

  function toEntries(
    decoded: DecodedPush,
    settings: PushAppSettings | undefined,
    tenant: string,
  ): { entries: Entry[]; labelError?: string } {
    const entries: Entry[] = [];
    let labelError: string | undefined;
    const useIncoming = settings?.useIncomingTimestamp ?? false;
    for (const stream of decoded.streams) {
      if (stream.labels === undefined) {
        labelError = stream.labelError;
        continue;
      }
      const labels = settings ? streamLabels(stream.labels, settings.labels) : { ...stream.labels };
      if (tenant !== '') labels[TENANT_LABEL] = tenant;
      for (const entry of stream.entries) entries.push(toEntry(entry, labels, useIncoming));
    }
    return labelError === undefined ? { entries } : { entries, labelError };
  }

  function toEntry(entry: WireEntry, labels: Labels, useIncoming: boolean): Entry {
    return {
      labels: { ...labels },
      line: entry.line,
      timestamp: useIncoming ? entry.timestampNs : options.nowNs(),
      // Decoding built these pairs for this entry alone, so the entry may own them.
      structuredMetadata: entry.structuredMetadata as MetadataPair[],
      extracted: {},
    };
  }

  function queueFull(): PushError {
    return new PushError(429, 'queue_full', `too many entries waiting to be forwarded, retry after ${RETRY_AFTER_SECONDS}s`);
  }
}

/** The stream's labels with the configured ones added (they win), minus reserved `__` labels. */
function streamLabels(stream: Labels, added: Labels): Labels {
  const merged: Labels = { ...stream, ...added };
  const out: Labels = {};
  for (const name of Object.keys(merged)) if (!name.startsWith('__')) out[name] = merged[name]!;
  return out;
}

/** The raw endpoint's body: one entry per non-empty line, labelled with the configured labels. */
function decodeRaw(body: Buffer, labels: Labels): DecodedPush {
  if (!isUtf8(body)) throw new PushError(400, 'invalid_utf8', 'request body is not valid UTF-8');
  const text = body.toString('utf8');
  const entries: WireEntry[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let stop = end;
    while (stop > start && (text[stop - 1] === '\r' || text[stop - 1] === '\n')) stop--;
    if (stop > start) entries.push({ timestampNs: 0n, line: text.slice(start, stop), structuredMetadata: [] });
    start = end + 1;
  }
  return { streams: [{ labels, entries }], bytes: body.length };
}
