/**
 * profiles.receive_http's bounds on request bodies: `max_body_size` per request (413, or
 * `resource_exhausted` on Push) and `max_pending_size` over every request in flight (429 with
 * Retry-After), on HTTP/1.1 and HTTP/2 alike.
 */
import { connect as http2Connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { request } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { create, toBinary } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigErrors } from '../../../lib/config/errors.js';
import { PushRequestSchema } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { profilesReceiveHttpComponent } from '../../../receivers/profiles-receive-http.js';
import {
  componentArgs,
  grpcFrame,
  rawRequest,
  receiverConfig,
  recordingReceiver,
  startReceiveHttp,
  testContext,
  type RecordingReceiver,
  type StartedReceiver,
} from './harness.js';

const PUSH = '/push.v1.PusherService/Push';
const connect1 = { 'content-type': 'application/proto', 'connect-protocol-version': '1' };

let running: StartedReceiver[] = [];
let sessions: ClientHttp2Session[] = [];
afterEach(async () => {
  for (const session of sessions) session.destroy();
  sessions = [];
  await Promise.all(running.map((r) => r.stop()));
  running = [];
});

/** A receiver with these component attributes (and `http` block lines). */
async function serve(receiver: RecordingReceiver, attributes: string, http = ''): Promise<StartedReceiver> {
  const started = await startReceiveHttp([receiver], {
    config: receiverConfig(http, 1).replace('forward_to', `${attributes}\n  forward_to`),
  });
  running.push(started);
  return started;
}

function pushBody(rawProfile: Uint8Array): Uint8Array {
  return toBinary(
    PushRequestSchema,
    create(PushRequestSchema, { series: [{ labels: [{ name: 'app', value: 'a' }], samples: [{ rawProfile }] }] }),
  );
}

/** Sends raw bytes and collects the answer until the server closes the connection (3 s at most). */
function exchange(url: string, head: string): Promise<{ text: string; closedByServer: boolean }> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(head));
    let text = '';
    const guard = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedByServer: false });
    }, 3_000);
    socket.on('data', (c) => (text += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(guard);
      resolve({ text, closedByServer: true });
    });
  });
}

/** One HTTP/2 request over a cleartext connection; resolves with headers, body and trailers. */
function h2Request(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<{ headers: IncomingHttpHeaders; body: Buffer; trailers: IncomingHttpHeaders }> {
  const session = http2Connect(url);
  sessions.push(session);
  session.on('error', () => {});
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ...headers });
    let head: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (head = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ headers: head, body: Buffer.concat(chunks), trailers }));
    stream.on('error', reject);
    stream.end(body);
  });
}

describe('max_body_size', () => {
  it('answers 413 to a declared body over it without reading it, and forwards nothing', async () => {
    const receiver = recordingReceiver();
    const { url } = await serve(receiver, 'max_body_size = "1KiB"');
    const { text, closedByServer } = await exchange(url, 'POST /ingest?name=big HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/\r\nConnection: close\r\n/);
    expect(text.endsWith('\r\n\r\nrequest body is larger than 1024 bytes\n')).toBe(true);
    expect(closedByServer).toBe(true);
    expect(receiver.ingests).toHaveLength(0);
  });

  it('answers 413 to a chunked body as it grows past the limit', async () => {
    const receiver = recordingReceiver();
    const { url } = await serve(receiver, 'max_body_size = "1KiB"');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${url}/ingest?name=chunked`, { method: 'POST', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.write(Buffer.alloc(600, 1));
      setTimeout(() => req.end(Buffer.alloc(600, 2)), 20);
    });
    expect(status).toBe(413);
    expect(receiver.ingests).toHaveLength(0);
  });

  it('forwards a body of exactly the limit', async () => {
    const receiver = recordingReceiver();
    const { url } = await serve(receiver, 'max_body_size = "1KiB"');
    expect((await rawRequest(`${url}/ingest?name=exact`, { body: Buffer.alloc(1024, 3) })).status).toBe(200);
    expect(receiver.ingests[0]!.profile.body.byteLength).toBe(1024);
  });

  it('answers a Connect Push over it, or gzipped to inflate past it, with resource_exhausted and 413', async () => {
    const receiver = recordingReceiver();
    const { url } = await serve(receiver, 'max_body_size = "1KiB"');
    const big = await rawRequest(`${url}${PUSH}`, { headers: connect1, body: pushBody(Buffer.alloc(2048, 1)) });
    expect([big.status, big.body.toString()]).toEqual([413, '{"code":"resource_exhausted","message":"message is larger than 1024 bytes"}']);
    const bomb = gzipSync(pushBody(Buffer.alloc(4096, 0)));
    expect(bomb.length).toBeLessThan(1024);
    const inflated = await rawRequest(`${url}${PUSH}`, { headers: { ...connect1, 'content-encoding': 'gzip' }, body: bomb });
    expect([inflated.status, inflated.body.toString()]).toEqual([
      413,
      '{"code":"resource_exhausted","message":"decompressed message is larger than 1024 bytes"}',
    ]);
    expect(receiver.appends).toHaveLength(0);
  });

  it('holds over HTTP/2 too: 413 on /ingest and resource_exhausted on gRPC', async () => {
    const receiver = recordingReceiver();
    const { url } = await serve(receiver, 'max_body_size = "1KiB"', 'http2 { enabled = true }');
    const ingest = await h2Request(url, { ':path': '/ingest?name=h2' }, Buffer.alloc(2048, 1));
    expect([ingest.headers[':status'], ingest.body.toString()]).toEqual([413, 'request body is larger than 1024 bytes\n']);
    const grpc = await h2Request(
      url,
      { ':path': PUSH, 'content-type': 'application/grpc', te: 'trailers' },
      grpcFrame(pushBody(Buffer.alloc(2048, 1))),
    );
    expect(grpc.headers[':status']).toBe(200);
    expect([grpc.trailers['grpc-status'], decodeURIComponent(String(grpc.trailers['grpc-message']))]).toEqual([
      '8',
      'message is larger than 1024 bytes',
    ]);
    const small = await h2Request(url, { ':path': '/ingest?name=h2' }, Buffer.alloc(100, 1));
    expect(small.headers[':status']).toBe(200);
    expect(receiver.ingests).toHaveLength(1);
    expect(receiver.appends).toHaveLength(0);
  });

  it('is 16MiB by default, and a size it cannot read is named at its attribute', () => {
    const receiver = recordingReceiver();
    expect(profilesReceiveHttpComponent.fields!.max_body_size!.default).toBe('16MiB');
    expect(profilesReceiveHttpComponent.fields!.max_pending_size!.default).toBe('128MiB');
    const text = receiverConfig('', 1).replace('forward_to', 'max_body_size = "lots"\n  forward_to');
    let caught: unknown;
    try {
      profilesReceiveHttpComponent.build(componentArgs(text, [receiver]), testContext('profiles.receive_http.test'));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigErrors);
    expect((caught as ConfigErrors).errors.map((e) => e.message)).toEqual([
      'test.alloy:7:3: profiles.receive_http "test": attribute "max_body_size": units: invalid lots',
    ]);
  });
});

describe('max_pending_size', () => {
  it('answers 429 with Retry-After while the bodies being forwarded hold it, and takes requests again after', async () => {
    const receiver = recordingReceiver({ delayMs: 400 });
    const { url } = await serve(receiver, 'max_pending_size = "1KiB"');
    const first = rawRequest(`${url}/ingest?name=first`, { body: Buffer.alloc(800, 1) });
    for (let i = 0; i < 200 && receiver.ingests.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(receiver.ingests).toHaveLength(1);

    const refused = await rawRequest(`${url}/ingest?name=second`, { body: Buffer.alloc(800, 2) });
    expect([refused.status, refused.headers['retry-after'], refused.body.toString()]).toEqual([
      429,
      '1',
      'too many request bytes held at once, retry later\n',
    ]);
    const push = await rawRequest(`${url}${PUSH}`, { headers: connect1, body: pushBody(Buffer.alloc(800, 3)) });
    expect([push.status, push.headers['retry-after'], push.body.toString()]).toEqual([
      429,
      '1',
      '{"code":"resource_exhausted","message":"too many request bytes held at once, retry later"}',
    ]);
    expect(receiver.ingests).toHaveLength(1);
    expect(receiver.appends).toHaveLength(0);

    expect((await first).status).toBe(200);
    expect((await rawRequest(`${url}/ingest?name=third`, { body: Buffer.alloc(800, 4) })).status).toBe(200);
  });

  it('serves one body larger than it when nothing else is held', async () => {
    const receiver = recordingReceiver();
    const { url } = await serve(receiver, 'max_pending_size = "1KiB"');
    expect((await rawRequest(`${url}/ingest?name=alone`, { body: Buffer.alloc(4096, 1) })).status).toBe(200);
    expect((await rawRequest(`${url}/ingest?name=again`, { body: Buffer.alloc(4096, 1) })).status).toBe(200);
  });
});
