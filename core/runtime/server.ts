import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { Registry } from 'prom-client';
import type { ComponentGraph } from './graph.js';

export interface RunServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly graph: ComponentGraph;
  /** Re-reads the config file and applies it; resolves to the error lines (empty when fine). */
  readonly reload: () => Promise<string[]>;
}

/** The header a reload request carries to show it does not come from a cross-site page. */
export const RELOAD_HEADER = 'X-Rivulet-Reload';

/**
 * Whether a POST to `/-/reload` may reload. A cross-site page can make a browser send a form
 * (or a no-cors fetch) here without the user knowing, but only a "simple" request: no custom
 * header and only a form or text content type. Asking for the header or a JSON body means the
 * browser would first send a CORS preflight, which this server never approves.
 */
function reloadAsked(header: string, contentType: string): boolean {
  if (header !== '') return true;
  return /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(contentType);
}

/**
 * The built-in HTTP server of `rivulet run`: `/metrics`, `/-/healthy`, `/-/ready`,
 * `/-/reload` and `/api/v0/components`, as the reference agent serves them, except that a
 * reload must carry `X-Rivulet-Reload` (any value) or a JSON content type, and is answered 403
 * otherwise.
 */
export async function startRunServer(options: RunServerOptions): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const app = new Koa();
  const router = new Router();
  let ready = false;

  router.get('/metrics', async (ctx) => {
    ctx.type = options.registry.contentType;
    ctx.body = await options.registry.metrics();
  });
  router.get('/-/healthy', (ctx) => {
    const unhealthy = options.graph.health().filter((c) => c.health.state !== 'healthy');
    if (unhealthy.length === 0) {
      ctx.body = 'All components are healthy.\n';
      return;
    }
    ctx.status = 500;
    ctx.body = `unhealthy components: ${unhealthy.map((c) => c.id).join(', ')}\n`;
  });
  router.get('/-/ready', (ctx) => {
    ctx.status = ready ? 200 : 503;
    ctx.body = ready ? 'Ready.\n' : 'Not ready.\n';
  });
  router.post('/-/reload', async (ctx) => {
    if (!reloadAsked(ctx.get('x-rivulet-reload'), ctx.get('content-type'))) {
      ctx.status = 403;
      ctx.body = `${RELOAD_HEADER}: 1 (or a JSON content type) is required to reload\n`;
      return;
    }
    const errors = await options.reload();
    if (errors.length > 0) {
      ctx.status = 400;
      ctx.body = errors.join('\n') + '\n';
      return;
    }
    ctx.body = 'config reloaded\n';
  });
  router.get('/api/v0/components', (ctx) => {
    ctx.body = options.graph.health().map((c) => ({
      id: c.id,
      name: c.name,
      health: { state: c.health.state, message: c.health.message, updatedTime: c.health.updatedAt.toISOString() },
    }));
  });
  app.use(router.routes()).use(router.allowedMethods());

  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  ready = true;
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
