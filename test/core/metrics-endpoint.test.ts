import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { metricsMiddleware } from '../../core/metrics-endpoint.js';
import { sharedRegistry } from '../../core/pipeline.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

async function serve(app: Koa): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('metricsMiddleware', () => {
  it('serves GET /metrics from the given registry in Prometheus text and leaves other requests to the app', async () => {
    const registry = new Registry();
    new Counter({ name: 'pushes_total', help: 'Pushes.', registers: [registry] }).inc(3);
    const app = new Koa().use(metricsMiddleware(registry)).use((ctx) => {
      ctx.body = `app: ${ctx.method} ${ctx.path}`;
    });
    const url = await serve(app);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await res.text()).toBe('# HELP pushes_total Pushes.\n# TYPE pushes_total counter\npushes_total 3\n\n');
    expect(await (await fetch(`${url}/metrics`, { method: 'POST' })).text()).toBe('app: POST /metrics');
    expect(await (await fetch(`${url}/other`)).text()).toBe('app: GET /other');
  });

  it('serves the shared registry by default', async () => {
    new Counter({ name: 'metrics_endpoint_default_total', help: 'Counted.', registers: [sharedRegistry()] }).inc();
    const url = await serve(new Koa().use(metricsMiddleware()));
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('metrics_endpoint_default_total 1\n');
    sharedRegistry().removeSingleMetric('metrics_endpoint_default_total');
  });
});
