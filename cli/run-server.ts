import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { Registry } from 'prom-client';
import type { ServerResponse } from 'node:http';
import { isCapsule } from '../lib/config/evaluate.js';
import { LOGS_RECEIVER } from '../core/receiver.js';
import { redactText } from '../lib/redact.js';
import { hostCheck } from '../core/runtime/allowed-hosts.js';
import { argumentSecrets, redactedArguments } from '../core/runtime/arguments.js';
import { metricsHandler } from '../core/metrics-endpoint.js';
import type { ComponentGraph } from '../core/runtime/graph.js';
import type { TapDirection, TapHub } from '../core/inspect/tap.js';
import { UI_HTML, UI_JS } from './run-ui.js';

export interface RunServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly graph: ComponentGraph;
  /** Re-reads the config file and applies it; resolves to the error lines (empty when fine). */
  readonly reload: () => Promise<string[]>;
  /** Where `/api/v0/tap/<id>` subscribes; without it every tap answers 404. */
  readonly taps?: TapHub;
  /** Host names the server may be reached by besides its listen address (see allowed-hosts.ts). */
  readonly allowedHosts?: readonly string[];
}

/**
 * What a tap shows unless `?direction=` says: what a component forwards (`out`) when it forwards
 * (a source, a logs.process), what it receives (`in`) otherwise (a sink).
 */
export function defaultTapDirection(receives: boolean, forwards: boolean): TapDirection {
  return forwards || !receives ? 'out' : 'in';
}

/** Most entries a second a tap may ask for with `?rate=`. */
export const MAX_TAP_RATE = 1000;

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

/** What a request with a Host the server does not answer to gets, with 403. */
export const HOST_NOT_ALLOWED = 'host not allowed: use the listen address, localhost, or a name given with --server.http.allowed-hosts\n';

/**
 * The built-in HTTP server of `rivulet run`: `/metrics`, `/-/healthy`, `/-/ready`,
 * `/-/reload` and `/api/v0/components`, as the reference agent serves them, except that a
 * reload must carry `X-Rivulet-Reload` (any value) or a JSON content type, and is answered 403
 * otherwise, and a request whose Host the server does not answer to (DNS rebinding) is answered
 * 403. `/` is a page showing the graph, health, arguments, live counters and taps;
 * `/api/v0/tap/<id>[?direction=in|out][&rate=N]` streams, as JSON lines, a sample of the entries
 * sent to a component's receiver (`in`) or of those it forwards (`out`; the default for a
 * component with `forward_to`), and names the direction in `X-Tap-Direction`. Credentials are hidden in everything it
 * shows: arguments, health messages.
 */
export async function startRunServer(options: RunServerOptions): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const app = new Koa();
  const router = new Router();
  let ready = false;
  const taps = new Set<ServerResponse>();
  const hostAllowed = hostCheck(options.host, options.allowedHosts ?? []);
  app.use(async (ctx, next) => {
    if (hostAllowed(ctx.get('host') || undefined)) return next();
    ctx.status = 403;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = HOST_NOT_ALLOWED;
  });

  router.get('/metrics', metricsHandler(options.registry));
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
    const list = options.graph.health();
    const details = new Map(list.map((c) => [c.id, options.graph.details(c.id)]));
    ctx.body = list.map((c) => {
      const values = details.get(c.id)?.values ?? {};
      return {
        id: c.id,
        name: c.name,
        health: {
          state: c.health.state,
          message: redactText(c.health.message, argumentSecrets(values)),
          updatedTime: c.health.updatedAt.toISOString(),
        },
        referencesTo: details.get(c.id)?.references ?? [],
        referencedBy: list.filter((o) => details.get(o.id)?.references.includes(c.id)).map((o) => o.id),
        arguments: redactedArguments(values),
      };
    });
  });
  router.get('/api/v0/tap/:id', (ctx) => {
    const id = ctx.params.id!;
    const component = options.graph.component(id);
    if (!component || !options.taps) {
      ctx.status = 404;
      ctx.body = `unknown component ${JSON.stringify(id)}\n`;
      return;
    }
    if (
      options.graph
        .health()
        .find((c) => c.id === id)
        ?.name.startsWith('profiles.')
    ) {
      ctx.status = 400;
      ctx.body = `component ${JSON.stringify(id)} handles profiles; a tap shows log entries\n`;
      return;
    }
    const rate = ctx.query.rate === undefined ? 100 : Number(ctx.query.rate);
    if (!Number.isFinite(rate) || rate <= 0 || rate > MAX_TAP_RATE) {
      ctx.status = 400;
      ctx.body = `rate must be a number of entries a second in (0, ${MAX_TAP_RATE}]\n`;
      return;
    }
    const receives = Object.values(component.exports).some((v) => isCapsule(v) && v.capsule === LOGS_RECEIVER);
    const forwards = Array.isArray(options.graph.details(id)?.values.forward_to);
    const askedText = ctx.query.direction;
    const asked = askedText === 'in' || askedText === 'out' ? askedText : undefined;
    if (askedText !== undefined && asked === undefined) {
      ctx.status = 400;
      ctx.body = 'direction must be in or out\n';
      return;
    }
    if ((asked === 'in' && !receives) || (asked === 'out' && !forwards)) {
      ctx.status = 400;
      ctx.body = `component ${JSON.stringify(id)} ${asked === 'in' ? 'has no receiver: tap what it sends on (out)' : 'forwards nothing: tap what it receives (in)'}\n`;
      return;
    }
    const direction: TapDirection = asked ?? defaultTapDirection(receives, forwards);
    const sub = options.taps.subscribe(id, direction, { ratePerSecond: rate });
    if (!sub) {
      ctx.status = 429;
      ctx.body = `too many tap clients: at most ${options.taps.maxClients} at a time; try again once one has closed\n`;
      return;
    }
    const res = ctx.res;
    ctx.respond = false;
    res.writeHead(200, {
      'Content-Type': 'application/x-ndjson; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Tap-Direction': direction,
    });
    res.flushHeaders();
    taps.add(res);
    sub.attach(res);
    res.on('close', () => {
      sub.close();
      taps.delete(res);
    });
  });
  router.get('/', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
    ctx.body = UI_HTML;
  });
  router.get('/favicon.ico', (ctx) => {
    ctx.status = 204;
  });
  router.get('/ui.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = UI_JS;
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
    close: () => {
      for (const res of taps) res.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
