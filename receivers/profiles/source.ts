/**
 * The profile routes as a source: every Push series and ingest profile a request brings becomes a
 * delivery of the source, and the request is answered once its deliveries are (see
 * core/profile-delivery.ts). profiles.receive_http serves this source's handler on its own
 * listener and forwards the deliveries to its `forward_to`; a program mounts the source's router
 * in its own Koa app and subscribes to it.
 *
 * A request that finds the source not accepting (nobody subscribed yet, or stopping) is refused
 * without anything delivered: 503 on ingest, `unavailable` on Push, both of which profilers retry.
 * A request already being served when `stop()` is called keeps its deliveries, except a Push
 * still being read and decoded then, which is refused like a new one.
 */
import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import type { Subscription } from 'rxjs';
import { SourceNotSubscribedError } from '../../core/delivery.js';
import { profileSource, type ProfileSource } from '../../core/profile-delivery.js';
import type { ProfilesReceiver } from '../../core/profiles.js';
import type { ComponentContext } from '../../core/runtime/component.js';
import { BodyBudget, type BodyLimits } from '../http/body.js';
import type { HttpHandler } from '../http/server.js';
import { createProfilesRoutes } from './app.js';

/** What the source's behaviour depends on, decoded from its options (see profiles-receive-http.ts). */
export interface SourceSettings {
  /** How long `stop()` waits for the requests being served. */
  readonly graceMs: number;
  /** `max_body_size` in bytes; 0 lifts the bound. */
  readonly maxBodyBytes: number;
  /** `max_pending_size` in bytes; 0 lifts the bound. */
  readonly maxPendingBytes: number;
}

/**
 * A profiles source served over HTTP: an Observable of deliveries (one subscriber at a time) with
 * the routes that produce them, `POST /ingest` and `POST /push.v1.PusherService/Push` (Connect,
 * gRPC and gRPC-Web). `stop()` refuses new requests, waits up to `graceful_shutdown_timeout` for
 * the ones being served, then completes.
 *
 * @example
 * const profiles = profilesReceiver({ max_body_size: '4MiB' });
 * profiles.subscribe(profilesWrite({ endpoint: [{ url: 'http://pyroscope:4040' }] }));
 * app.use(profiles.middleware());
 */
export interface ProfilesSource extends ProfileSource {
  /** The @koa/router holding the two routes; each route writes its own answer. */
  readonly router: Router;
  /** The router's routes, to `app.use()` in a Koa app. */
  middleware(): Middleware;
}

/** The source and what its component needs besides: the whole handler and new settings on reload. */
export interface ProfilesHttpSource {
  readonly source: ProfilesSource;
  /** A Node request handler serving the routes with the reference's answers to anything else. */
  readonly handler: HttpHandler;
  configure(settings: SourceSettings): void;
}

const REFUSING: ProfilesReceiver = {
  append: () => Promise.reject(new SourceNotSubscribedError()),
  appendIngest: () => Promise.reject(new SourceNotSubscribedError()),
};

export function createProfilesHttpSource(initial: SourceSettings, ctx: ComponentContext): ProfilesHttpSource {
  let settings = initial;
  /** Shared by every request the source serves, across reloads. */
  const budget = new BodyBudget(settings.maxPendingBytes);
  let limits: BodyLimits = { maxBytes: settings.maxBodyBytes, budget };
  let accepting: readonly ProfilesReceiver[] = [REFUSING];
  let serving = 0;
  let drained: (() => void) | undefined;
  const routes = createProfilesRoutes({
    receivers: () => accepting,
    log: ctx.log,
    clock: ctx.clock,
    limits: () => limits,
    requests: {
      begin: () => void serving++,
      end: () => {
        if (--serving === 0) drained?.();
      },
    },
  });
  const source = profileSource((receiver) => {
    accepting = [receiver];
    return {
      stop: () => {
        accepting = [REFUSING];
        if (serving === 0) return Promise.resolve();
        return new Promise<void>((resolve) => {
          let timer: Subscription | undefined;
          const done = () => {
            drained = undefined;
            timer?.unsubscribe();
            resolve();
          };
          drained = done;
          timer = ctx.clock.scheduler.schedule(done, settings.graceMs);
        });
      },
    };
  }) as ProfilesSource;
  Object.assign(source, { router: routes.router, middleware: () => routes.router.routes() as unknown as Middleware });
  return {
    source,
    handler: routes.handler,
    configure(next) {
      settings = next;
      budget.resize(next.maxPendingBytes);
      limits = { maxBytes: next.maxBodyBytes, budget };
    },
  };
}
