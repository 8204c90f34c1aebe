/**
 * The Koa routes of a Loki push receiver: `POST /loki/api/v1/push` (JSON or snappy protobuf),
 * `POST /loki/api/v1/raw` (one entry per line), the same two without the `/loki` prefix as the
 * reference also mounts them, and `GET /ready`. The same routes serve a user's own Koa app
 * (`lokiPushReceiver`) and logs.source.api's own server.
 *
 * Delivery: a push is answered 204 only once its entries are taken over (the subscriber's ack).
 * What the source holds meanwhile (bodies, decompressed bodies, decoded entries at an estimated
 * size) is bounded by `PendingBytes` for every request, the first included: a push that does not fit
 * beside the others is answered 429 with `Retry-After`, one that would not fit even alone 413,
 * and either way none of its entries is forwarded. Bodies are decompressed off the event loop and
 * decoded in slices with a turn of the event loop between them, so one huge push does not stall
 * the process's other servers; a push is refused as soon as it outgrows its bound or
 * `max_entries_per_push`, before the rest of it is built.
 *
 * Reference behaviour kept: streams whose labels do not parse are skipped while the others are
 * forwarded, and the answer is then 400 with the last label error; labels starting with `__` are
 * dropped after the configured `labels` are added; the tenant from `X-Scope-OrgID` is kept as the
 * `__tenant_id__` label. Loki's ingest limits, when configured, skip streams and entries the same
 * way (see `ingest-limits.ts`).
 */
import Koa, { type Context, type Middleware } from 'koa';
import { Router } from '@koa/router';
import { RETRY_AFTER_SECONDS } from '../http/body.js';
import { goErrorResponses, httpError } from '../http/errors.js';
import { PushError } from './decoded-push.js';
import { decodeStep, queueFull, refusal, type DecodeStep, type DecodeStepOptions, type PushHead } from './decode-step.js';
import type { SourceApiMetrics } from './metrics.js';
import { PendingClaim, type PendingBytes } from './pending.js';
import { bodyFormat } from './push-body.js';
import { readBodyCapped } from './read-body.js';

/**
 * The routes' options: the decode step's (settings, forward, backlog, clock, log; see
 * decode-step.ts) without `showPending`, which the routes supply, plus the bound and the request
 * side.
 */
export interface PushAppOptions extends Omit<DecodeStepOptions, 'showPending'> {
  readonly componentId: string;
  /** What every request's claim admits against (`max_pending_size`). */
  readonly pending: PendingBytes;
  /** True while pushes are refused with 503 (not started yet, or stopping). */
  readonly stopping: () => boolean;
  /** Runs one push's whole handling, so its owner can wait for the pushes in flight. */
  readonly inFlight: <T>(push: () => Promise<T>) => Promise<T>;
  readonly metrics: SourceApiMetrics;
  /**
   * Where a body read whole is decoded and its entries handed on: here by default (on `forward`),
   * or on a shard thread of a sharded run (see decode-step.ts).
   */
  readonly decode?: DecodeStep;
}

/** The push routes, to mount in any Koa app, and the stand-alone server's app built on them. */
export interface PushRoutes {
  /**
   * The routes. Each answers its own errors as the reference's Go server does and counts itself
   * in `logs_source_api_requests_total`, so the router also works nested under a prefix.
   */
  readonly router: Router;
  /**
   * The routes plus answers to the other methods on their paths (405, or the `Allow` list for
   * OPTIONS); requests to any other path go on to the next middleware.
   */
  middleware(): Middleware;
  /** The stand-alone server's whole app: the routes, and Go's 404 for every other path. */
  serverApp(): Koa;
}

const ROUTES = ['/loki/api/v1/push', '/api/v1/push', '/loki/api/v1/raw', '/api/v1/raw', '/ready'];

/**
 * Builds the routes on `options`. A request is counted once, under the route it reached, or under
 * `other` by the stand-alone server for the paths it does not serve.
 */
export function createPushRoutes(options: PushAppOptions): PushRoutes {
  const { metrics, componentId } = options;
  const decode = options.decode ?? decodeStep({ ...options, showPending });
  const logUnexpected = (err: unknown) => options.log('error', 'request failed', { error: (err as Error).message });
  const goErrors = goErrorResponses(logUnexpected);
  /** Requests already counted under their route, so an enclosing app does not count them again. */
  const counted = new WeakSet<Context>();
  const countRequest = (ctx: Context, route: string) =>
    metrics.requests.inc({ component_id: componentId, route, status_code: String(ctx.status) });

  /** Answers a request to `route` (errors included) and counts it once answered. */
  const answered =
    (route: string): Middleware =>
    async (ctx, next) => {
      counted.add(ctx);
      try {
        await goErrors(ctx, next);
      } finally {
        countRequest(ctx, route);
      }
    };

  const reject = (ctx: Context, err: PushError): never => {
    metrics.rejected.inc({ component_id: componentId, reason: err.reason });
    if (err.status === 429) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
    // Leave the rest of a refused upload unread: the connection closes instead of draining it.
    if ((err.status === 413 || err.status === 415 || err.status === 429 || err.status === 503) && ctx.req.httpVersionMajor < 2)
      ctx.set('Connection', 'close');
    throw httpError(err.status, err.message);
  };

  const router = new Router({ strict: true, sensitive: true });
  router.get('/ready', answered('/ready'), (ctx) => {
    ctx.status = options.stopping() ? 503 : 200;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = options.stopping() ? 'not ready' : 'ready';
  });
  for (const [kind, paths] of [
    ['push', ['/loki/api/v1/push', '/api/v1/push']],
    ['raw', ['/loki/api/v1/raw', '/api/v1/raw']],
  ] as const) {
    for (const path of paths) {
      router.post(path, answered(path), (ctx) =>
        options.inFlight(() => handle(ctx, kind)).catch((err) => (err instanceof PushError ? reject(ctx, err) : Promise.reject(err))),
      );
    }
  }
  // Typed for a plain Koa app: the router adds its own context fields as it runs.
  const allowedMethods = router.allowedMethods({
    throw: true,
    methodNotAllowed: () => httpError(405, ''),
    notImplemented: () => httpError(405, ''),
  }) as unknown as Middleware;
  const dispatch = router.routes() as unknown as Middleware;
  const nothingMore = async () => {};

  return {
    router,
    middleware: () => async (ctx, next) => {
      const match = router.match(ctx.path, ctx.method);
      if (match.route) return dispatch(ctx, next);
      if (match.path.length === 0) return next();
      // One of the routes' paths with another method: answered here, as the server answers it.
      await answered(ctx.path)(ctx, () => allowedMethods(ctx, () => dispatch(ctx, nothingMore)));
    },
    serverApp: () => {
      const app = new Koa();
      app.silent = true;
      app.use(async (ctx, next) => {
        try {
          await next();
        } finally {
          if (!counted.has(ctx)) countRequest(ctx, ROUTES.includes(ctx.path) ? ctx.path : 'other');
        }
      });
      app.use(goErrors);
      app.use(async (ctx, next) => {
        await next();
        if (ctx.status === 404 && ctx.body == null) ctx.throw(404);
      });
      app.use(dispatch);
      app.use(allowedMethods);
      return app;
    },
  };

  async function handle(ctx: Context, kind: 'push' | 'raw'): Promise<void> {
    if (options.stopping()) throw new PushError(503, 'shutting_down', 'the server is shutting down');
    const settings = options.settings();
    const contentType = ctx.get('Content-Type') || undefined;
    const contentEncoding = ctx.get('Content-Encoding') || undefined;
    if (kind === 'push') bodyFormat(contentType);
    const pending = options.pending;
    if (!pending.hasRoom()) throw queueFull();

    const claim = new PendingClaim(pending);
    try {
      // A body that cannot fit the pending bound even alone is refused like one over the body limit.
      const raw = await readBodyCapped(ctx.req, Math.min(settings.maxBodyBytes, pending.limit), (bytes) =>
        refusal(claim.take(bytes), pending),
      );
      showPending();
      const head: PushHead = {
        kind,
        tenant: ctx.get('X-Scope-OrgID').trim(),
        ...(contentType === undefined ? {} : { contentType }),
        ...(contentEncoding === undefined ? {} : { contentEncoding }),
      };
      const { entries, violation } = await decode(raw, head, claim);
      if (entries > 0) metrics.entries.inc({ component_id: componentId }, entries);
      if (violation !== undefined) throw new PushError(400, violation.reason, violation.message);
      ctx.status = 204;
    } finally {
      claim.release();
      showPending();
    }
  }

  function showPending(): void {
    metrics.pendingBytes.set({ component_id: componentId }, options.pending.bytes);
  }
}
