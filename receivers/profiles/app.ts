/**
 * The receiver's Koa app: `POST /ingest` and the PusherService paths, nothing else. A method
 * mismatch on a mounted path is 405 and any other path 404, both in the reference's words; the
 * Push paths are handed to the Connect handler with Koa stepping aside, since no body parser may
 * touch a Push body before it.
 */
import Koa from 'koa';
import { Router } from '@koa/router';
import { scopedDeadline, type ProfilesReceiver } from '../../core/profiles';
import { goErrorResponses, httpError } from '../http/errors';
import { handleIngest, type Log } from './ingest';
import { forwardPush } from './push';
import { createPushHandler } from './push_service';

export interface ProfilesAppOptions {
  /** The current forward_to list, read once per request. */
  readonly receivers: () => readonly ProfilesReceiver[];
  readonly log: Log;
}

export function createProfilesApp(options: ProfilesAppOptions): Koa {
  const app = new Koa();
  app.silent = true;
  const push = createPushHandler(async (request, call) => {
    if (call.deadlineMs === undefined) return forwardPush(request, options.receivers(), call.signal);
    const deadline = scopedDeadline(call.deadlineMs, call.signal);
    try {
      await forwardPush(request, options.receivers(), deadline.signal);
    } finally {
      deadline.release();
    }
  });

  const router = new Router({ strict: true, sensitive: true });
  router.post('/ingest', (ctx) => handleIngest(ctx, options.receivers(), options.log));
  router.post('/push.v1.PusherService/{*procedure}', async (ctx) => {
    ctx.respond = false;
    await push(ctx.req, ctx.res);
  });

  app.use(goErrorResponses((err) => options.log('error', 'request failed', { err: (err as Error).message })));
  app.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) ctx.throw(404);
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
}
