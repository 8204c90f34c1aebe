/**
 * The error answers of receiver apps, byte for byte as a Go server writes `http.Error(w,
 * http.StatusText(code), code)`: the reason phrases of Go's table, the plain-text headers, and
 * Go's rules for the statuses that carry no body. Both forms are checked: `writeGoError` on a
 * bare Node server and the Koa middleware.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { goErrorResponses, httpError, statusText, writeGoError } from '../../../receivers/http/errors.js';

describe('statusText', () => {
  it("gives Go's reason phrase for every code Go knows and '' for every other", () => {
    // Spot checks, above all where Go's spelling is not Node's (413, 414, 416, 418), then the
    // count: net/http knows 62 codes, and 306 and the unassigned ones give ''.
    const known = {
      100: 'Continue',
      103: 'Early Hints',
      202: 'Accepted',
      226: 'IM Used',
      302: 'Found',
      308: 'Permanent Redirect',
      413: 'Request Entity Too Large',
      414: 'Request URI Too Long',
      416: 'Requested Range Not Satisfiable',
      418: "I'm a teapot",
      422: 'Unprocessable Entity',
      451: 'Unavailable For Legal Reasons',
      511: 'Network Authentication Required',
    };
    for (const [code, text] of Object.entries(known)) expect([code, statusText(Number(code))]).toEqual([code, text]);
    for (const code of [0, 99, 104, 209, 306, 309, 419, 509, 512, 599, 600]) expect([code, statusText(code)]).toEqual([code, '']);
    expect(Array.from({ length: 1000 }, (_, code) => statusText(code)).filter((text) => text !== '').length).toBe(62);
  });
});

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  servers = [];
});

/** Status of the next answer: every request is answered with `http.Error(w, StatusText(status), status)`. */
let status = 500;

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function startServers(): Promise<{ direct: number; viaKoa: number }> {
  const direct = createServer((_req, res) => writeGoError(res, httpError(status, statusText(status))));
  const app = new Koa();
  app.use(goErrorResponses());
  app.use(() => {
    throw httpError(status, statusText(status));
  });
  return { direct: await listen(direct), viaKoa: await listen(createServer(app.callback())) };
}

/**
 * The response bytes for one request, its Date header removed and the other headers sorted
 * (Koa and Node order them differently; Go sorts them too).
 */
function exchange(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...headers] = text.slice(0, split).split('\r\n');
      const kept = headers.filter((h) => !h.startsWith('Date: ')).sort();
      resolve(`${statusLine}\r\n${kept.map((h) => `${h}\r\n`).join('')}\r\n${text.slice(split + 4)}`);
    });
  });
}

async function answersFor(code: number): Promise<string> {
  status = code;
  const { direct, viaKoa } = await startServers();
  const [a, b] = await Promise.all([exchange(direct), exchange(viaKoa)]);
  expect(b).toBe(a);
  return a;
}

describe("the wire form of Go's http.Error", () => {
  it.each([
    [202, 'Accepted'],
    [302, 'Found'],
    [307, 'Temporary Redirect'],
    [308, 'Permanent Redirect'],
    [413, 'Request Entity Too Large'],
    [429, 'Too Many Requests'],
  ])('answers %i with its reason phrase as plain text, in the status line too', async (code, text) => {
    expect(await answersFor(code)).toBe(
      `HTTP/1.1 ${code} ${text}\r\n` +
        'Connection: close\r\n' +
        `Content-Length: ${text.length + 1}\r\n` +
        'Content-Type: text/plain; charset=utf-8\r\n' +
        'X-Content-Type-Options: nosniff\r\n' +
        '\r\n' +
        `${text}\n`,
    );
  });

  it('answers 204 with the plain-text type and nosniff but no length and no body', async () => {
    expect(await answersFor(204)).toBe(
      'HTTP/1.1 204 No Content\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n\r\n',
    );
  });

  it('answers 304 with nosniff only: no type, no length, no body', async () => {
    expect(await answersFor(304)).toBe('HTTP/1.1 304 Not Modified\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n');
  });

  it('answers an interim status with the 200 its text goes out under', async () => {
    expect(await answersFor(102)).toBe(
      'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 11\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n\r\nProcessing\n',
    );
  });

  it("names a code Go does not know 'status code N' and sends an empty line as body", async () => {
    expect(await answersFor(599)).toBe(
      'HTTP/1.1 599 status code 599\r\nConnection: close\r\nContent-Length: 1\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n\r\n\n',
    );
  });

  it('answers 405 with the bare status', async () => {
    expect(await answersFor(405)).toBe('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
});
