import { gzipSync } from 'node:zlib';
import { create, toBinary } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { PushRequestSchema } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { forwardPush } from '../../../receivers/profiles/push.js';
import { PUSH_SLICE_OBJECTS } from '../../../receivers/profiles/push-objects.js';
import { grpcFrame, rawRequest, recordingReceiver, startReceiveHttp, type RecordingReceiver, type StartedReceiver } from './harness.js';

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

type Pairs = Array<[string, string]>;

function encoded(series: Array<{ labels: Pairs; samples?: Array<[string, string]> }>): Uint8Array {
  return toBinary(
    PushRequestSchema,
    create(PushRequestSchema, {
      series: series.map((s) => ({
        labels: s.labels.map(([name, value]) => ({ name, value })),
        samples: (s.samples ?? []).map(([ID, bytes]) => ({ ID, rawProfile: Buffer.from(bytes) })),
        annotations: [{ key: 'note', value: 'dropped' }],
      })),
    }),
  );
}

const connectProto = { 'content-type': 'application/proto', 'connect-protocol-version': '1' };
const push = (url: string, body: Uint8Array | string, headers: Record<string, string> = connectProto) =>
  rawRequest(`${url}/push.v1.PusherService/Push`, { headers, body });

describe('POST /push.v1.PusherService/Push', () => {
  it('keeps the last value of a repeated label and drops empty-valued labels', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await push(
      url,
      encoded([
        {
          labels: [
            ['app', 'a'],
            ['env', ''],
            ['app', 'b'],
            ['zone', 'z'],
          ],
        },
      ]),
    );
    expect(res.status).toBe(200);
    expect(receivers[0]!.appends[0]!.labels).toEqual({ app: 'b', zone: 'z' });
  });

  it('applies the service-name rule', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    await push(
      url,
      encoded([
        { labels: [['__name__', 'process_cpu']] },
        {
          labels: [
            ['__name__', 'process_cpu'],
            ['service_name', 'svc'],
          ],
        },
        {
          labels: [
            ['service_name', 'svc'],
            ['app_name', 'stale'],
          ],
        },
      ]),
    );
    expect(receivers[0]!.appends.map((a) => a.labels)).toEqual([
      { __name__: 'process_cpu', service_name: 'process_cpu' },
      { __name__: 'process_cpu', app_name: 'process_cpu', service_name: 'svc' },
      { service_name: 'svc' },
    ]);
  });

  it('forwards samples with their ids and bytes and without annotations', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    await push(
      url,
      encoded([
        {
          labels: [['app', 'a']],
          samples: [
            ['', 'one'],
            ['id-2', 'two'],
          ],
        },
      ]),
    );
    const { series } = receivers[0]!.appends[0]!;
    expect(series.samples.map((s) => [s.id, Buffer.from(s.rawProfile).toString()])).toEqual([
      ['', 'one'],
      ['id-2', 'two'],
    ]);
    expect(Object.keys(series)).toEqual(['labels', 'samples']);
  });

  it('accepts an empty request and empty series', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    expect((await push(url, new Uint8Array(0))).status).toBe(200);
    expect((await push(url, encoded([{ labels: [] }]))).status).toBe(200);
    expect(receivers[0]!.appends.map((a) => a.labels)).toEqual([{}]);
  });

  it('reports every failing series, one line each, and still sends the series after a failure', async () => {
    let calls = 0;
    const flaky = recordingReceiver({ fail: () => (++calls % 2 === 1 ? new Error(`failure ${calls}`) : undefined) });
    const broken = recordingReceiver({ fail: () => new Error('down') });
    const { url } = await serve([flaky, broken]);
    const res = await push(
      url,
      encoded([
        { labels: [['app', 'a']] },
        { labels: [['app', 'b']] },
        {
          labels: [
            ['app', 'c'],
            ['otel.scope', 'x'],
          ],
        },
      ]),
    );
    expect(res.status).toBe(500);
    const lines = (JSON.parse(res.body.toString()) as { code: string; message: string }).message.split('\n').sort();
    expect(lines).toEqual([
      'unable to append series {app="a"} to appendable 0: failure 1',
      'unable to append series {app="a"} to appendable 1: down',
      'unable to append series {app="b"} to appendable 1: down',
      'unable to append series {app="c", "otel.scope"="x"} to appendable 0: failure 3',
      'unable to append series {app="c", "otel.scope"="x"} to appendable 1: down',
    ]);
    expect(flaky.appends).toHaveLength(3);
    expect(broken.appends).toHaveLength(3);
  });

  it('reads gzip-compressed requests', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const res = await push(url, gzipSync(encoded([{ labels: [['app', 'zipped']] }])), { ...connectProto, 'content-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(receivers[0]!.appends[0]!.labels).toEqual({ app: 'zipped' });
  });

  it('reads gzip-compressed gRPC-Web messages', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const body = grpcFrame(gzipSync(encoded([{ labels: [['app', 'web']] }])), 1);
    const res = await push(url, body, { 'content-type': 'application/grpc-web+proto', 'grpc-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(receivers[0]!.appends[0]!.labels).toEqual({ app: 'web' });
  });

  it('accepts JSON with proto field names, URL-safe base64 and unknown fields', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const body = JSON.stringify({
      series: [{ labels: [{ name: 'app', value: 'j' }], samples: [{ raw_profile: '-_8', ID: 'x' }] }],
      extra: true,
    });
    const res = await push(url, body, { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
    expect([...receivers[0]!.appends[0]!.series.samples[0]!.rawProfile]).toEqual([0xfb, 0xff]);
  });

  it('turns Connect-Timeout-Ms into the deadline the receivers work under', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const before = Date.now();
    await push(url, encoded([{ labels: [['app', 'a']] }]), { ...connectProto, 'connect-timeout-ms': '2500' });
    const deadline = receivers[0]!.appends[0]!.deadline!;
    expect(deadline).toBeGreaterThanOrEqual(before + 2500);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 2500);
  });

  it('turns grpc-timeout into the deadline too', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const before = Date.now();
    const res = await push(url, grpcFrame(encoded([{ labels: [['app', 'a']] }])), {
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': '3S',
    });
    expect(res.trailers['grpc-status']).toBe('0');
    const deadline = receivers[0]!.appends[0]!.deadline!;
    expect(deadline).toBeGreaterThanOrEqual(before + 3000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 3000);
  });

  it('has no deadline when the client sends none', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    await push(url, encoded([{ labels: [['app', 'a']] }]));
    expect(receivers[0]!.appends[0]!.deadline).toBeUndefined();
  });

  it('fails the call as internal, naming the passed deadline, when receivers outlast it', async () => {
    const slow: RecordingReceiver = {
      ...recordingReceiver(),
      append: (_series, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    };
    const { url } = await serve([slow]);
    const res = await push(url, encoded([{ labels: [['app', 'a']] }]), { ...connectProto, 'connect-timeout-ms': '100' });
    // The reference maps every forwarding failure to internal, a passed deadline included.
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body.toString())).toEqual({
      code: 'internal',
      message: 'unable to append series {app="a"} to appendable 0: context deadline exceeded',
    });
  });

  it('uses the forward_to list current at the time of each request', async () => {
    const first = recordingReceiver();
    const second = recordingReceiver();
    const started = await serve([first]);
    await push(started.url, encoded([{ labels: [['app', 'a']] }]));
    await started.update('', [second]);
    expect(started.component.url()).toBe(started.url);
    await push(started.url, encoded([{ labels: [['app', 'b']] }]));
    expect(first.appends.map((a) => a.labels.app)).toEqual(['a']);
    expect(second.appends.map((a) => a.labels.app)).toEqual(['b']);
  });
});

describe('forwardPush', () => {
  it('forwards a Push of many series in order to every receiver, the event loop free between slices', async () => {
    const series = 4 * PUSH_SLICE_OBJECTS + 1;
    const request = create(PushRequestSchema, {
      series: Array.from({ length: series }, (_, i) => ({ labels: [{ name: 'n', value: String(i) }] })),
    });
    const receivers = [recordingReceiver(), recordingReceiver()];
    // Receivers that answer at once: without slices every series would follow in microtasks.
    let turns = 0;
    let forwarded = false;
    const countTurns = () => {
      if (forwarded) return;
      turns++;
      setImmediate(countTurns);
    };
    setImmediate(countTurns);
    await forwardPush(request, receivers, new AbortController().signal);
    forwarded = true;
    expect(turns).toBeGreaterThanOrEqual(4);
    for (const receiver of receivers) {
      expect(receiver.appends.map((a) => a.labels.n)).toEqual(Array.from({ length: series }, (_, i) => String(i)));
    }
  });
});
