import { connect, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushRequestSchema } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import {
  grpcFrame,
  rawRequest,
  receiverConfig,
  recordingReceiver,
  startReceiveHttp,
  type RecordingReceiver,
  type StartedReceiver,
} from './harness.js';

let receiver: RecordingReceiver;
let server: StartedReceiver;
let port: number;

beforeAll(async () => {
  receiver = recordingReceiver({ delayMs: 0 });
  server = await startReceiveHttp([receiver], { http: 'server_read_timeout = "300ms"\nserver_write_timeout = "600ms"' });
  port = Number(new URL(server.url).port);
});
afterAll(() => server.stop());

const PUSH = '/push.v1.PusherService/Push';
const validPush = toBinary(
  PushRequestSchema,
  create(PushRequestSchema, {
    series: [{ labels: [{ name: 'app', value: 'a' }], samples: [{ ID: 'x', rawProfile: Buffer.alloc(64, 1) }] }],
  }),
);

async function stillServes(): Promise<void> {
  const before = receiver.ingests.length;
  const res = await rawRequest(`${server.url}/ingest?name=after`, { body: 'ok' });
  expect(res.status).toBe(200);
  expect(receiver.ingests.length).toBe(before + 1);
}

function untouched<T>(fn: () => Promise<T>): Promise<T> {
  const counts = [receiver.ingests.length, receiver.appends.length];
  return fn().then((value) => {
    expect([receiver.ingests.length, receiver.appends.length]).toEqual(counts);
    return value;
  });
}

/** Writes raw bytes on a fresh connection and collects everything until the server closes it. */
function rawExchange(
  chunks: Array<string | Buffer | { waitMs: number }>,
  endAfter = true,
): Promise<{ text: string; closedBy: 'server' | 'timeout' }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let text = '';
    const guard = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedBy: 'timeout' });
    }, 3_000);
    socket.on('data', (c) => (text += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(guard);
      resolve({ text, closedBy: 'server' });
    });
    socket.once('connect', async () => {
      try {
        for (const chunk of chunks) {
          if (typeof chunk === 'object' && 'waitMs' in chunk) await new Promise((r) => setTimeout(r, chunk.waitMs));
          else socket.write(chunk);
        }
        if (endAfter) socket.end();
      } catch (err) {
        reject(err);
      }
    });
  });
}

const connect1 = { 'content-type': 'application/proto', 'connect-protocol-version': '1' };

describe('bad input', () => {
  it('answers undecodable protobuf with invalid_argument', async () => {
    const res = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: connect1, body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]) }),
    );
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body.toString())).toEqual({ code: 'invalid_argument', message: 'unmarshal message: premature EOF' });
    await stillServes();
  });

  it('answers a truncated protobuf message with invalid_argument', async () => {
    const res = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: connect1, body: validPush.subarray(0, validPush.length - 10) }),
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).code).toBe('invalid_argument');
  });

  it('answers truncated JSON with invalid_argument', async () => {
    const res = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: { 'content-type': 'application/json' }, body: '{"series":[{"labels":' }),
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).message).toMatch(/^unmarshal message: /);
  });

  it('answers undecodable gRPC and gRPC-Web messages with status 3 (invalid_argument)', async () => {
    const garbage = grpcFrame(Buffer.from([0x0a, 0xff, 0xff]));
    const grpc = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: { 'content-type': 'application/grpc', te: 'trailers' }, body: garbage }),
    );
    expect(grpc.status).toBe(200);
    expect(grpc.trailers['grpc-status'] ?? grpc.headers['grpc-status']).toBe('3');
    const web = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: { 'content-type': 'application/grpc-web+proto' }, body: garbage }),
    );
    expect(web.status).toBe(200);
    expect(web.headers['grpc-status'] ?? web.body.toString('latin1')).toMatch(/3/);
    expect(web.body.toString('latin1')).toContain('grpc-status: 3');
  });

  it('rejects a Connect protocol version other than 1 like the reference', async () => {
    const res = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: { ...connect1, 'connect-protocol-version': '2' }, body: validPush }),
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString())).toEqual({ code: 'invalid_argument', message: 'Connect-Protocol-Version must be "1": got "2"' });
  });

  it('rejects a malformed Connect-Timeout-Ms and an unknown encoding', async () => {
    const timeout = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: { ...connect1, 'connect-timeout-ms': 'abc' }, body: validPush }),
    );
    expect(timeout.status).toBe(400);
    expect(JSON.parse(timeout.body.toString()).code).toBe('invalid_argument');
    const encoding = await untouched(() =>
      rawRequest(`${server.url}${PUSH}`, { headers: { ...connect1, 'content-encoding': 'br' }, body: validPush }),
    );
    expect(encoding.status).toBe(501);
    expect(JSON.parse(encoding.body.toString()).code).toBe('unimplemented');
  });

  it('answers a wrong or missing content type with 415', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, {}]) {
      const res = await untouched(() => rawRequest(`${server.url}${PUSH}`, { headers, body: validPush }));
      expect(res.status).toBe(415);
    }
  });

  it('answers a wrong method with 405 and an empty body on both endpoints', async () => {
    for (const [method, path] of [
      ['GET', '/ingest'],
      ['PUT', '/ingest'],
      ['GET', PUSH],
      ['DELETE', PUSH],
    ] as const) {
      const res = await untouched(() => rawRequest(`${server.url}${path}`, { method }));
      expect([method, path, res.status, res.body.length]).toEqual([method, path, 405, 0]);
    }
  });

  it('accepts a Push over the default max_body_size once the limit is lifted', async () => {
    // On servers with the default read timeout: the short one above bounds the whole upload.
    const roomy = recordingReceiver();
    const limited = await startReceiveHttp([roomy]);
    const unlimited = await startReceiveHttp([roomy], {
      config: receiverConfig('', 1).replace('forward_to', 'max_body_size = "0"\n  forward_to'),
    });
    try {
      const big = toBinary(
        PushRequestSchema,
        create(PushRequestSchema, {
          series: [{ labels: [{ name: 'app', value: 'big' }], samples: [{ rawProfile: Buffer.alloc(24 << 20, 7) }] }],
        }),
      );
      const refused = await rawRequest(`${limited.url}${PUSH}`, { headers: connect1, body: big });
      expect([refused.status, refused.body.toString()]).toEqual([
        413,
        '{"code":"resource_exhausted","message":"message is larger than 16777216 bytes"}',
      ]);
      expect(roomy.appends).toHaveLength(0);
      const res = await rawRequest(`${unlimited.url}${PUSH}`, { headers: connect1, body: big });
      expect(res.status).toBe(200);
      expect(roomy.appends[0]!.series.samples[0]!.rawProfile.byteLength).toBe(24 << 20);
    } finally {
      await Promise.all([limited.stop(), unlimited.stop()]);
    }
  });

  it('answers headers too large for the server with 431', async () => {
    const res = await rawRequest(`${server.url}/ingest?name=x`, { headers: { 'x-huge': 'a'.repeat(1_100_000) }, body: 'x' });
    expect(res.status).toBe(431);
    await stillServes();
  });

  it('answers a malformed request with 400 and stays up', async () => {
    const { text } = await rawExchange(['NOT-HTTP\r\n\r\n']);
    expect(text).toBe('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request');
    await stillServes();
  });

  it('forwards nothing when a body is cut short by the client going away', async () => {
    await untouched(() => rawExchange([`POST /ingest?name=cut HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n`, 'only part of it']));
    await untouched(() =>
      rawExchange([
        `POST ${PUSH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/proto\r\nContent-Length: 1000\r\n\r\n`,
        Buffer.from(validPush.subarray(0, 20)),
      ]),
    );
    await stillServes();
  });

  it('answers a body slower than the read timeout with 500 on /ingest and unknown on Push', async () => {
    const ingest = await untouched(() =>
      rawExchange(
        [`POST /ingest?name=slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n`, 'a little', { waitMs: 500 }, 'more'],
        false,
      ),
    );
    expect(ingest.text).toMatch(/^HTTP\/1\.1 500 Internal Server Error\r\n/);
    expect(ingest.text).toMatch(/\r\nContent-Length: 0\r\n/i);
    expect(ingest.text).toMatch(/\r\nConnection: close\r\n/i);
    expect(ingest.closedBy).toBe('server');
    const push = await untouched(() =>
      rawExchange(
        [
          `POST ${PUSH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/proto\r\nContent-Length: 1000\r\n\r\n`,
          Buffer.from(validPush.subarray(0, 20)),
          { waitMs: 500 },
        ],
        false,
      ),
    );
    expect(push.text).toMatch(/^HTTP\/1\.1 500 /);
    expect(push.text).toContain('{"code":"unknown","message":"read message: i/o timeout"}');
    expect(push.closedBy).toBe('server');
    await stillServes();
  });

  it('drops a client that is too slow to send its headers, without an answer', async () => {
    const { text, closedBy } = await untouched(() => rawExchange(['POST /ingest HTTP/1.1\r\nHost: x\r\n', { waitMs: 800 }], false));
    expect(closedBy).toBe('server');
    expect(text).toBe('');
    await stillServes();
  });

  it('drops the connection when answering takes longer than the write timeout', async () => {
    const slow = recordingReceiver({ delayMs: 1_000 });
    const other = await startReceiveHttp([slow], { http: 'server_write_timeout = "200ms"' });
    try {
      await expect(rawRequest(`${other.url}/ingest?name=slow`, { body: 'x' })).rejects.toThrow(/socket hang up|ECONNRESET/);
    } finally {
      await other.stop();
    }
  });
});
