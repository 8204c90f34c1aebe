/**
 * The run server's own guards: it answers only the Host names it may be reached by (a page on
 * another site cannot read it through DNS rebinding), and it shows no credential, in any URL
 * form, in the component list its page draws from.
 */
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { unhealthy } from '../../core/runtime/component.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { HOST_NOT_ALLOWED, startRunServer } from '../../cli/run-server.js';
import '../../index.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function serve(graph: ComponentGraph, allowedHosts?: string[]) {
  const server = await startRunServer({
    host: '127.0.0.1',
    port: 0,
    registry: new Registry(),
    graph,
    reload: async () => [],
    allowedHosts,
  });
  stops.push(() => server.close());
  return server;
}

function emptyGraph(): ComponentGraph {
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }));
  graph.load('', 'empty.alloy');
  return graph;
}

/** A request to the server with `host` as its Host header; the status and body it gets. */
function get(url: string, path: string, host: string, method = 'GET'): Promise<{ status: number; body: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { Host: host, 'X-Rivulet-Reload': '1' } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the Host a request names', () => {
  it('is answered 403 on every route when it is a name the server is not reached by', async () => {
    const server = await serve(emptyGraph());
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/api/v0/components'],
      ['GET', '/api/v0/tap/x'],
      ['GET', '/metrics'],
      ['POST', '/-/reload'],
    ] as const) {
      expect(await get(server.url, path, 'rebind.attacker.example:12345', method)).toEqual({ status: 403, body: HOST_NOT_ALLOWED });
    }
  });

  it('is answered when it is the listen address, localhost or a loopback literal, with or without port', async () => {
    const server = await serve(emptyGraph());
    const { port } = new URL(server.url);
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, '127.0.0.2']) {
      expect((await get(server.url, '/api/v0/components', host)).status, host).toBe(200);
    }
  });

  it('is answered when it is a name given to the server, and only those', async () => {
    const server = await serve(emptyGraph(), ['rivulet.internal', 'Ops.Example.']);
    expect((await get(server.url, '/-/ready', 'rivulet.internal:8443')).status).toBe(200);
    expect((await get(server.url, '/-/ready', 'ops.example')).status).toBe(200);
    expect((await get(server.url, '/-/ready', 'other.internal')).status).toBe(403);
  });
});

describe('/api/v0/components', () => {
  it('shows no credential of a URL written in any form in the arguments', async () => {
    const registry = new Registry();
    const graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }));
    graph.load(
      `logs.source.jetstream "in" {
  url        = "nats://natsTokenQ7v@127.0.0.1:1,nats://natsUser:natsPassW3k@127.0.0.1:2"
  stream     = "LOGS"
  group      = "g"
  forward_to = []
}
`,
      'secrets.alloy',
    );
    const server = await serve(graph);
    const { body } = await get(server.url, '/api/v0/components', '127.0.0.1');
    for (const secret of ['natsTokenQ7v', 'natsPassW3k']) expect(body).not.toContain(secret);
    const [component] = JSON.parse(body) as Array<{ arguments: { url: string } }>;
    expect(component!.arguments.url).toBe('nats://xxxxx@127.0.0.1:1,nats://natsUser:xxxxx@127.0.0.1:2');
  });

  it('shows durations as Go durations, those decoded to milliseconds included', async () => {
    const registry = new Registry();
    const graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }));
    graph.load(
      `logs.write "out" {
  endpoint {
    url                = "http://127.0.0.1:1/loki/api/v1/push"
    remote_timeout     = "2500ms"
    min_backoff_period = "1m30s"
  }
}
`,
      'durations.alloy',
    );
    const server = await serve(graph);
    const { body } = await get(server.url, '/api/v0/components', '127.0.0.1');
    const [component] = JSON.parse(body) as Array<{ arguments: { endpoint: Array<Record<string, unknown>> } }>;
    const { remote_timeout, min_backoff_period, max_backoff_period, batch_wait } = component!.arguments.endpoint[0]!;
    expect({ remote_timeout, min_backoff_period, max_backoff_period, batch_wait }).toEqual({
      remote_timeout: '2.5s',
      min_backoff_period: '1m30s',
      max_backoff_period: '5m0s',
      batch_wait: '1s',
    });
  });

  it('hides URL credentials, and secrets of the arguments, quoted in a health message', async () => {
    const registry = new Registry();
    const graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }));
    graph.load('logs.echo "out" { }\n', 'echo.alloy');
    const health = graph.health();
    // A component whose health quotes its connection string as an error would.
    const shown = Object.assign(Object.create(graph) as ComponentGraph, {
      health: () =>
        health.map((c) => ({
          ...c,
          health: unhealthy('dial nats://tok9Secret@10.0.0.1:4222 failed; GET https://h/p?access_token=at4Secret&x=1: 401'),
        })),
    });
    const server = await serve(shown);
    const [component] = JSON.parse((await get(server.url, '/api/v0/components', '127.0.0.1')).body) as Array<{
      health: { message: string };
    }>;
    expect(component!.health.message).toBe('dial nats://xxxxx@10.0.0.1:4222 failed; GET https://h/p?access_token=xxxxx&x=1: 401');
  });
});
