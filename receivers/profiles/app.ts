/**
 * The receiver's request handler: `POST /ingest` and the PusherService paths, nothing else.
 *
 * The routes live in a Koa app with @koa/router, which can answer any request: a method mismatch
 * on a mounted path (OPTIONS too) is 405 and any other path 404, both in the reference's words,
 * and the Push paths are handed to the Connect handler with Koa stepping aside (no body parser may
 * touch a Push body before it).
 *
 * The two profile routes are also served on a direct lane: a `POST` whose path is exactly
 * `/ingest` or `/push.v1.PusherService/Push` goes straight to the same route handler, without a
 * Koa context. Those are the requests profilers send all day, and building a Koa context, its
 * middleware chain and router match for each one cost about a quarter of the receiver's
 * throughput (measured by `npm run bench`). The lane changes nothing else: both lanes call the
 * same handlers, which write their own answers, and the tests compare the two lanes' answers.
 */
import Koa from 'koa';
import { Router } from '@koa/router';
import type { Log } from '../../lib/log.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { scopedDeadline } from '../../core/deadline.js';
import type { ProfilesReceiver } from '../../core/profiles.js';
import type { BodyLimits } from '../http/body.js';
import { goErrorResponses, httpError, writeGoError, writeGoRedirect, writeGoUnparsableRequest } from '../http/errors.js';
import { cleanGoPath, escapeGoPath, unescapeGoPath } from '../../lib/go/url-path.js';
import type { HttpHandler, HttpRequest, HttpResponse } from '../http/server.js';
import { INGEST_PATH, serveIngest } from './ingest.js';
import { forwardPush } from './push.js';
import { createPushHandler } from './push-service.js';

export const PUSH_PATH = '/push.v1.PusherService/Push';

export interface ProfilesAppOptions {
  /** The current forward_to list, read once per request. */
  readonly receivers: () => readonly ProfilesReceiver[];
  readonly log: Log;
  /** Serve the two profile routes without Koa (the default); false sends every request through Koa. */
  readonly directLane?: boolean;
  /** The bounds on request bodies, read once per request; none when absent. */
  readonly limits?: () => BodyLimits;
  /** Told as each profile request starts and once it is answered (a source's graceful stop waits for them). */
  readonly requests?: RequestTracker;
  /** The component's clock, which call deadlines are read and kept on; the real one when absent. */
  readonly clock?: Clock;
}

/** Counts the profile requests being served. */
export interface RequestTracker {
  begin(): void;
  end(): void;
}

/** The two profile routes, as a @koa/router to mount and as a whole Node request handler. */
export interface ProfilesRoutes {
  /** `POST /ingest` and `POST /push.v1.PusherService/*`; each route writes its own answer. */
  readonly router: Router;
  /** The receiver's own handler: the router in its Koa app (the reference's 301/400/404/405) and the direct lane. */
  readonly handler: HttpHandler;
}

const NO_LIMITS: BodyLimits = { maxBytes: 0 };

/** A route's handler; `path` is the request path decoded, when the router has decoded it. */
type RouteHandler = (req: HttpRequest, res: HttpResponse, path?: string) => Promise<void>;

export function createProfilesHandler(options: ProfilesAppOptions): HttpHandler {
  return createProfilesRoutes(options).handler;
}

/** The profile routes over `options`; the router and the handler share the same route handlers. */
export function createProfilesRoutes(options: ProfilesAppOptions): ProfilesRoutes {
  const unexpected = (err: unknown) => options.log('error', 'request failed', { err: (err as Error).message });
  const limits = options.limits ?? (() => NO_LIMITS);
  const clock = options.clock ?? systemClock();
  const pushHandler = createPushHandler(
    (request, call) => {
      if (call.deadlineMs === undefined) return forwardPush(request, options.receivers(), call.signal);
      const deadline = scopedDeadline(call.deadlineMs, call.signal, clock);
      return forwardPush(request, options.receivers(), deadline.signal).finally(deadline.release);
    },
    limits,
    clock,
  );
  const tracked = (route: RouteHandler): RouteHandler => {
    const requests = options.requests;
    if (requests === undefined) return route;
    return (req, res, path) => {
      requests.begin();
      return route(req, res, path).finally(() => requests.end());
    };
  };
  const ingest = tracked((req, res) => serveIngest(req, res, options.receivers(), options.log, limits()));
  const push = tracked((req, res, path) => pushHandler(req, res, path).catch((err: unknown) => writeGoError(res, err, unexpected)));

  const router = createProfilesRouter(ingest, push);
  const viaKoa = createProfilesApp(router, unexpected).callback() as HttpHandler;
  if (options.directLane === false) return { router, handler: viaKoa };
  const handler: HttpHandler = (req, res) => {
    if (req.method === 'POST') {
      const route = directRoute(req.url ?? '');
      if (route === INGEST_PATH) return void ingest(req, res);
      if (route === PUSH_PATH) return void push(req, res);
    }
    viaKoa(req, res);
  };
  return { router, handler };
}

const DIRECT_PATHS = [INGEST_PATH, PUSH_PATH];

/** The path when it is one of the two direct-lane paths, with or without a query. */
function directRoute(url: string): string | undefined {
  // Push requests carry no query: the exact path is the common case.
  if (url === PUSH_PATH) return PUSH_PATH;
  for (const path of DIRECT_PATHS) {
    if (url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 0x3f) /* ? */) return path;
  }
  return undefined;
}

/**
 * The two routes. Each writes its own answer on the Node response (Koa steps aside), so the
 * router works the same mounted in any Koa app.
 */
function createProfilesRouter(ingest: RouteHandler, push: RouteHandler): Router {
  const router = new Router({ strict: true, sensitive: true });
  router.post(INGEST_PATH, async (ctx) => {
    ctx.respond = false;
    await ingest(ctx.req, ctx.res);
  });
  router.post('/push.v1.PusherService/{*procedure}', async (ctx) => {
    ctx.respond = false;
    await push(ctx.req, ctx.res, (ctx as RoutedContext).newRouterPath);
  });
  return router;
}

function createProfilesApp(router: Router, unexpected: (err: unknown) => void): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(goErrorResponses(unexpected));
  app.use(goRequestPath);
  app.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) ctx.throw(404);
  });
  app.use(router.routes());
  app.use(methodNotAllowed);
  return app;
}

/** @koa/router matches `newRouterPath` instead of the raw path when it is set. */
type RoutedContext = Koa.Context & { newRouterPath?: string };

/**
 * The path the reference's server routes by: Go decodes `%XX` escapes before routing (a broken
 * escape is the server's bare 400, before any handler), and gorilla/mux answers a path that is
 * not in canonical form (`//ingest`, `/a/../ingest`, `/ingest/.`) with a 301 to its cleaned
 * form, query kept. Routes then match the decoded path, so `/%69ngest` is `/ingest`.
 */
const goRequestPath: Koa.Middleware = async (ctx, next) => {
  const decoded = unescapeGoPath(ctx.path);
  if (decoded === undefined) {
    ctx.respond = false;
    writeGoUnparsableRequest(ctx.res);
    return;
  }
  const canonical = cleanGoPath(decoded);
  if (canonical !== decoded) {
    ctx.respond = false;
    const query = (ctx.req.url ?? '').includes('?') ? `?${ctx.querystring}` : '';
    writeGoRedirect(ctx.res, 301, escapeGoPath(canonical) + query);
    return;
  }
  (ctx as RoutedContext).newRouterPath = decoded;
  await next();
};

/**
 * Any method but POST on a mounted path is 405 with no body and no `Allow` header: the reference's
 * mux routes are restricted to POST and answer before connect-go (whose own 405 would carry
 * `Allow: POST`). OPTIONS included: @koa/router's allowedMethods would answer it 200 with `Allow`,
 * as if for a CORS preflight the reference never serves.
 */
const methodNotAllowed: Koa.Middleware = async (ctx, next) => {
  await next();
  const matched = (ctx as { matched?: ReadonlyArray<{ methods: readonly string[] }> }).matched ?? [];
  if (ctx.status === 404 && ctx.body == null && ctx.respond !== false && matched.some((route) => route.methods.length > 0))
    throw httpError(405, '');
};
