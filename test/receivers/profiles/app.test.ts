/**
 * The receiver's two lanes: the profile routes served directly and the same routes through Koa
 * and @koa/router. Every request below goes to one server of each kind, and the answers and what
 * the receivers got must be the same, byte for byte where it matters.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { deadlineOf } from '../../../core/deadline.js';
import { DeadlineExceededError } from '../../../lib/go/context-errors.js';
import { RemoteStatusError } from '../../../lib/pyroscope/remote-status-error.js';
import { labelsToObject } from '../../../lib/pyroscope/labels.js';
import type { ProfilesReceiver } from '../../../core/profiles.js';
import { PushRequestSchema } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { resolveHttpConfig } from '../../../receivers/http/schema.js';
import { startHttpServer, type RunningHttpServer } from '../../../receivers/http/server.js';
import { createProfilesHandler } from '../../../receivers/profiles/app.js';
import { grpcFrame, rawRequest, recordingReceiver, type RawResponse, type RecordingReceiver } from './harness.js';

/** What the next calls of every receiver do: succeed, or fail with this error. */
let failWith: (() => Error) | undefined;

interface Lane {
  readonly server: RunningHttpServer;
  readonly receivers: RecordingReceiver[];
  readonly logs: string[];
}

async function startLane(directLane: boolean): Promise<Lane> {
  const receivers = [recordingReceiver({ fail: () => failWith?.() }), recordingReceiver()];
  const logs: string[] = [];
  const handler = createProfilesHandler({
    receivers: () => receivers as ProfilesReceiver[],
    log: (level, message) => logs.push(`${level} ${message}`),
    directLane,
  });
  const config = resolveHttpConfig({ listen_address: '127.0.0.1', listen_port: 0 }, { listenPort: 0, connLimit: 0 });
  return { server: await startHttpServer(config, handler), receivers, logs };
}

let direct: Lane;
let viaKoa: Lane;
beforeAll(async () => {
  [direct, viaKoa] = await Promise.all([startLane(true), startLane(false)]);
});
afterAll(async () => {
  await Promise.all([direct.server.close(0), viaKoa.server.close(0)]);
});

/** The parts of an answer both lanes must agree on (Koa and Node order headers differently). */
function essentials(res: RawResponse) {
  return {
    status: res.status,
    contentType: res.headers['content-type'],
    nosniff: res.headers['x-content-type-options'],
    length: res.headers['content-length'],
    allow: res.headers.allow,
    body: res.body.toString(),
  };
}

/** Sends the same request to both lanes and expects the same answer, which it returns. */
async function both(path: string, options: Parameters<typeof rawRequest>[1] = {}) {
  const a = await rawRequest(`${direct.server.url}${path}`, options);
  const b = await rawRequest(`${viaKoa.server.url}${path}`, options);
  expect(essentials(a)).toEqual(essentials(b));
  return essentials(a);
}

const pprof = Buffer.from('not parsed by the receiver');
const pushBody = Buffer.from(
  toBinary(
    PushRequestSchema,
    create(PushRequestSchema, {
      series: [
        {
          labels: [
            { name: '__name__', value: 'app' },
            { name: 'env', value: 'prod' },
          ],
          samples: [{ ID: 's1', rawProfile: pprof }],
        },
      ],
    }),
  ),
);
const connect = { 'content-type': 'application/proto', 'connect-protocol-version': '1' };

describe('direct lane and Koa lane', () => {
  it('forward an ingest profile alike and answer 200 with no body', async () => {
    failWith = undefined;
    const answer = await both('/ingest?name=app%7Benv%3Dprod%7D&from=1', {
      headers: { 'content-type': ['application/octet-stream', 'binary/octet-stream'] },
      body: pprof,
    });
    expect(answer).toEqual({ status: 200, contentType: undefined, nosniff: undefined, length: '0', body: '' });
    for (const lane of [direct, viaKoa]) {
      for (const receiver of lane.receivers) {
        const { profile, labels } = receiver.ingests.at(-1)!;
        expect(labels).toEqual({ __name__: 'app', env: 'prod', service_name: 'app' });
        expect(profile.contentType).toEqual(['application/octet-stream', 'binary/octet-stream']);
        expect(profile.path).toBe('/ingest');
        expect(profile.rawQuery).toBe('name=app%7Benv%3Dprod%7D&from=1');
        expect(Buffer.from(profile.body).equals(pprof)).toBe(true);
      }
    }
  });

  it('answer a downstream status on ingest with its reason phrase', async () => {
    failWith = () => new RemoteStatusError(429, 'slow down');
    expect(await both('/ingest?name=app', { body: pprof })).toEqual({
      status: 429,
      contentType: 'text/plain; charset=utf-8',
      nosniff: 'nosniff',
      length: '18',
      body: 'Too Many Requests\n',
    });
  });

  it('answer a downstream 2xx or 3xx on ingest with its reason phrase, and a 204 with no body', async () => {
    for (const [code, text] of [
      [202, 'Accepted'],
      [302, 'Found'],
      [307, 'Temporary Redirect'],
      [308, 'Permanent Redirect'],
    ] as const) {
      failWith = () => new RemoteStatusError(code, 'from downstream');
      expect(await both('/ingest?name=app', { body: pprof })).toStrictEqual({
        status: code,
        contentType: 'text/plain; charset=utf-8',
        nosniff: 'nosniff',
        length: String(text.length + 1),
        allow: undefined,
        body: `${text}\n`,
      });
    }
    failWith = () => new RemoteStatusError(204, '');
    expect(await both('/ingest?name=app', { body: pprof })).toStrictEqual({
      status: 204,
      contentType: 'text/plain; charset=utf-8',
      nosniff: 'nosniff',
      length: undefined,
      allow: undefined,
      body: '',
    });
  });

  it('answer any other ingest failure with 500 Failed to process request', async () => {
    failWith = () => new Error('disk full');
    expect(await both('/ingest', { body: pprof })).toMatchObject({ status: 500, body: 'Failed to process request\n' });
  });

  it('forward a Connect Push alike', async () => {
    failWith = undefined;
    expect(await both('/push.v1.PusherService/Push', { headers: connect, body: pushBody })).toEqual({
      status: 200,
      contentType: 'application/proto',
      nosniff: undefined,
      length: '0',
      body: '',
    });
    for (const lane of [direct, viaKoa]) {
      const appended = lane.receivers[1]!.appends.at(-1)!;
      expect(labelsToObject(appended.series.labels)).toEqual({ __name__: 'app', env: 'prod', service_name: 'app' });
      expect(appended.series.samples.map((s) => [s.id, Buffer.from(s.rawProfile).toString()])).toEqual([['s1', pprof.toString()]]);
    }
  });

  it('answer a failing Push with internal and one line per failed append', async () => {
    failWith = () => new Error('boom');
    const answer = await both('/push.v1.PusherService/Push', { headers: connect, body: pushBody });
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toEqual({
      code: 'internal',
      message: 'unable to append series {__name__="app", env="prod"} to appendable 0: boom',
    });
  });

  it('answer garbage protobuf, other paths and other methods alike', async () => {
    failWith = undefined;
    expect((await both('/push.v1.PusherService/Push', { headers: connect, body: Buffer.from([0xff, 0xff]) })).status).toBe(400);
    expect(await both('/push.v1.PusherService/Other', { headers: connect, body: pushBody })).toMatchObject({
      status: 404,
      body: '404 page not found\n',
    });
    expect(await both('/ingest/', { body: pprof })).toMatchObject({ status: 404, body: '404 page not found\n' });
    expect(await both('/Ingest', { body: pprof })).toMatchObject({ status: 404, body: '404 page not found\n' });
    expect(await both('/ingest', { method: 'GET' })).toMatchObject({ status: 405, body: '' });
    expect(await both('/push.v1.PusherService/Push', { method: 'PUT', body: pushBody })).toMatchObject({ status: 405, body: '' });
  });

  it('answer OPTIONS and HEAD on a mounted path 405 with no body and no Allow header, as the POST-only mux route does', async () => {
    failWith = undefined;
    // The mux route restricted to POST answers before connect-go could (its own 405 would carry Allow: POST).
    const bare = { status: 405, contentType: undefined, nosniff: undefined, length: '0', allow: undefined, body: '' };
    expect(await both('/ingest', { method: 'OPTIONS' })).toStrictEqual(bare);
    expect(
      await both('/ingest?name=app', { method: 'OPTIONS', headers: { origin: 'http://x', 'access-control-request-method': 'POST' } }),
    ).toStrictEqual(bare);
    expect(await both('/push.v1.PusherService/Push', { method: 'OPTIONS', headers: connect })).toStrictEqual(bare);
    expect(await both('/push.v1.PusherService/Other', { method: 'OPTIONS' })).toStrictEqual(bare);
    expect(await both('/ingest', { method: 'HEAD' })).toStrictEqual(bare);
    expect(await both('/push.v1.PusherService/Push', { method: 'DELETE' })).toStrictEqual(bare);
  });

  it('redirect a path that is not in canonical form to its cleaned form with 301, query kept, as gorilla/mux does', async () => {
    failWith = undefined;
    const moved = async (path: string) => {
      const a = await rawRequest(direct.server.url, { path, body: pprof });
      const b = await rawRequest(viaKoa.server.url, { path, body: pprof });
      expect([b.status, b.headers.location, b.headers['content-length'], b.body.toString()]).toEqual([
        a.status,
        a.headers.location,
        a.headers['content-length'],
        a.body.toString(),
      ]);
      expect(a.headers['content-type']).toBeUndefined();
      return [a.status, a.headers.location, a.headers['content-length'], a.body.toString()];
    };
    const ingests = direct.receivers[1]!.ingests.length;
    expect(await moved('//ingest?name=app')).toEqual([301, '/ingest?name=app', '0', '']);
    expect(await moved('/x/../ingest')).toEqual([301, '/ingest', '0', '']);
    expect(await moved('/ingest/.')).toEqual([301, '/ingest', '0', '']);
    expect(await moved('/ingest/./')).toEqual([301, '/ingest/', '0', '']);
    expect(await moved('/%2F/push.v1.PusherService/Push')).toEqual([301, '/push.v1.PusherService/Push', '0', '']);
    // Cleaned from the decoded path and escaped again the Go way: `!` and a raw byte as %XX.
    expect(await moved('//a!%ff/b?')).toEqual([301, '/a%21%FF/b?', '0', '']);
    expect(direct.receivers[1]!.ingests.length).toBe(ingests);
  });

  it('route by the decoded path: an escaped /ingest or Push is served, a broken escape is the bare 400 of the server', async () => {
    failWith = undefined;
    const ingest = await rawRequest(direct.server.url, { path: '/%69ngest?name=esc', body: pprof });
    expect([ingest.status, ingest.body.toString()]).toEqual([200, '']);
    const received = direct.receivers[0]!.ingests.at(-1)!;
    expect([received.labels.__name__, received.profile.path, received.profile.rawQuery]).toEqual(['esc', '/ingest', 'name=esc']);
    const push = await rawRequest(direct.server.url, { path: '/push.v1.PusherService/%50ush', headers: connect, body: pushBody });
    expect(push.status).toBe(200);
    const escapedQuestionMark = await rawRequest(direct.server.url, { path: '/ingest%3Fname=x', body: pprof });
    expect([escapedQuestionMark.status, escapedQuestionMark.body.toString()]).toEqual([404, '404 page not found\n']);
    const wrongMethod = await rawRequest(direct.server.url, { path: '/%69ngest', method: 'GET' });
    expect([wrongMethod.status, wrongMethod.body.toString()]).toEqual([405, '']);
    for (const path of ['/ingest%zz', '/ingest%', '/%6']) {
      const broken = await rawRequest(direct.server.url, { path, body: pprof });
      expect([broken.status, broken.headers['content-type'], broken.headers.connection, broken.body.toString()]).toEqual([
        400,
        'text/plain; charset=utf-8',
        'close',
        '400 Bad Request',
      ]);
    }
  });

  it('answer OPTIONS on an unknown path 404 page not found', async () => {
    expect(await both('/', { method: 'OPTIONS' })).toStrictEqual({
      status: 404,
      contentType: 'text/plain; charset=utf-8',
      nosniff: 'nosniff',
      length: '19',
      allow: undefined,
      body: '404 page not found\n',
    });
  });

  it('log the same lines', () => {
    expect(direct.logs).toEqual(viaKoa.logs);
    expect(direct.logs).toContain('warn Failed to ingest profiles');
  });
});

describe('call deadlines on the component clock', () => {
  const startMs = Date.UTC(2030, 0, 1);
  it.each([
    ['Connect', { 'content-type': 'application/proto', 'connect-protocol-version': '1', 'connect-timeout-ms': '2000' }, pushBody],
    ['gRPC', { 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '2S' }, grpcFrame(pushBody)],
  ] as const)(
    "%s: the timeout counts from the clock's time at arrival and ends the receivers' call when the clock passes it",
    async (_protocol, headers, body) => {
      const clock = new ManualClock(BigInt(startMs) * 1_000_000n);
      const calls: AbortSignal[] = [];
      const waiting: ProfilesReceiver = {
        append: (_series, signal) => {
          calls.push(signal);
          return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        },
        appendIngest: async () => {},
      };
      const handler = createProfilesHandler({ receivers: () => [waiting], log: () => {}, clock });
      const config = resolveHttpConfig({ listen_address: '127.0.0.1', listen_port: 0 }, { listenPort: 0, connLimit: 0 });
      const server = await startHttpServer(config, handler);
      try {
        const answer = rawRequest(`${server.url}/push.v1.PusherService/Push`, { headers: { ...headers }, body });
        await vi.waitFor(() => expect(calls).toHaveLength(1));
        const signal = calls[0]!;
        expect(deadlineOf(signal)).toBe(startMs + 2_000);
        clock.advanceBy(1_999);
        expect(signal.aborted).toBe(false);
        clock.advanceBy(1);
        expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
        const res = await answer;
        const failure = 'unable to append series {__name__="app", env="prod"} to appendable 0: context deadline exceeded';
        if (res.trailers['grpc-status'] === undefined) {
          expect(res.status).toBe(500);
          expect(JSON.parse(res.body.toString())).toEqual({ code: 'internal', message: failure });
        } else {
          expect(res.trailers['grpc-status']).toBe('13');
          expect(decodeURIComponent(res.trailers['grpc-message']!)).toBe(failure);
        }
      } finally {
        await server.close(0);
      }
    },
  );
});
