/**
 * The HTTP cases of the profiles conformance fixture, each over a real loopback server. The
 * in-process writer cases (APPEND, APPEND_INGEST, config-only) run in
 * test/sinks/profiles/conformance.test.ts; together the two files cover every case by name.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Agent, get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { create, toBinary, toJsonString } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { PushRequestSchema, type PushRequest } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import {
  freePort,
  grpcFrame,
  randomBytes,
  rawRequest,
  recordingReceiver,
  startReceiveHttp,
  type RecordingReceiver,
  type StartedReceiver,
} from './harness.js';

interface FixtureCase {
  name: string;
  request: { method: string; path: string; query: string; headers: Record<string, string | string[]> };
  forward_to_count: number;
  expected: { status: number | string };
}

const here = dirname(fileURLToPath(import.meta.url));
const cases = JSON.parse(readFileSync(join(here, '../../fixtures/conformance/profiles.json'), 'utf8')) as FixtureCase[];
const httpCases = cases.filter((c) => c.request.method === 'POST' || c.request.method === 'GET');

let running: StartedReceiver[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.stop()));
  running = [];
});

async function serve(receivers: RecordingReceiver[]) {
  const started = await startReceiveHttp(receivers);
  running.push(started);
  return started;
}

function pushRequest(series: Array<{ labels: Record<string, string>; samples?: number }>): PushRequest {
  return create(PushRequestSchema, {
    series: series.map((s, i) => ({
      labels: Object.entries(s.labels).map(([name, value]) => ({ name, value })),
      samples: Array.from({ length: s.samples ?? 0 }, (_, j) => ({
        ID: `request-id-${i}-${j}`,
        rawProfile: Buffer.alloc(1024, Buffer.from([0xde, 0xad])),
      })),
    })),
  });
}

const appEntry = { labels: { app: 'app-0' } };

function queryOf(raw: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(raw));
}

/** What every case does, by its fixture name. */
const run: Record<string, (c: FixtureCase) => Promise<void>> = {
  'ingest: small profile to two receivers': async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver()];
    const { url } = await serve(receivers);
    const body = randomBytes(1024);
    const res = await rawRequest(`${url}${c.request.path}?${c.request.query}`, { headers: c.request.headers, body });
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(0);
    for (const r of receivers) {
      expect(r.ingests).toHaveLength(1);
      const { profile, labels } = r.ingests[0]!;
      expect(Buffer.from(profile.body).equals(body)).toBe(true);
      expect(profile.contentType).toEqual(['application/octet-stream']);
      expect(profile.path).toBe('/ingest');
      expect(queryOf(profile.rawQuery)).toEqual({ name: 'test_app', from: '1234567890', until: '1234567900' });
      expect(labels).toEqual({ __name__: 'test_app', service_name: 'test_app' });
    }
  },

  'ingest: 1 MiB profile with three Content-Type header lines and a custom param': async (c) => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const body = randomBytes(1 << 20, 7);
    const res = await rawRequest(`${url}${c.request.path}?${c.request.query}`, { headers: c.request.headers, body });
    expect(res.status).toBe(200);
    const { profile, labels } = receivers[0]!.ingests[0]!;
    expect(Buffer.from(profile.body).equals(body)).toBe(true);
    expect(profile.contentType).toEqual(['my-content', 'is', 'multiple']);
    expect(queryOf(profile.rawQuery)).toEqual({ name: 'test_app', from: '1234567891', until: '1234567901', custom: 'param1' });
    expect(labels).toEqual({ __name__: 'test_app', service_name: 'test_app' });
  },

  'ingest: GET is not allowed': async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}?${c.request.query}`, { method: 'GET' });
    expect(res.status).toBe(405);
    expect(res.body.length).toBe(0);
    expect(receivers.map((r) => r.ingests.length)).toEqual([0, 0]);
  },

  'ingest: GET without name is still 405': async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}?${c.request.query}`, { method: 'GET' });
    expect(res.status).toBe(405);
    expect(receivers.map((r) => r.ingests.length)).toEqual([0, 0]);
  },

  'unknown path is 404': async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}?${c.request.query}`, { headers: c.request.headers, body: randomBytes(1024) });
    expect(res.status).toBe(404);
    expect(res.body.toString()).toBe('404 page not found\n');
    expect(receivers.map((r) => r.ingests.length)).toEqual([0, 0]);
  },

  'ingest: all receivers fail with plain errors': async (c) => {
    const receivers = [recordingReceiver({ fail: () => new Error('error1') }), recordingReceiver({ fail: () => new Error('error2') })];
    const { url } = await serve(receivers);
    const body = randomBytes(2048);
    const res = await rawRequest(`${url}${c.request.path}?${c.request.query}`, { headers: c.request.headers, body });
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body.toString()).toBe('Failed to process request\n');
    for (const r of receivers) {
      expect(r.ingests).toHaveLength(1);
      expect(Buffer.from(r.ingests[0]!.profile.body).equals(body)).toBe(true);
      expect(r.ingests[0]!.labels).toEqual({ __name__: 'test_app', service_name: 'test_app' });
    }
  },

  'ingest: partial failure is still a failure': async (c) => {
    const receivers = [recordingReceiver({ fail: () => new Error('boom') }), recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}?${c.request.query}`, { body: randomBytes(4096) });
    expect(res.status).toBe(500);
    for (const r of receivers) {
      expect(r.ingests).toHaveLength(1);
      expect(r.ingests[0]!.profile.contentType).toEqual([]);
      expect(r.ingests[0]!.labels).toEqual({ __name__: 'test_app', service_name: 'test_app' });
    }
  },

  'ingest: labels parsed from name': async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver()];
    const { url } = await serve(receivers);
    const query = new URLSearchParams(c.request.query).toString();
    const res = await rawRequest(`${url}${c.request.path}?${query}`, { headers: c.request.headers, body: randomBytes(1024) });
    expect(res.status).toBe(200);
    for (const r of receivers) {
      expect(r.ingests[0]!.labels).toEqual({ __name__: 'test.app', service_name: 'test.app', env: 'prod', region: 'us-east' });
      expect(r.ingests[0]!.profile.rawQuery).toBe(query);
    }
  },

  "ingest: brace segment without '=' is ignored, not an error": async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}?${new URLSearchParams(c.request.query)}`, {
      headers: c.request.headers,
      body: randomBytes(1024),
    });
    expect(res.status).toBe(200);
    for (const r of receivers) expect(r.ingests[0]!.labels).toEqual({ __name__: 'test.app', service_name: 'test.app' });
  },

  'ingest: existing service_name moves __name__ into app_name': async (c) => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}?${new URLSearchParams(c.request.query)}`, {
      headers: c.request.headers,
      body: randomBytes(1024),
    });
    expect(res.status).toBe(200);
    expect(receivers[0]!.ingests[0]!.labels).toEqual({ __name__: 'test.app', service_name: 'my-service', app_name: 'test.app' });
  },

  'push: connect proto, one series': async (c) => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}`, {
      headers: c.request.headers,
      body: toBinary(PushRequestSchema, pushRequest([appEntry])),
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/proto');
    expect(res.body.length).toBe(0);
    expect(receivers[0]!.appends.map((a) => a.labels)).toEqual([{ app: 'app-0' }]);
    expect(receivers[0]!.appends[0]!.series.samples).toEqual([]);
  },

  'push: connect JSON, one series': async (c) => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const body = '{"series":[{"labels":[{"name":"app","value":"app-0"}]}]}';
    expect(JSON.parse(toJsonString(PushRequestSchema, pushRequest([appEntry])))).toEqual(JSON.parse(body));
    const res = await rawRequest(`${url}${c.request.path}`, { headers: c.request.headers, body });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('{}');
    expect(receivers[0]!.appends.map((a) => a.labels)).toEqual([{ app: 'app-0' }]);
    expect(receivers[0]!.appends[0]!.series.samples).toEqual([]);
  },

  'push: gRPC': async (c) => {
    // gRPC over HTTP/1.1 with chunked trailers, as the reference's own test sends it.
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}`, {
      headers: { ...c.request.headers, te: 'trailers' },
      body: grpcFrame(toBinary(PushRequestSchema, pushRequest([appEntry]))),
    });
    expect(res.status).toBe(200);
    expect(res.trailers['grpc-status'] ?? res.headers['grpc-status']).toBe('0');
    expect(receivers[0]!.appends.map((a) => a.labels)).toEqual([{ app: 'app-0' }]);
    expect(receivers[0]!.appends[0]!.series.samples).toEqual([]);
  },

  'push: gRPC-Web': async (c) => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}`, {
      headers: c.request.headers,
      body: grpcFrame(toBinary(PushRequestSchema, pushRequest([appEntry]))),
    });
    expect(res.status).toBe(200);
    const trailer = lastGrpcWebFrame(res.body);
    expect(trailer.flags & 0x80).toBe(0x80);
    expect(trailer.text).toMatch(/^grpc-status: ?0\r\n/m);
    expect(receivers[0]!.appends.map((a) => a.labels)).toEqual([{ app: 'app-0' }]);
  },

  'push: two series keep order': async (c) => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}`, {
      headers: c.request.headers,
      body: toBinary(PushRequestSchema, pushRequest([appEntry, { labels: { app: 'app-1' } }])),
    });
    expect(res.status).toBe(200);
    expect(receivers[0]!.appends.map((a) => a.labels)).toEqual([{ app: 'app-0' }, { app: 'app-1' }]);
  },

  'push: one series two samples': async (c) => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}`, {
      headers: c.request.headers,
      body: toBinary(PushRequestSchema, pushRequest([{ ...appEntry, samples: 2 }])),
    });
    expect(res.status).toBe(200);
    expectTwoSamples(receivers[0]!);
  },

  'push: two receivers both get everything': async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}`, {
      headers: c.request.headers,
      body: toBinary(PushRequestSchema, pushRequest([{ ...appEntry, samples: 2 }])),
    });
    expect(res.status).toBe(200);
    for (const r of receivers) expectTwoSamples(r);
  },

  'push: one receiver fails': async (c) => {
    const receivers = [recordingReceiver(), recordingReceiver({ fail: () => new Error('wtf') })];
    const { url } = await serve(receivers);
    const res = await rawRequest(`${url}${c.request.path}`, {
      headers: c.request.headers,
      body: toBinary(PushRequestSchema, pushRequest([{ ...appEntry, samples: 2 }])),
    });
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body.toString())).toEqual({
      code: 'internal',
      message: 'unable to append series {app="app-0"} to appendable 1: wtf',
    });
    for (const r of receivers) expectTwoSamples(r);
  },

  'update: port change restarts, identical config does not': async () => {
    const receivers = [recordingReceiver()];
    const started = await serve(receivers);
    const first = started.component.url()!;
    expect((await rawRequest(`${first}/`, { method: 'GET' })).status).toBe(404);
    const port = await freePort();
    await started.update(`listen_port = ${port}`);
    const second = started.component.url()!;
    expect(second).toBe(`http://127.0.0.1:${port}`);
    expect((await rawRequest(`${second}/`, { method: 'GET' })).status).toBe(404);
    await expect(rawRequest(`${first}/`, { method: 'GET' })).rejects.toThrow(/ECONNREFUSED/);

    // The same http block again: no restart, so an open keep-alive connection keeps working.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const probe = () =>
      new Promise<{ status: number; socket: unknown }>((resolve, reject) => {
        const req = get(`${second}/`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, socket: req.socket }));
        });
        req.on('error', reject);
      });
    const before = await probe();
    await started.update(`listen_port = ${port}`);
    expect(started.component.url()).toBe(second);
    const after = await probe();
    expect(after.status).toBe(404);
    expect(after.socket).toBe(before.socket);
    agent.destroy();
  },
};

function expectTwoSamples(r: RecordingReceiver): void {
  expect(r.appends).toHaveLength(1);
  expect(r.appends[0]!.labels).toEqual({ app: 'app-0' });
  const samples = r.appends[0]!.series.samples;
  expect(samples.map((s) => s.id)).toEqual(['request-id-0-0', 'request-id-0-1']);
  for (const s of samples) expect(Buffer.from(s.rawProfile).equals(Buffer.alloc(1024, Buffer.from([0xde, 0xad])))).toBe(true);
}

function lastGrpcWebFrame(body: Buffer): { flags: number; text: string } {
  let offset = 0;
  let last = { flags: 0, text: '' };
  while (offset + 5 <= body.length) {
    const flags = body[offset]!;
    const length = body.readUInt32BE(offset + 1);
    last = { flags, text: body.subarray(offset + 5, offset + 5 + length).toString() };
    offset += 5 + length;
  }
  return last;
}

describe('profiles.receive_http conformance (HTTP cases)', () => {
  it('has an implementation for every HTTP case of the fixture', () => {
    expect(Object.keys(run).sort()).toEqual(httpCases.map((c) => c.name).sort());
  });

  for (const c of httpCases) {
    it(c.name, async () => {
      await run[c.name]!(c);
    });
  }
});
