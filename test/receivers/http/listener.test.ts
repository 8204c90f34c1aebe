/**
 * A receiver's listener across reloads: kept as it is when the `http` block is unchanged, and
 * replaced gracefully when it changes: the new listener takes the old one's listening socket over
 * (same address) and the old one serves what it has accepted, so a push in flight, one sent on a
 * keep-alive connection the client already holds, or one on a connection just opened, is
 * answered rather than refused or reset.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagedListener } from '../../../receivers/http/listener.js';
import { resolveHttpConfig, type HttpServerConfig } from '../../../receivers/http/schema.js';
import type { HttpHandler } from '../../../receivers/http/server.js';
import { writeSelfSignedCert } from '../../support/self-signed.js';

const listeners: ManagedListener[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  await Promise.all(listeners.splice(0).map((l) => l.stop()));
});

/** A port free a moment ago: replacing a listener on one fixed port is what is tested. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function configOf(port: number, http: Record<string, unknown> = {}): HttpServerConfig {
  return resolveHttpConfig({ listen_address: '127.0.0.1', listen_port: port, ...http }, { listenPort: 0, connLimit: 0 });
}

async function startListener(config: HttpServerConfig, handler: HttpHandler, graceMs = 10_000): Promise<ManagedListener> {
  const listener = new ManagedListener(config, { handler, log: () => {}, graceMs: () => graceMs });
  listeners.push(listener);
  await listener.start();
  return listener;
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly connection: string | undefined;
}

function post(agent: Agent, port: number, path: string, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, connection: res.headers.connection }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => reject(Object.assign(err, { reused: req.reusedSocket })));
    req.end(body);
  });
}

function keepAlive(): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  return agent;
}

/** Answers `/slow` after `ms`, anything else at once, with the body it was sent. */
function echoHandler(ms: number): HttpHandler {
  return (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.url === '/slow') setTimeout(() => res.end(`slow ${body}`), ms);
      else res.end(`ok ${body}`);
    });
  };
}

describe('a reload', () => {
  it('keeps the listener as it is when the http block is unchanged, its connections with it', async () => {
    const port = await freePort();
    const listener = await startListener(configOf(port), echoHandler(200));
    const running = listener.running();
    const agent = keepAlive();
    const slow = post(agent, port, '/slow', 'a');
    await new Promise((r) => setTimeout(r, 50));
    listener.reconfigure(configOf(port));
    await listener.settled();
    expect(listener.running()).toBe(running);
    expect(await slow).toEqual({ status: 200, body: 'slow a', connection: 'keep-alive' });
    expect(running!.connections()).toBe(1);
  });

  it('replacing the listener answers the push in flight and the next one sent on a held connection, each closing its connection', async () => {
    const port = await freePort();
    const listener = await startListener(configOf(port), echoHandler(300));
    const first = listener.running()!;
    const inFlight = keepAlive();
    const held = keepAlive();
    expect(await post(held, port, '/', 'warm')).toMatchObject({ status: 200, connection: 'keep-alive' });
    const slow = post(inFlight, port, '/slow', 'a');
    await new Promise((r) => setTimeout(r, 50));

    listener.reconfigure(configOf(port, { server_idle_timeout: 61_000_000_000n }));
    await listener.settled();
    expect(listener.running()).not.toBe(first);
    // The new listener has the port; the old one still serves the connections it accepted.
    expect(first.connections()).toBe(2);
    expect(await post(held, port, '/', 'b')).toEqual({ status: 200, body: 'ok b', connection: 'close' });
    expect(await slow).toEqual({ status: 200, body: 'slow a', connection: 'close' });
    // Both clients now reach the new listener.
    expect(await post(held, port, '/', 'c')).toEqual({ status: 200, body: 'ok c', connection: 'keep-alive' });
    expect(await post(inFlight, port, '/', 'd')).toEqual({ status: 200, body: 'ok d', connection: 'keep-alive' });
    expect(first.connections()).toBe(0);
    expect(listener.running()!.connections()).toBe(2);
  });

  it('moving to another port closes the old one at once and still answers the push in flight there', async () => {
    const from = await freePort();
    let to = await freePort();
    while (to === from) to = await freePort();
    const listener = await startListener(configOf(from), echoHandler(300));
    const slow = post(keepAlive(), from, '/slow', 'a');
    await new Promise((r) => setTimeout(r, 50));
    listener.reconfigure(configOf(to));
    await listener.settled();
    expect(await post(keepAlive(), to, '/', 'b')).toEqual({ status: 200, body: 'ok b', connection: 'keep-alive' });
    await expect(post(keepAlive(), from, '/', 'c')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await slow).toEqual({ status: 200, body: 'slow a', connection: 'close' });
  });

  it('switching TLS on and off on the same port takes the socket over each time, and a stop closes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-listener-'));
    try {
      writeSelfSignedCert(dir);
      const ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
      const tls = { tls: { cert_pem: ca, key_pem: readFileSync(join(dir, 'key.pem'), 'utf8'), cipher_suites: [] } };
      const get = (secure: boolean, port: number): Promise<string> =>
        new Promise((resolve, reject) => {
          const req = (secure ? httpsRequest : request)({ host: '127.0.0.1', port, path: '/', agent: false, ca }, (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve(`${res.statusCode} ${text}`));
          });
          req.on('error', reject);
          req.end();
        });
      const port = await freePort();
      const listener = await startListener(configOf(port), echoHandler(0));
      expect(await get(false, port)).toBe('200 ok ');
      listener.reconfigure(configOf(port, tls));
      await listener.settled();
      expect(await get(true, port)).toBe('200 ok ');
      listener.reconfigure(configOf(port));
      await listener.settled();
      expect(await get(false, port)).toBe('200 ok ');
      await listener.stop();
      await expect(get(false, port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does not keep a stop waiting on a replaced listener’s idle connections', async () => {
    const port = await freePort();
    const listener = await startListener(configOf(port), echoHandler(0), 20_000);
    const first = listener.running()!;
    const held = keepAlive();
    await post(held, port, '/', 'warm');
    listener.reconfigure(configOf(port, { server_idle_timeout: 61_000_000_000n }));
    await listener.settled();
    expect(first.connections()).toBe(1);
    const started = Date.now();
    await listener.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(first.connections()).toBe(0);
  });

  it('resets and repeats no push across 20 reloads that replace the listener under keep-alive load', async () => {
    const port = await freePort();
    const seen = new Map<string, number>();
    const handler: HttpHandler = (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        seen.set(body, (seen.get(body) ?? 0) + 1);
        res.end();
      });
    };
    const listener = await startListener(configOf(port), handler);
    let stop = false;
    const failed: string[] = [];
    let sent = 0;
    const clients = Array.from({ length: 4 }, async (_, c) => {
      const agent = keepAlive();
      for (let i = 0; !stop; i++) {
        sent++;
        for (let attempt = 0; ; attempt++) {
          try {
            await post(agent, port, '/', `c${c}-${i}`);
            break;
          } catch (err) {
            const { code, reused } = err as NodeJS.ErrnoException & { reused: boolean };
            failed.push(`${code} on a ${reused ? 'held' : 'new'} connection: c${c}-${i}`);
            if (attempt > 50) throw err;
            await new Promise((r) => setTimeout(r, 5));
          }
        }
      }
    });
    for (let n = 0; n < 20; n++) {
      await new Promise((r) => setTimeout(r, 30));
      listener.reconfigure(configOf(port, { server_idle_timeout: BigInt(60 + (n % 2)) * 1_000_000_000n }));
      await listener.settled();
    }
    stop = true;
    await Promise.all(clients);
    // Neither refused (the port is never closed) nor reset (held or new connection alike).
    expect(failed).toEqual([]);
    expect(seen.size).toBe(sent);
    expect([...seen].filter(([, n]) => n > 1)).toEqual([]);
  });
});
