import { gunzipSync } from 'node:zlib';
import { createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { Profile } from 'pprof-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PusherService } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { pprofBytes, recordingReceiver, startReceiveHttp, type RecordingReceiver, type StartedReceiver } from './harness.js';

let receiver: RecordingReceiver;
let server: StartedReceiver;

beforeAll(async () => {
  receiver = recordingReceiver();
  // h2c needs the http2 block, as in the reference.
  server = await startReceiveHttp([receiver], { http: 'http2 {\n  enabled = true\n}' });
});
afterAll(() => server.stop());

const transports: Array<[string, () => Transport]> = [
  [
    'Connect with binary proto over HTTP/1.1',
    () => createConnectTransport({ baseUrl: server.url, httpVersion: '1.1', useBinaryFormat: true }),
  ],
  ['Connect with JSON over HTTP/1.1', () => createConnectTransport({ baseUrl: server.url, httpVersion: '1.1', useBinaryFormat: false })],
  ['Connect over h2c', () => createConnectTransport({ baseUrl: server.url, httpVersion: '2' })],
  ['gRPC over h2c', () => createGrpcTransport({ baseUrl: server.url })],
  ['gRPC-Web over HTTP/1.1', () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: '1.1' })],
];

describe('Connect clients pushing to profiles.receive_http', () => {
  for (const [name, transport] of transports) {
    it(`delivers a decodable pprof sent with ${name}`, async () => {
      const client = createClient(PusherService, transport());
      const profile = pprofBytes(5);
      await client.push(
        {
          series: [
            {
              labels: [
                { name: '__name__', value: 'process_cpu' },
                { name: 'service_name', value: name },
              ],
              samples: [{ ID: 'uuid-1', rawProfile: profile }],
            },
          ],
        },
        { timeoutMs: 5_000 },
      );
      const got = receiver.appends.find((a) => a.labels.service_name === name)!;
      expect(got.labels).toEqual({ __name__: 'process_cpu', app_name: 'process_cpu', service_name: name });
      expect(got.deadline).toBeDefined();
      const raw = got.series.samples[0]!.rawProfile;
      expect(Buffer.from(raw).equals(profile)).toBe(true);
      const decoded = Profile.decode(gunzipSync(raw));
      expect(decoded.sample).toHaveLength(5);
      expect(decoded.sample.map((s) => Number(s.value[0]))).toEqual([1000, 2000, 3000, 4000, 5000]);
    });
  }

  it('reports forwarding failures to the client as internal errors', async () => {
    const failing = recordingReceiver({ fail: () => new Error('disk full') });
    const other = await startReceiveHttp([failing]);
    try {
      const client = createClient(PusherService, createGrpcWebTransport({ baseUrl: other.url, httpVersion: '1.1' }));
      await expect(client.push({ series: [{ labels: [{ name: 'app', value: 'x' }] }] })).rejects.toThrow(
        '[internal] unable to append series {app="x"} to appendable 0: disk full',
      );
    } finally {
      await other.stop();
    }
  });
});
