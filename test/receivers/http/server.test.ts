/**
 * The shared HTTP server's own behaviour, below any receiver: the bound on connections waiting
 * beyond `conn_limit`, and closing (requests in flight finish, idle connections go at once) over
 * plain HTTP/1.1 and over TLS.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolveHttpConfig } from '../../../receivers/http/schema.js';
import { MAX_WAITING_CONNECTIONS, startHttpServer, type HttpHandler, type RunningHttpServer } from '../../../receivers/http/server.js';
import { writeSelfSignedCert } from '../../support/self-signed.js';

let dir: string;
let certPem: string;
let keyPem: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rivulet-server-'));
  writeSelfSignedCert(dir);
  certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
  keyPem = readFileSync(join(dir, 'key.pem'), 'utf8');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let servers: RunningHttpServer[] = [];
let sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets = [];
  await Promise.all(servers.map((s) => s.close(0)));
  servers = [];
});

async function start(http: Record<string, unknown>, handler: HttpHandler): Promise<RunningHttpServer> {
  const config = resolveHttpConfig({ listen_address: '127.0.0.1', listen_port: 0, ...http }, { listenPort: 0, connLimit: 0 });
  const server = await startHttpServer(config, handler);
  servers.push(server);
  return server;
}

/** Resolves once `check` holds, polling for at most `ms`. */
async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
}

describe('the connections waiting beyond conn_limit', () => {
  it(`are at most ${MAX_WAITING_CONNECTIONS}; one more is closed at once and the waiting ones stay open`, async () => {
    const server = await start({ conn_limit: 1 }, (_req, res) => res.end('ok'));
    const { port } = server;
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => resolve(socket));
        socket.on('error', reject);
        sockets.push(socket);
      });
    await open();
    await until(() => server.connections() === 1);
    const waiting: Socket[] = [];
    for (let i = 0; i < MAX_WAITING_CONNECTIONS; i++) waiting.push(await open());
    await until(() => server.waiting() === MAX_WAITING_CONNECTIONS);

    const excess = await open();
    excess.on('error', () => {});
    await closed(excess);
    expect(server.waiting()).toBe(MAX_WAITING_CONNECTIONS);
    expect(server.connections()).toBe(1);
    expect(waiting.filter((s) => s.destroyed)).toEqual([]);
  });
});

describe('a conn_limit slot', () => {
  /** GET / on a fresh connection; resolves with the status and how long it took. */
  function push(server: RunningHttpServer, tls: boolean): Promise<{ status: number; ms: number }> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const options = { method: 'GET', agent: false, ...(tls ? { ca: certPem } : {}) };
      const req = (tls ? httpsRequest : httpRequest)(`${server.url}/`, options, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, ms: Date.now() - started }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  const limit = 4;
  const cases: Array<[string, 'plain' | 'h2c' | 'tls', 'end' | 'destroy' | 'reset']> = [
    ['plain HTTP/1.1, clients closing with FIN', 'plain', 'end'],
    ['plain HTTP/1.1, clients destroying their sockets', 'plain', 'destroy'],
    ['plain HTTP/1.1, clients resetting', 'plain', 'reset'],
    ['h2c enabled', 'h2c', 'destroy'],
    ['TLS', 'tls', 'destroy'],
  ];
  it.each(cases)('is free again as soon as a client leaves, waiting or admitted (%s)', async (_name, protocol, leave) => {
    const tls = protocol === 'tls';
    const counts: number[] = [];
    const config = resolveHttpConfig(
      {
        listen_address: '127.0.0.1',
        listen_port: 0,
        conn_limit: limit,
        // Far longer than the test: a slot that only the read timeout frees fails it.
        server_read_timeout: 60_000_000_000n,
        ...(protocol === 'h2c' ? { http2: { enabled: true } } : {}),
        ...(tls ? { tls: { cert_pem: certPem, key_pem: keyPem, cipher_suites: [] } } : {}),
      },
      { listenPort: 0, connLimit: 0 },
    );
    const server = await startHttpServer(config, (_req, res) => res.end('ok'), { onConnections: (n) => counts.push(n) });
    servers.push(server);

    const clients = await Promise.all(
      Array.from(
        { length: 10 * limit },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
            socket.on('error', () => {});
            sockets.push(socket);
          }),
      ),
    );
    await until(() => server.connections() === limit && server.waiting() === 9 * limit);
    for (const socket of clients) {
      if (leave === 'end') socket.end();
      else if (leave === 'destroy') socket.destroy();
      else socket.resetAndDestroy();
    }

    const { status, ms } = await push(server, tls);
    expect(status).toBe(200);
    expect(ms).toBeLessThan(3_000);
    await until(() => server.connections() === 0 && server.waiting() === 0);
    expect(Math.max(...counts)).toBe(limit);
    expect(counts.at(-1)).toBe(0);
  });
});

describe('timeouts longer than a Node timer can wait', () => {
  it('keep an idle connection open instead of firing at once, with no timer overflow', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const thousandHours = 3_600_000_000_000_000n;
      const server = await start({ server_idle_timeout: thousandHours, server_read_timeout: thousandHours }, (_req, res) => res.end('ok'));
      const socket = connect(server.port, '127.0.0.1');
      sockets.push(socket);
      let answer = '';
      socket.on('data', (c) => (answer += c));
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => answer.endsWith('ok'));
      await new Promise((r) => setTimeout(r, 50));
      expect(socket.destroyed).toBe(false);
      expect(warnings.map((w) => w.name)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('closing', () => {
  /** A handler that answers `/slow` after `ms`, and anything else at once. */
  function slowHandler(ms: number) {
    let arrived = 0;
    const handler: HttpHandler = (req, res) => {
      arrived++;
      if (req.url === '/slow') setTimeout(() => res.end('done'), ms);
      else res.end('ok');
    };
    return { handler, arrived: () => arrived };
  }

  async function closeWhileBusy(tls: boolean) {
    const { handler, arrived } = slowHandler(300);
    const server = await start(tls ? { tls: { cert_pem: certPem, key_pem: keyPem, cipher_suites: [] } } : {}, handler);
    const { port } = server;
    const idle: Socket = tls
      ? tlsConnect({ port, host: '127.0.0.1', ca: certPem, ALPNProtocols: ['http/1.1'] })
      : connect(port, '127.0.0.1');
    sockets.push(idle);
    idle.on('error', () => {});
    await new Promise((r) => idle.once(tls ? 'secureConnect' : 'connect', r));

    const answer = new Promise<string>((resolve, reject) => {
      const options = { method: 'GET', agent: false, ...(tls ? { ca: certPem } : {}) };
      const req = (tls ? httpsRequest : httpRequest)(`${server.url}/slow`, options, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      });
      req.on('error', reject);
      req.end();
    });
    await until(() => arrived() === 1);
    const started = Date.now();
    const closing = server.close(10_000);
    await closed(idle);
    const idleClosedAfter = Date.now() - started;
    expect(await answer).toBe('200 done');
    await closing;
    return { idleClosedAfter, closedAfter: Date.now() - started, connections: server.connections() };
  }

  it('lets a plain HTTP/1.1 request in flight finish and closes an idle connection at once', async () => {
    const { idleClosedAfter, closedAfter, connections } = await closeWhileBusy(false);
    expect(idleClosedAfter).toBeLessThan(250);
    expect(closedAfter).toBeLessThan(5_000);
    expect(connections).toBe(0);
  });

  it('does the same over TLS', async () => {
    const { idleClosedAfter, closedAfter, connections } = await closeWhileBusy(true);
    expect(idleClosedAfter).toBeLessThan(250);
    expect(closedAfter).toBeLessThan(5_000);
    expect(connections).toBe(0);
  });
});
