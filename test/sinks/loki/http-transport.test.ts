import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpTransport } from '../../../sinks/loki/http-transport.js';

const servers: Array<Server | TcpServer> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen<T extends Server | TcpServer>(server: T): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/loki/api/v1/push`;
}

const never = () => new AbortController().signal;

describe('httpTransport', () => {
  it('posts the body with its headers and reports status, Retry-After and the first KiB of the answer', async () => {
    const seen: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders; body: string }> = [];
    let connections = 0;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
        res.writeHead(429, { 'Retry-After': '7' }).end(`  slow down ${'x'.repeat(5000)}`);
      });
    });
    server.on('connection', () => connections++);
    const url = await listen(server);
    const request = { url, headers: { 'Content-Type': 'application/x-protobuf', 'X-Scope-OrgID': 'team-a' }, body: Buffer.from('payload') };
    const first = await httpTransport(request, never());
    expect(first.status).toBe(429);
    expect(first.retryAfter).toBe('7');
    expect(first.message).toBe(`slow down ${'x'.repeat(1024 - 12)}`);
    await httpTransport(request, never());
    await httpTransport(request, never());
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/loki/api/v1/push', body: 'payload' });
    expect(seen[0]!.headers['content-type']).toBe('application/x-protobuf');
    expect(seen[0]!.headers['x-scope-orgid']).toBe('team-a');
    expect(seen[0]!.headers['content-length']).toBe('7');
    // Kept alive: one connection for all three.
    expect(connections).toBe(1);
  });

  it('reports a refused connection as no answer', async () => {
    const probe = createTcpServer();
    const url = await listen(probe);
    servers.pop();
    await new Promise((resolve) => probe.close(resolve));
    const result = await httpTransport({ url, headers: {}, body: Buffer.from('x') }, never());
    expect(result.status).toBe(-1);
    expect(result.message).toMatch(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  it('gives up when aborted, reporting the reason', async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const url = await listen(createServer(() => arrived()));
    const controller = new AbortController();
    const pending = httpTransport({ url, headers: {}, body: Buffer.from('x') }, controller.signal);
    await arrival;
    controller.abort(new Error('remote_timeout reached'));
    expect(await pending).toEqual({ status: -1, message: 'remote_timeout reached' });
  });

  it('sends once more on a new connection when a kept-alive one turns out closed', async () => {
    let connections = 0;
    const sockets: Socket[] = [];
    const server = createTcpServer((socket) => {
      sockets.push(socket);
      const connection = ++connections;
      let text = '';
      let answered = 0;
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        const requests = text.split('POST ').length - 1;
        if (requests === answered || !text.endsWith('x')) return;
        // The first connection answers its first request, then is gone when reused.
        if (connection === 1 && requests === 2) {
          socket.destroy();
          return;
        }
        answered = requests;
        socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
      });
    });
    const url = await listen(server);
    const request = { url, headers: {}, body: Buffer.from('x') };
    expect((await httpTransport(request, never())).status).toBe(204);
    expect((await httpTransport(request, never())).status).toBe(204);
    expect(connections).toBe(2);
    for (const socket of sockets) socket.destroy();
  });

  it('refuses a scheme other than http and https', async () => {
    expect(await httpTransport({ url: 'ftp://127.0.0.1/push', headers: {}, body: Buffer.from('x') }, never())).toEqual({
      status: -1,
      message: 'unsupported protocol scheme "ftp"',
    });
  });
});

describe('httpTransport and redirects', () => {
  it("follows a 307 with the body again and a 302 as a GET, as Go's client does", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`);
        if (req.url === '/loki/api/v1/push') res.writeHead(307, { Location: '/moved/push' }).end();
        else if (req.url === '/old') res.writeHead(302, { Location: '/moved/push' }).end();
        else res.writeHead(req.method === 'POST' ? 204 : 405).end();
      });
    });
    const url = await listen(server);
    const pushed = await httpTransport({ url, headers: {}, body: Buffer.from('payload') }, never());
    expect(pushed.status).toBe(204);
    const found = await httpTransport(
      { url: url.replace('/loki/api/v1/push', '/old'), headers: {}, body: Buffer.from('payload') },
      never(),
    );
    expect(found.status).toBe(405);
    expect(seen).toEqual(['POST /loki/api/v1/push payload', 'POST /moved/push payload', 'POST /old payload', 'GET /moved/push ']);
  });
});

describe('httpTransport and a redirect loop', () => {
  it('gives up when it would be redirected a tenth time, as Go does', async () => {
    let hops = 0;
    const server = createServer((req, res) => {
      hops++;
      req.resume();
      res.writeHead(308, { Location: `/hop/${hops}` }).end();
    });
    const url = await listen(server);
    const result = await httpTransport({ url, headers: {}, body: Buffer.from('payload') }, never());
    expect(hops).toBe(10);
    expect(result).toEqual({ status: -1, message: `Post "${url.replace('/loki/api/v1/push', '/hop/10')}": stopped after 10 redirects` });
  });
});
