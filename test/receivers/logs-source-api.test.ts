import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { logsSourceApiComponent } from '../../receivers/logs-source-api.js';
import { snappyEncode } from '../../lib/loki/compression.js';
import { encodePushRequest } from '../../lib/loki/wire.js';
import {
  componentArgs,
  entryOf,
  eventually,
  gate,
  metricValue,
  protoBody,
  pushJson,
  pushProto,
  rawRequest,
  recordingReceiver,
  sourceApiConfig,
  startSourceApi,
  testContext,
  type StartedSourceApi,
} from './loki/harness.js';

const started: StartedSourceApi[] = [];
async function start(...args: Parameters<typeof startSourceApi>): Promise<StartedSourceApi> {
  const api = await startSourceApi(...args);
  started.push(api);
  return api;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((a) => a.stop()));
});

const NS = 1_700_000_000_123_456_789n;

describe('logs.source.api push', () => {
  it('forwards a JSON push with labels, lines, metadata and nanosecond timestamps', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'use_incoming_timestamp = true' });
    const res = await pushJson(api.url, {
      streams: [
        {
          stream: { app: 'web', env: 'prod' },
          values: [
            [String(NS), 'first', { trace_id: 'abc', span: '1' }],
            [String(NS + 1n), 'second'],
          ],
        },
        { stream: { app: 'db' }, values: [['5', 'third']] },
      ],
    });
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expect(receiver.entries).toEqual([
      {
        labels: { app: 'web', env: 'prod' },
        line: 'first',
        timestamp: NS,
        structuredMetadata: [
          { name: 'trace_id', value: 'abc' },
          { name: 'span', value: '1' },
        ],
        extracted: {},
      },
      { labels: { app: 'web', env: 'prod' }, line: 'second', timestamp: NS + 1n, structuredMetadata: [], extracted: {} },
      { labels: { app: 'db' }, line: 'third', timestamp: 5n, structuredMetadata: [], extracted: {} },
    ]);
  });

  it('forwards a snappy protobuf push the same way', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'use_incoming_timestamp = true' });
    const res = await pushProto(api.url, [
      {
        labels: '{app="web", env="prod"}',
        entries: [{ timestampNs: NS, line: 'first', structuredMetadata: [{ name: 'trace_id', value: 'abc' }] }],
      },
    ]);
    expect(res.status).toBe(204);
    expect(receiver.entries).toEqual([
      {
        labels: { app: 'web', env: 'prod' },
        line: 'first',
        timestamp: NS,
        structuredMetadata: [{ name: 'trace_id', value: 'abc' }],
        extracted: {},
      },
    ]);
  });

  it('accepts gzip and deflate content encodings', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'use_incoming_timestamp = true' });
    const body = JSON.stringify({ streams: [{ stream: { app: 'a' }, values: [['1', 'zipped']] }] });
    expect((await pushJson(api.url, gzipSync(body), { 'Content-Encoding': 'gzip' })).status).toBe(204);
    const { deflateSync, deflateRawSync } = await import('node:zlib');
    expect((await pushJson(api.url, deflateSync(body), { 'Content-Encoding': 'deflate' })).status).toBe(204);
    expect((await pushJson(api.url, deflateRawSync(body), { 'Content-Encoding': 'deflate' })).status).toBe(204);
    const proto = protoBody([{ labels: '{app="a"}', entries: [{ timestampNs: 2n, line: 'proto zipped', structuredMetadata: [] }] }]);
    const res = await rawRequest(`${api.url}/loki/api/v1/push`, {
      headers: { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' },
      body: gzipSync(proto),
    });
    expect(res.status).toBe(204);
    expect(receiver.entries.map((e) => e.line)).toEqual(['zipped', 'zipped', 'zipped', 'proto zipped']);
  });

  it('treats a push without a content type as protobuf, as the reference does', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver]);
    const res = await rawRequest(`${api.url}/loki/api/v1/push`, {
      body: protoBody([{ labels: '{a="1"}', entries: [{ timestampNs: 1n, line: 'x', structuredMetadata: [] }] }]),
    });
    expect(res.status).toBe(204);
    expect(receiver.entries.map((e) => e.line)).toEqual(['x']);
  });

  it('keeps the tenant from X-Scope-OrgID as the __tenant_id__ label', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver]);
    await pushJson(api.url, { streams: [{ stream: { app: 'a' }, values: [['1', 'x']] }] }, { 'X-Scope-OrgID': 'team-a' });
    await rawRequest(`${api.url}/loki/api/v1/raw`, { headers: { 'X-Scope-OrgID': 'team-b' }, body: 'raw line\n' });
    expect(receiver.entries.map((e) => e.labels)).toEqual([{ app: 'a', __tenant_id__: 'team-a' }, { __tenant_id__: 'team-b' }]);
  });

  it('adds the configured labels over pushed ones and drops reserved __ labels', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'labels = { env = "staging", source = "api" }' });
    await pushProto(api.url, [
      { labels: '{__name__="m", __meta="x", app="a", env="prod"}', entries: [{ timestampNs: 1n, line: 'x', structuredMetadata: [] }] },
    ]);
    expect(receiver.entries[0]!.labels).toEqual({ app: 'a', env: 'staging', source: 'api' });
  });

  it('stamps entries with the receive time unless use_incoming_timestamp is set', async () => {
    const receiver = recordingReceiver();
    const clock = new ManualClock(42_000_000_000n);
    const api = await start([receiver], { clock });
    await pushJson(api.url, { streams: [{ stream: { app: 'a' }, values: [[String(NS), 'x']] }] });
    expect(receiver.entries[0]!.timestamp).toBe(42_000_000_000n);
  });

  it('answers only after every receiver has taken the entries over', async () => {
    const hold = gate();
    const slow = recordingReceiver({ hold: hold.wait });
    const api = await start([slow]);
    let answered = false;
    const pending = pushJson(api.url, { streams: [{ stream: { app: 'a' }, values: [['1', 'x']] }] }).then((r) => {
      answered = true;
      return r;
    });
    await eventually(() => slow.calls() === 1, 5000, 'the send');
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    hold.open();
    expect((await pending).status).toBe(204);
    expect(slow.entries.map((e) => e.line)).toEqual(['x']);
  });

  it('answers 500 when a receiver fails, naming the failure', async () => {
    const api = await start([recordingReceiver({ fail: () => new Error('disk full') })]);
    const res = await pushJson(api.url, { streams: [{ stream: { app: 'a' }, values: [['1', 'x']] }] });
    expect(res).toMatchObject({ status: 500, body: 'forwarding entries failed: disk full\n' });
  });
});

describe('logs.source.api raw and ready endpoints', () => {
  it('turns each non-empty line of a raw push into an entry with the configured labels', async () => {
    const receiver = recordingReceiver();
    const clock = new ManualClock(7_000_000_000n);
    const api = await start([receiver], { clock, extra: 'labels = { job = "raw" }' });
    const res = await rawRequest(`${api.url}/loki/api/v1/raw`, { body: 'one\r\n\ntwo\nthree' });
    expect(res.status).toBe(204);
    expect(receiver.entries).toEqual([
      entryOf('one', { job: 'raw' }, 7_000_000_000n),
      entryOf('two', { job: 'raw' }, 7_000_000_000n),
      entryOf('three', { job: 'raw' }, 7_000_000_000n),
    ]);
    expect((await rawRequest(`${api.url}/api/v1/raw`, { body: 'four\n' })).status).toBe(204);
    expect(receiver.entries.length).toBe(4);
  });

  it('answers ready, 404 for other paths and 405 for other methods', async () => {
    const api = await start([recordingReceiver()]);
    expect(await rawRequest(`${api.url}/ready`, { method: 'GET' })).toMatchObject({ status: 200, body: 'ready' });
    expect(await rawRequest(`${api.url}/nothing`, { method: 'GET' })).toMatchObject({ status: 404, body: '404 page not found\n' });
    expect(await rawRequest(`${api.url}/loki/api/v1/push`, { method: 'GET' })).toMatchObject({ status: 405, body: '' });
  });
});

describe('logs.source.api bad input', () => {
  const cases: Array<{
    name: string;
    headers: Record<string, string>;
    body: Buffer | string;
    status: number;
    text: string;
    reason: string;
  }> = [
    {
      name: 'malformed JSON',
      headers: { 'Content-Type': 'application/json' },
      body: '{"streams": [',
      status: 400,
      text: 'invalid JSON push request: Unexpected end of JSON input',
      reason: 'bad_json',
    },
    {
      name: 'JSON of the wrong shape',
      headers: { 'Content-Type': 'application/json' },
      body: '{"streams":[{"stream":{"a":"1"},"values":[[1,"x"]]}]}',
      status: 400,
      text: 'invalid JSON push request: streams[0].values[0][0]: timestamp must be a string of nanoseconds since the epoch, got 1',
      reason: 'bad_json',
    },
    {
      name: 'JSON that is not valid UTF-8',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"streams":[{"stream":{"a":"'), Buffer.from([0xff]), Buffer.from('"},"values":[]}]}')]),
      status: 400,
      text: 'invalid JSON push request: body is not valid UTF-8',
      reason: 'invalid_utf8',
    },
    {
      name: 'JSON nested a million levels deep',
      headers: { 'Content-Type': 'application/json' },
      body: `{"streams": [], "junk": ${'['.repeat(1_000_000)}`,
      status: 400,
      text: 'invalid JSON push request: nesting is deeper than 1000 levels',
      reason: 'bad_json',
    },
    {
      name: 'a body that is not snappy',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      status: 400,
      text: 'invalid snappy block: bad length header',
      reason: 'bad_compression',
    },
    {
      name: 'a corrupt snappy block',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: Buffer.from([0x0a, 0xfe, 0x01, 0x02]),
      status: 400,
      text: 'invalid snappy block: Invalid Snappy bitstream',
      reason: 'bad_compression',
    },
    {
      name: 'snappy that holds no valid protobuf',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: snappyEncode(Buffer.from([0x0a, 0x10, 0x01])),
      status: 400,
      text: 'invalid protobuf push request: field length 16 runs past the end of its message at offset 2',
      reason: 'bad_protobuf',
    },
    {
      name: 'protobuf with a line that is not valid UTF-8',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: snappyEncode(Buffer.from([0x0a, 0x05, 0x12, 0x03, 0x12, 0x01, 0xff])),
      status: 400,
      text: 'invalid protobuf push request: EntryAdapter.line is not valid UTF-8',
      reason: 'invalid_utf8',
    },
    {
      name: 'a content type that is neither JSON nor protobuf',
      headers: { 'Content-Type': 'text/plain' },
      body: 'hello',
      status: 415,
      text: 'unsupported Content-Type "text/plain": send application/json or application/x-protobuf',
      reason: 'unsupported_content_type',
    },
    {
      name: 'an unknown content encoding',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
      body: '{}',
      status: 415,
      text: 'Content-Encoding "br" not supported',
      reason: 'unsupported_encoding',
    },
    {
      name: 'gzip that is not gzip',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: '{}',
      status: 400,
      text: 'invalid gzip body: incorrect header check',
      reason: 'bad_compression',
    },
  ];

  for (const c of cases) {
    it(`answers ${c.status} to ${c.name} and counts it`, async () => {
      const receiver = recordingReceiver();
      const api = await start([receiver]);
      const res = await rawRequest(`${api.url}/loki/api/v1/push`, { headers: c.headers, body: c.body });
      expect({ status: res.status, body: res.body }).toEqual({ status: c.status, body: `${c.text}\n` });
      expect(await metricValue(api.ctx.registry, 'logs_source_api_rejected_requests_total', { reason: c.reason })).toBe(1);
      expect(receiver.entries).toEqual([]);
      // The server keeps serving.
      expect((await pushJson(api.url, { streams: [{ stream: { a: '1' }, values: [['1', 'ok']] }] })).status).toBe(204);
    });
  }

  it('answers 413 to a declared body over max_body_size without reading it', async () => {
    const api = await start([recordingReceiver()], { extra: 'max_body_size = "1KiB"' });
    const res = await pushJson(api.url, 'x'.repeat(2048));
    expect(res).toMatchObject({ status: 413, body: 'request body is larger than the limit of 1024 bytes\n' });
    expect(res.headers.connection).toBe('close');
  });

  it('answers 413 to a chunked body that grows over max_body_size', async () => {
    const api = await start([recordingReceiver()], { extra: 'max_body_size = "1KiB"' });
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${api.url}/loki/api/v1/push`);
      import('node:http').then(({ request }) => {
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'Content-Type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        for (let i = 0; i < 8; i++) req.write('x'.repeat(512));
        req.end();
      }, reject);
    });
    expect(status).toBe(413);
  });

  it('answers 413 to a gzip body that inflates over max_body_size', async () => {
    const api = await start([recordingReceiver()], { extra: 'max_body_size = "64KiB"' });
    const bomb = gzipSync(Buffer.alloc(10 << 20, 0x20));
    expect(bomb.length).toBeLessThan(64 << 10);
    const res = await pushJson(api.url, bomb, { 'Content-Encoding': 'gzip' });
    expect(res).toMatchObject({ status: 413, body: 'decompressed body is larger than the limit of 65536 bytes\n' });
  });

  it('answers 413 to a deflate body that inflates over max_body_size', async () => {
    const api = await start([recordingReceiver()], { extra: 'max_body_size = "64KiB"' });
    const res = await pushJson(api.url, deflateSync(Buffer.alloc(10 << 20, 0x20)), { 'Content-Encoding': 'deflate' });
    expect(res).toMatchObject({ status: 413, body: 'decompressed body is larger than the limit of 65536 bytes\n' });
  });

  it('answers 413 to a snappy body that announces more than max_body_size', async () => {
    const api = await start([recordingReceiver()], { extra: 'max_body_size = "64KiB"' });
    const res = await rawRequest(`${api.url}/loki/api/v1/push`, {
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: snappyEncode(Buffer.alloc(100_000)),
    });
    expect(res).toMatchObject({ status: 413, body: 'decompressed body is larger than the limit of 65536 bytes\n' });
  });

  it('forwards the streams whose labels parse and answers 400 naming the one that does not', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver]);
    const body = snappyEncode(
      encodePushRequest([
        { labels: '{app="ok"}', entries: [{ timestampNs: 1n, line: 'kept', structuredMetadata: [] }] },
        { labels: '{app=unquoted}', entries: [{ timestampNs: 1n, line: 'skipped', structuredMetadata: [] }] },
      ]),
    );
    const res = await rawRequest(`${api.url}/loki/api/v1/push`, { headers: { 'Content-Type': 'application/x-protobuf' }, body });
    expect(res).toMatchObject({ status: 400, body: 'parse error at offset 5 of "{app=unquoted}": expected a quoted label value\n' });
    expect(receiver.entries.map((e) => e.line)).toEqual(['kept']);
    const json = await pushJson(api.url, { streams: [{ stream: { 'bad-name': 'x' }, values: [['1', 'skipped']] }] });
    expect(json).toMatchObject({ status: 400, body: 'invalid label name "bad-name"\n' });
  });

  it('counts requests by route and status code', async () => {
    const api = await start([recordingReceiver()]);
    await pushJson(api.url, '{');
    await pushJson(api.url, { streams: [] });
    expect(await metricValue(api.ctx.registry, 'logs_source_api_requests_total', { route: '/loki/api/v1/push', status_code: '400' })).toBe(
      1,
    );
    expect(await metricValue(api.ctx.registry, 'logs_source_api_requests_total', { route: '/loki/api/v1/push', status_code: '204' })).toBe(
      1,
    );
  });
});

describe('logs.source.api backpressure', () => {
  it('answers 429 with Retry-After while max_pending_size is held, and forwards nothing of that push', async () => {
    const hold = gate();
    const slow = recordingReceiver({ hold: hold.wait });
    // Each push holds about 1.3 KiB of body and 2 KiB of decoded entry: one fits, two do not.
    const api = await start([slow], { extra: 'max_pending_size = "4KiB"' });
    const line = 'x'.repeat(1200);
    const first = pushJson(api.url, { streams: [{ stream: { n: '1' }, values: [['1', line]] }] });
    await eventually(() => slow.calls() === 1, 5000, 'the first send');
    const second = await pushJson(api.url, { streams: [{ stream: { n: '2' }, values: [['1', line]] }] });
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('1');
    expect(second.body).toBe('too many entries waiting to be forwarded, retry after 1s\n');
    expect(await metricValue(api.ctx.registry, 'logs_source_api_pending_bytes')).toBeGreaterThan(2000);
    hold.open();
    expect((await first).status).toBe(204);
    expect(slow.calls()).toBe(1);
    expect(await metricValue(api.ctx.registry, 'logs_source_api_pending_bytes')).toBe(0);
    expect(await metricValue(api.ctx.registry, 'logs_source_api_rejected_requests_total', { reason: 'queue_full' })).toBe(1);
    const third = await pushJson(api.url, { streams: [{ stream: { n: '3' }, values: [['1', line]] }] });
    expect(third.status).toBe(204);
  });

  it('answers 413 to a body larger than max_pending_size even when nothing else is pending', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'max_pending_size = "1KiB"' });
    const res = await pushJson(api.url, { streams: [{ stream: { n: '1' }, values: [['1', 'y'.repeat(5000)]] }] });
    expect(res).toMatchObject({ status: 413, body: 'request body is larger than the limit of 1024 bytes\n' });
    expect(res.headers.connection).toBe('close');
    expect(receiver.entries).toEqual([]);
  });

  it('answers 413 to a push that fits max_pending_size as a body but not once decoded', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'max_pending_size = "16KiB"' });
    // 1,000 empty entries: 12 KiB of JSON, about 400 KiB once decoded.
    const res = await pushJson(api.url, { streams: [{ stream: { n: '1' }, values: Array.from({ length: 1000 }, () => ['1', '']) }] });
    expect(res).toMatchObject({
      status: 413,
      body: 'push is too large to decode within max_pending_size (16384 bytes), even with nothing else pending\n',
    });
    expect(receiver.entries).toEqual([]);
    expect(await metricValue(api.ctx.registry, 'logs_source_api_rejected_requests_total', { reason: 'push_too_large' })).toBe(1);
    expect(await metricValue(api.ctx.registry, 'logs_source_api_pending_bytes')).toBe(0);
  });

  it('answers the pushes in flight before it stops', async () => {
    const hold = gate();
    const slow = recordingReceiver({ hold: hold.wait });
    const api = await startSourceApi([slow]);
    const inflight = pushJson(api.url, { streams: [{ stream: { n: '1' }, values: [['1', 'x']] }] });
    await eventually(() => slow.calls() === 1, 5000, 'the send');
    const stopped = api.stop();
    setTimeout(() => hold.open(), 50);
    expect((await inflight).status).toBe(204);
    await stopped;
    expect(slow.entries.map((e) => e.line)).toEqual(['x']);
  });
});

describe('logs.source.api limits', () => {
  const entries = (n: number) => Array.from({ length: n }, (_, i) => ['1', `line ${i}`]);

  it('answers 413 to a push of more than max_entries_per_push entries, in any format, and forwards none', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'max_entries_per_push = 3' });
    const tooMany = 'push has more than 3 entries, the limit of max_entries_per_push\n';
    expect(await pushJson(api.url, { streams: [{ stream: { a: '1' }, values: entries(4) }] })).toMatchObject({
      status: 413,
      body: tooMany,
    });
    const wire = [{ labels: '{a="1"}', entries: entries(4).map(([, line]) => ({ timestampNs: 1n, line: line!, structuredMetadata: [] })) }];
    expect(await pushProto(api.url, wire)).toMatchObject({ status: 413, body: tooMany });
    expect(await rawRequest(`${api.url}/loki/api/v1/raw`, { body: 'a\nb\nc\nd\n' })).toMatchObject({ status: 413, body: tooMany });
    expect(receiver.entries).toEqual([]);
    expect(await metricValue(api.ctx.registry, 'logs_source_api_rejected_requests_total', { reason: 'too_many_entries' })).toBe(3);
    expect((await pushJson(api.url, { streams: [{ stream: { a: '1' }, values: entries(3) }] })).status).toBe(204);
    expect(receiver.entries.length).toBe(3);
  });

  it("skips streams over Loki's label limits, forwards the rest and answers 400 in Loki's words", async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], {
      extra: 'max_label_names_per_series = 2\n  max_label_name_length = 8\n  max_label_value_length = 5',
    });
    const stream = (labels: string, line: string) => ({ labels, entries: [{ timestampNs: 1n, line, structuredMetadata: [] }] });
    const names = await pushProto(api.url, [stream('{a="1", b="2", c="3"}', 'three names'), stream('{a="1"}', 'kept')]);
    expect(names).toMatchObject({ status: 400, body: `entry for stream '{a="1", b="2", c="3"}' has 3 label names; limit 2\n` });
    const name = await pushJson(api.url, { streams: [{ stream: { toolongname: 'x', a: '1' }, values: [['1', 'long name']] }] });
    expect(name).toMatchObject({ status: 400, body: `stream '{a="1", toolongname="x"}' has label name too long: 'toolongname'\n` });
    const value = await pushJson(api.url, { streams: [{ stream: { a: 'toolong' }, values: [['1', 'long value']] }] });
    expect(value).toMatchObject({ status: 400, body: `stream '{a="toolong"}' has label value too long: 'toolong'\n` });
    expect(receiver.entries.map((e) => e.line)).toEqual(['kept']);
    for (const reason of ['max_label_names_per_series', 'label_name_too_long', 'label_value_too_long'])
      expect(await metricValue(api.ctx.registry, 'logs_source_api_rejected_requests_total', { reason })).toBe(1);
  });

  it('skips lines over max_line_size and answers 400 with the last one', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { extra: 'max_line_size = "10B"' });
    const res = await pushJson(api.url, {
      streams: [
        {
          stream: { a: '1' },
          values: [
            ['1', 'short'],
            ['2', 'this line is too long'],
            ['3', 'also short'],
          ],
        },
      ],
    });
    expect(res).toMatchObject({
      status: 400,
      body: `Max entry size '10' bytes exceeded for stream '{a="1"}' while adding an entry with length '21' bytes\n`,
    });
    expect(receiver.entries.map((e) => e.line)).toEqual(['short', 'also short']);
  });

  it("leaves Loki's limits off by default", async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver]);
    const labels = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`label_${'n'.repeat(2000)}_${i}`, 'v'.repeat(3000)]));
    const res = await pushJson(api.url, { streams: [{ stream: labels, values: [['1', 'x'.repeat(1 << 20)]] }] });
    expect(res.status).toBe(204);
    expect(receiver.entries.length).toBe(1);
  });

  it('names a limit it cannot take at its attribute', () => {
    const errorOf = (extra: string): string => {
      try {
        logsSourceApiComponent.build(
          componentArgs(logsSourceApiComponent, sourceApiConfig(1, extra), [recordingReceiver()], 'api.alloy'),
          testContext('x'),
        );
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    expect(errorOf('max_entries_per_push = 0')).toBe(
      'api.alloy:8:3: logs.source.api "test": attribute "max_entries_per_push": must be at least 1, got 0',
    );
    expect(errorOf('max_label_names_per_series = -1')).toBe(
      'api.alloy:8:3: logs.source.api "test": attribute "max_label_names_per_series": must be at least 0, got -1',
    );
    expect(errorOf('max_line_size = "long"')).toBe('api.alloy:8:3: logs.source.api "test": attribute "max_line_size": units: invalid long');
  });
});

describe('logs.source.api http block', () => {
  const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/loki');

  it('serves HTTPS with the tls block', async () => {
    const receiver = recordingReceiver();
    const cert = join(fixtures, 'server-cert.pem');
    const key = join(fixtures, 'server-key.pem');
    const api = await start([receiver], {
      http: `tls {\n      cert_file = ${JSON.stringify(cert)}\n      key_file = ${JSON.stringify(key)}\n    }`,
    });
    expect(api.url.startsWith('https://')).toBe(true);
    const body = JSON.stringify({ streams: [{ stream: { app: 'tls' }, values: [['1', 'secret']] }] });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(
        `${api.url}/loki/api/v1/push`,
        { method: 'POST', agent: false, ca: readFileSync(cert), headers: { 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(204);
    expect(receiver.entries.map((e) => e.line)).toEqual(['secret']);
  });

  it('holds connections beyond conn_limit unaccepted until one closes', async () => {
    const receiver = recordingReceiver();
    const api = await start([receiver], { http: 'conn_limit = 1' });
    const { port } = new URL(api.url);
    const idle = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => idle.once('connect', resolve));
    await eventually(
      async () => (await metricValue(api.ctx.registry, 'logs_source_api_tcp_connections')) === 1,
      5000,
      'the first connection',
    );
    let answered = false;
    const push = pushJson(api.url, { streams: [{ stream: { a: '1' }, values: [['1', 'waited']] }] }).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(answered).toBe(false);
    expect(await metricValue(api.ctx.registry, 'logs_source_api_tcp_connections_limit')).toBe(1);
    idle.destroy();
    expect((await push).status).toBe(204);
    expect(receiver.entries.map((e) => e.line)).toEqual(['waited']);
  });
});

describe('logs.source.api config', () => {
  it('applies new labels and forward_to to the next push without restarting the listener', async () => {
    const first = recordingReceiver();
    const second = recordingReceiver();
    const api = await start([first]);
    api.component.update(componentArgs(logsSourceApiComponent, sourceApiConfig(2, 'labels = { added = "yes" }'), [second, second]));
    await api.component.settled();
    expect(api.component.url()).toBe(api.url);
    await pushJson(api.url, { streams: [{ stream: { a: '1' }, values: [['1', 'x']] }] });
    expect(first.entries).toEqual([]);
    expect(second.entries.map((e) => e.labels)).toEqual([
      { a: '1', added: 'yes' },
      { a: '1', added: 'yes' },
    ]);
  });

  it('names a byte size it cannot read at its attribute', () => {
    let message = '';
    try {
      logsSourceApiComponent.build(
        componentArgs(logsSourceApiComponent, sourceApiConfig(1, 'max_body_size = "lots"'), [recordingReceiver()], 'api.alloy'),
        testContext('x'),
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('api.alloy:8:3: logs.source.api "test": attribute "max_body_size": units: invalid lots');
  });
});
