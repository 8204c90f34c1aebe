/**
 * `GET /metrics` for Koa apps: the run server's endpoint and the one a library user mounts in
 * their own app beside a push receiver, serving the same exposition text.
 */
import type { Middleware } from 'koa';
import type { Registry } from 'prom-client';
import { exposeMetrics } from './metrics.js';
import { sharedRegistry } from './pipeline.js';

/** Answers with `registry`'s metrics in the Prometheus text format, under its content type. */
export function metricsHandler(registry: Registry): Middleware {
  return async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await exposeMetrics(registry);
  };
}

/**
 * Serves `GET /metrics` (and HEAD) in a Koa app with the metrics of `registry` (by default the
 * registry programmatic sources, sinks and pipelines share); every other request goes on to the
 * next middleware.
 *
 * ```ts
 * new Koa().use(push.middleware()).use(metricsMiddleware());
 * ```
 */
export function metricsMiddleware(registry: Registry = sharedRegistry()): Middleware {
  const answer = metricsHandler(registry);
  return (ctx, next) => (ctx.path === '/metrics' && (ctx.method === 'GET' || ctx.method === 'HEAD') ? answer(ctx, next) : next());
}
