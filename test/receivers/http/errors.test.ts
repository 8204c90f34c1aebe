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

/** Go's `http.StatusText`, as net/http defines it: every other code gives ''. */
const GO_STATUS_TEXT: Record<number, string> = {
  100: 'Continue',
  101: 'Switching Protocols',
  102: 'Processing',
  103: 'Early Hints',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  207: 'Multi-Status',
  208: 'Already Reported',
  226: 'IM Used',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  305: 'Use Proxy',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  414: 'Request URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Requested Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a teapot",
  421: 'Misdirected Request',
  422: 'Unprocessable Entity',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};

describe('statusText', () => {
  it("gives Go's reason phrase for every code Go knows and '' for every other", () => {
    for (let code = 0; code < 1000; code++) expect([code, statusText(code)]).toEqual([code, GO_STATUS_TEXT[code] ?? '']);
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
