/** profiles.receive_http inside the runtime: health, reloads, several instances and /metrics. */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../../cli/run.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import type { ProfilesReceiveHttp } from '../../../receivers/profiles-receive-http.js';
import '../../../index.js';
import { freePort, rawRequest, testContext } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-profiles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function graphOf() {
  const ctx = testContext('graph');
  return new ComponentGraph((id) => ({ ...ctx, id }));
}

const receiverBlock = (label: string, port: number | string, extra = '') =>
  `profiles.receive_http "${label}" {\n  http {\n    listen_address = "127.0.0.1"\n    listen_port = ${port}\n${extra}\n  }\n  forward_to = [profiles.echo.out.receiver]\n}\n`;

describe('profiles.receive_http in the runtime', () => {
  it('is unhealthy when its port is taken, and healthy again once a reload moves it', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const taken = (blocker.address() as { port: number }).port;
    const graph = graphOf();
    graph.load(`${receiverBlock('busy', taken)}profiles.echo "out" { }\n`, 'busy.alloy');
    await graph.start();
    const health = () => graph.health().find((c) => c.id === 'profiles.receive_http.busy')!.health;
    expect(health().state).toBe('unhealthy');
    expect(health().message).toMatch(/^failed to start server: listen EADDRINUSE/);

    const free = await freePort();
    expect(await graph.reload(`${receiverBlock('busy', free)}profiles.echo "out" { }\n`, 'busy.alloy')).toEqual([]);
    const component = graph.component('profiles.receive_http.busy') as unknown as ProfilesReceiveHttp;
    await component.settled();
    expect(health().state).toBe('healthy');
    expect((await rawRequest(`http://127.0.0.1:${free}/ingest?name=moved`, { body: 'x' })).status).toBe(200);
    await graph.stop();
    blocker.close();
  });

  it('keeps serving its old config and reports unhealthy when a reload brings an invalid one', async () => {
    const port = await freePort();
    const graph = graphOf();
    graph.load(`${receiverBlock('r', port)}profiles.echo "out" { }\n`, 'r.alloy');
    await graph.start();
    const errors = await graph.reload(
      `${receiverBlock('r', port, '    tls {\n      cert_pem = "x"\n      cert_file = "y"\n    }')}profiles.echo "out" { }\n`,
      'r.alloy',
    );
    expect(errors.map((e) => e.message)).toEqual([
      'r.alloy:7:7: profiles.receive_http "r" > http > tls: cert_pem and cert_file are mutually exclusive',
    ]);
    expect(graph.health().find((c) => c.id === 'profiles.receive_http.r')!.health.state).toBe('unhealthy');
    expect((await rawRequest(`http://127.0.0.1:${port}/ingest?name=still`, { body: 'x' })).status).toBe(200);
    await graph.stop();
  });

  it('runs several labelled instances on different ports and shows their gauges on /metrics', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const file = join(dir, 'two.alloy');
    writeFileSync(file, `${receiverBlock('a', a, '    conn_limit = 7')}${receiverBlock('b', `"${b}"`)}profiles.echo "out" { }\n`);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let log = '';
    const ready = new Promise<string>((resolve) =>
      stderr.on('data', (c) => {
        log += c;
        const m = /msg="now listening for http traffic" addr="([^"]+)"/.exec(log);
        if (m && log.includes(`:${b}"`)) resolve(m[1]!);
      }),
    );
    const signals = new EventEmitter();
    const done = runCommand([file, '--server.http.listen-addr', '127.0.0.1:0'], { stdin: Readable.from([]), stdout, stderr }, signals);
    const runUrl = await ready;
    for (const port of [a, b]) expect((await rawRequest(`http://127.0.0.1:${port}/ingest?name=m`, { body: 'x' })).status).toBe(200);
    const metrics = await (await fetch(`${runUrl}/metrics`)).text();
    const lines = metrics.split('\n').filter((l) => l.startsWith('profiles_receive_http_tcp_connections'));
    expect(lines.filter((l) => l.startsWith('profiles_receive_http_tcp_connections_limit')).sort()).toEqual([
      'profiles_receive_http_tcp_connections_limit{component_path="/",component_id="profiles.receive_http.a",protocol="http"} 7',
      'profiles_receive_http_tcp_connections_limit{component_path="/",component_id="profiles.receive_http.b",protocol="http"} 16384',
    ]);
    expect(lines.filter((l) => /^profiles_receive_http_tcp_connections\{/.test(l))).toHaveLength(2);
    signals.emit('SIGTERM');
    expect(await done).toBe(0);
  });
});
