/**
 * The bound on the objects one Push builds, in both encodings and both binary readers: the first
 * object past it is refused, having built no more; decoding yields between slices, over skipped
 * fields too; and through the receiver, a flood of empty series is answered 413
 * `resource_exhausted` on every protocol while another receiver keeps answering.
 */
import { gzipSync } from 'node:zlib';
import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { PushRequestSchema, type PushRequest } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { finishSteps } from '../../../lib/slices.js';
import { decodePushBinarySteps } from '../../../receivers/profiles/push-decode.js';
import { decodePushJsonSteps } from '../../../receivers/profiles/push-decode-json.js';
import { MAX_PUSH_OBJECTS, ObjectLimitError, PushObjects } from '../../../receivers/profiles/push-objects.js';
import { rawRequest, recordingReceiver, startReceiveHttp, type StartedReceiver } from './harness.js';

const PUSH = '/push.v1.PusherService/Push';
const LIMIT_MESSAGE = `message has more than ${MAX_PUSH_OBJECTS} objects (series, samples, labels and annotations)`;

function varint(value: number): Buffer {
  const out: number[] = [];
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
  return Buffer.from(out);
}

/** `series` empty series: two bytes each. */
function emptySeries(series: number): Buffer {
  return Buffer.alloc(series * 2, Buffer.from([0x0a, 0x00]));
}

/** One series of `labels` empty labels, and optionally a sample and an annotation. */
function oneSeries(labels: number, extra = Buffer.alloc(0)): Buffer {
  const body = Buffer.concat([Buffer.alloc(labels * 2, Buffer.from([0x0a, 0x00])), extra]);
  return Buffer.concat([Buffer.from([0x0a]), varint(body.length), body]);
}

/** An unknown varint field first: the common-form reader hands such bytes to the BinaryReader one. */
const UNKNOWN_FIRST = Buffer.from([0x28, 0x01]);

function emptyJsonSeries(series: number): Buffer {
  return Buffer.from(`{"series":[${Array(series).fill('{}').join(',')}]}`);
}

type Decoder = (bytes: Uint8Array, budget: PushObjects) => Generator<void, PushRequest, void>;

const decoders: ReadonlyArray<{ name: string; decode: Decoder; series: (n: number) => Buffer }> = [
  { name: 'binary, common form', decode: decodePushBinarySteps, series: emptySeries },
  { name: 'binary, any form', decode: decodePushBinarySteps, series: (n) => Buffer.concat([UNKNOWN_FIRST, emptySeries(n)]) },
  { name: 'JSON', decode: decodePushJsonSteps, series: emptyJsonSeries },
];

/** Runs a decode to its end, counting its yields. */
function drain(steps: Generator<void, PushRequest, void>): { request: PushRequest; yields: number } {
  let yields = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) return { request: step.value, yields };
    yields++;
  }
}

describe('the object bound of one Push', () => {
  for (const { name, decode, series } of decoders) {
    it(`${name}: decodes exactly the bound and refuses one object more`, () => {
      expect(drain(decode(series(1000), new PushObjects(1000))).request.series).toHaveLength(1000);
      const refused = () => drain(decode(series(1001), new PushObjects(1000)));
      expect(refused).toThrow(ObjectLimitError);
      expect(refused).toThrow('message has more than 1000 objects (series, samples, labels and annotations)');
    });

    it(`${name}: yields after every slice of objects`, () => {
      expect(drain(decode(series(10_000), new PushObjects(Number.POSITIVE_INFINITY, 1000))).yields).toBeGreaterThanOrEqual(10);
    });
  }

  it('counts labels, samples and annotations as objects, empty ones too', () => {
    // One series, 996 labels, one sample, one annotation: 999 objects; one label more is 1000.
    const extra = Buffer.from([0x12, 0x00, 0x1a, 0x00]);
    expect(drain(decodePushBinarySteps(oneSeries(996, extra), new PushObjects(999))).request.series[0]!.labels).toHaveLength(996);
    expect(() => drain(decodePushBinarySteps(oneSeries(997, extra), new PushObjects(999)))).toThrow(ObjectLimitError);
    const json = `{"series":[{"labels":[${Array(997).fill('{}').join(',')}],"samples":[{}],"annotations":[{}]}]}`;
    expect(() => drain(decodePushJsonSteps(Buffer.from(json), new PushObjects(999)))).toThrow(ObjectLimitError);
  });

  it('reports an error met before the bound, and the bound when it comes first, as fromBinary would meet them', () => {
    const broken = Buffer.concat([emptySeries(10), Buffer.from([0x0a, 0x05])]);
    expect(() => drain(decodePushBinarySteps(broken, new PushObjects(1000)))).toThrow('premature EOF');
    expect(() => drain(decodePushBinarySteps(broken, new PushObjects(5)))).toThrow(ObjectLimitError);
  });

  it('yields through 200000 unknown fields of one message, in either encoding', () => {
    const unknown = Buffer.alloc(400_000, Buffer.from([0x28, 0x00]));
    const binary = Buffer.concat([Buffer.from([0x0a]), varint(unknown.length), unknown]);
    const fromBinaryRead = drain(decodePushBinarySteps(binary, new PushObjects()));
    expect(fromBinaryRead.yields).toBeGreaterThanOrEqual(190);
    expect(equals(PushRequestSchema, fromBinaryRead.request, fromBinary(PushRequestSchema, binary))).toBe(true);
    const keys = Array.from({ length: 200_000 }, (_, i) => `"k${i}":0`).join(',');
    const json = drain(decodePushJsonSteps(Buffer.from(`{"series":[{${keys}}]}`), new PushObjects()));
    expect(json.yields).toBeGreaterThanOrEqual(190);
    expect(json.request.series).toHaveLength(1);
  });

  it('steps through a group of a million unknown fields a slice at a time, as fromBinary skips it', () => {
    const group = Buffer.concat([Buffer.from([0x2b]), Buffer.alloc(2_000_000, Buffer.from([0x08, 0x00])), Buffer.from([0x2c])]);
    const bytes = Buffer.concat([group, emptySeries(1)]);
    const { request, yields } = drain(decodePushBinarySteps(bytes, new PushObjects()));
    expect(yields).toBeGreaterThanOrEqual(900);
    expect(equals(PushRequestSchema, request, fromBinary(PushRequestSchema, bytes))).toBe(true);
    // A group that never ends fails as fromBinary fails.
    const unended = group.subarray(0, group.length - 1);
    expect(() => finishSteps(decodePushBinarySteps(unended, new PushObjects()))).toThrow('premature EOF');
    expect(() => fromBinary(PushRequestSchema, unended)).toThrow('premature EOF');
  });
});

describe('profiles.receive_http under a Push of more objects than the bound', () => {
  let running: StartedReceiver[] = [];
  afterEach(async () => {
    await Promise.all(running.map((r) => r.stop()));
    running = [];
  });

  async function serve() {
    const receiver = recordingReceiver();
    const started = await startReceiveHttp([receiver]);
    running.push(started);
    return { receiver, url: started.url };
  }

  const over = MAX_PUSH_OBJECTS + 1;
  const floods = [
    { name: 'Connect proto', headers: { 'content-type': 'application/proto' }, body: () => emptySeries(over) },
    { name: 'Connect JSON', headers: { 'content-type': 'application/json' }, body: () => emptyJsonSeries(over) },
    {
      name: 'Connect proto, gzipped',
      headers: { 'content-type': 'application/proto', 'content-encoding': 'gzip' },
      body: () => gzipSync(emptySeries(over)),
    },
    {
      name: 'Connect JSON, gzipped',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: () => gzipSync(emptyJsonSeries(over)),
    },
  ];

  for (const flood of floods) {
    it(`answers ${flood.name} 413 resource_exhausted and forwards nothing`, async () => {
      const { receiver, url } = await serve();
      const res = await rawRequest(`${url}${PUSH}`, { headers: flood.headers, body: flood.body() });
      expect([res.status, res.body.toString()]).toEqual([413, JSON.stringify({ code: 'resource_exhausted', message: LIMIT_MESSAGE })]);
      expect(receiver.appends).toHaveLength(0);
    });
  }

  it('answers gRPC-Web resource_exhausted in its trailers', async () => {
    const { receiver, url } = await serve();
    const message = emptySeries(over);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message]);
    frame.writeUInt32BE(message.length, 1);
    const res = await rawRequest(`${url}${PUSH}`, { headers: { 'content-type': 'application/grpc-web+proto' }, body: frame });
    expect(res.status).toBe(200);
    const trailers = res.body.subarray(5).toString();
    expect(trailers).toContain('grpc-status: 8');
    expect(decodeURIComponent(/grpc-message: (.*)\r\n/.exec(trailers)?.[1] ?? '')).toBe(LIMIT_MESSAGE);
    expect(receiver.appends).toHaveLength(0);
  });

  it('forwards a Push of exactly the bound', async () => {
    const { receiver, url } = await serve();
    const request = create(PushRequestSchema, {
      series: [{ labels: [{ name: 'app', value: 'a' }], annotations: Array.from({ length: MAX_PUSH_OBJECTS - 2 }, () => ({})) }],
    });
    const res = await rawRequest(`${url}${PUSH}`, {
      headers: { 'content-type': 'application/proto' },
      body: toBinary(PushRequestSchema, request),
    });
    expect(res.status).toBe(200);
    expect(receiver.appends).toHaveLength(1);
  });

  it('answers a million empty series (7 KiB gzipped) 413 within 2 s while another receiver keeps answering', {
    timeout: 20_000,
  }, async () => {
    const victim = await serve();
    const bystander = await serve();
    const bomb = gzipSync(emptySeries(1_000_000), { level: 9 });
    expect(bomb.length).toBeLessThan(8 << 10);
    const sentAt = performance.now();
    let answeredAt = 0;
    const bombed = rawRequest(`${victim.url}${PUSH}`, {
      headers: { 'content-type': 'application/proto', 'content-encoding': 'gzip' },
      body: bomb,
    }).then((res) => {
      answeredAt = performance.now();
      return res;
    });
    const latencies: number[] = [];
    do {
      const at = performance.now();
      expect((await rawRequest(`${bystander.url}/ingest?name=bystander`, { body: 'x 1' })).status).toBe(200);
      latencies.push(performance.now() - at);
    } while (answeredAt === 0);
    const res = await bombed;
    expect([res.status, JSON.parse(res.body.toString()).message]).toEqual([413, LIMIT_MESSAGE]);
    expect(answeredAt - sentAt).toBeLessThan(2000);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    expect(victim.receiver.appends).toHaveLength(0);
  });
});
