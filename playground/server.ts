import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import '../index.js';
import type { RunRequest, Sample } from './api.js';
import { buildAssets, type Assets } from './assets.js';
import { exportConfig } from './export-config.js';
import { readJsonBody } from './http-body.js';
import { RunRequestError } from './run.js';
import { RunAbortedError, RunPool, type RunLimits } from './run-pool.js';
import { prepareSamples } from './samples/index.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { stageHelp } from './stage-help.js';

export interface PlaygroundServerOptions {
  /** Default 0: any free port. */
  readonly port?: number;
  /** Prebuilt UI files (tests share one build); the package's built UI when absent. */
  readonly assets?: Assets;
  /** Where the sample GeoIP database is written; a fixed temp folder by default. */
  readonly databaseDir?: string;
  /**
   * Lets configs read environment variables and files and resolve host names. Off by default:
   * any web page can open a share link, and the config in it is the page author's.
   */
  readonly allowHostAccess?: boolean;
  /** Limits of each run (default 10 s and 512 MiB). */
  readonly runLimits?: Partial<RunLimits>;
}

export interface PlaygroundServer {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

/**
 * Starts the playground on 127.0.0.1: the UI, plus `GET /api/stages`, `GET /api/samples`,
 * `POST /api/run`, `POST /api/check` and `POST /api/export`. Runs and checks go to worker threads
 * (see run-pool.ts), sandboxed unless `allowHostAccess`; custom stage modules loaded in this
 * process are loaded there too.
 *
 * @example
 * const { url, close } = await startPlaygroundServer({ port: 0 });
 */
export async function startPlaygroundServer(options: PlaygroundServerOptions = {}): Promise<PlaygroundServer> {
  // Listen first so a port in use fails at once, before the UI is bundled; until it is, requests
  // get 503.
  let handle: RequestListener = (_req, res) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    res.statusCode = 503;
    res.end('starting\n');
  };
  const server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let pool: RunPool | undefined;
  try {
    const { samples, files } = prepareSamples(options.databaseDir);
    pool = new RunPool({ access: { allowHostAccess: options.allowHostAccess, readableFiles: files }, limits: options.runLimits });
    // The first worker loads its stages while the UI is bundled.
    pool.warm();
    const assets = options.assets ?? (await buildAssets());
    handle = playgroundApp({ assets, samples, port, pool }).callback();
  } catch (err) {
    await pool?.close();
    server.close();
    throw err;
  }
  const runs = pool;
  return {
    url: `http://${HOST}:${port}`,
    server,
    close: async () => {
      await runs.close();
      await new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      });
    },
  };
}

/** The Koa app behind the server (exposed for tests). */
export function playgroundApp(options: { assets: Assets; samples: readonly Sample[]; port: number; pool: RunPool }): Koa {
  const app = new Koa();
  const router = new Router();
  const allowedHosts = new Set([`${HOST}:${options.port}`, `localhost:${options.port}`]);

  // Outermost, so error answers carry them too.
  app.use(async (ctx, next) => {
    ctx.set(SECURITY_HEADERS);
    await next();
  });
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const status = (err as { status?: number }).status ?? 500;
      ctx.status = status;
      ctx.body = { error: status < 500 || (err as { expose?: boolean }).expose ? (err as Error).message : 'internal error' };
      if (status >= 500) ctx.app.emit('error', err, ctx);
    }
  });
  // A page on another site that points its own name at 127.0.0.1 (DNS rebinding) still sends
  // its own Host header: refuse it.
  app.use(async (ctx, next) => {
    if (!allowedHosts.has(ctx.host)) ctx.throw(421, `unexpected Host ${JSON.stringify(ctx.host)}`);
    await next();
  });

  router.get('/api/stages', (ctx) => {
    ctx.body = { stages: stageHelp() };
  });
  router.get('/api/samples', (ctx) => {
    ctx.body = { samples: options.samples };
  });
  router.post('/api/run', async (ctx) => {
    const request = runRequestOf(ctx, await readJsonBody(ctx));
    try {
      ctx.body = await options.pool.run(request, clientGone(ctx));
    } catch (err) {
      if (err instanceof RunRequestError) ctx.throw(400, err.message);
      if (err instanceof RunAbortedError) ctx.throw(503, err.message);
      throw err;
    }
  });
  router.post('/api/check', async (ctx) => {
    const config = stringField(ctx, await readJsonBody(ctx), 'config');
    try {
      ctx.body = { errors: await options.pool.check(config, clientGone(ctx)) };
    } catch (err) {
      if (err instanceof RunAbortedError) ctx.throw(503, err.message);
      throw err;
    }
  });
  router.post('/api/export', async (ctx) => {
    ctx.body = exportConfig(stringField(ctx, await readJsonBody(ctx), 'config'));
  });
  app.use(router.routes()).use(router.allowedMethods());

  app.use(async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const asset = options.assets.get(ctx.path === '/' ? '/index.html' : ctx.path);
    if (!asset) return next();
    ctx.type = asset.type;
    ctx.set('Cache-Control', ctx.path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.body = typeof asset.body === 'string' ? asset.body : Buffer.from(asset.body);
  });
  app.on('error', (err) => {
    if ((err as { status?: number }).status === undefined || (err as { status: number }).status >= 500) console.error('playground:', err);
  });
  return app;
}

/**
 * Aborts when the client closes the connection before its answer: the page drops a run it no
 * longer wants (a newer edit), and its worker is freed at once.
 */
function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

function runRequestOf(ctx: Context, body: Record<string, unknown>): RunRequest {
  const config = stringField(ctx, body, 'config');
  const input = stringField(ctx, body, 'input');
  const inputFormat = body.inputFormat ?? 'jsonl';
  if (inputFormat !== 'jsonl' && inputFormat !== 'text') ctx.throw(400, 'inputFormat must be "jsonl" or "text"');
  const now = body.now ?? undefined;
  if (now !== undefined && typeof now !== 'string') ctx.throw(400, 'now must be an RFC 3339 string');
  const arrivals = body.arrivals ?? undefined;
  if (arrivals !== undefined && (!Array.isArray(arrivals) || arrivals.some((a) => a !== null && typeof a !== 'number')))
    ctx.throw(400, 'arrivals must be a list of numbers');
  const seed = body.seed ?? undefined;
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isInteger(seed))) ctx.throw(400, 'seed must be an integer');
  return {
    config,
    input,
    inputFormat,
    now: now as string | undefined,
    arrivals: arrivals as (number | null)[] | undefined,
    seed: seed as number | undefined,
  };
}

function stringField(ctx: Context, body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') ctx.throw(400, `${name} must be a string`);
  return value as string;
}
