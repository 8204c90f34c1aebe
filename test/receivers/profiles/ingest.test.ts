import { gzipSync } from 'node:zlib';
import { request } from 'node:http';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteStatusError } from '../../../lib/pyroscope/remote-status-error.js';
import { WrappedError } from '../../../lib/go/error-chain.js';
import {
  randomBytes,
  rawRequest,
  receiverConfig,
  recordingReceiver,
  startReceiveHttp,
  type RecordingReceiver,
  type StartedReceiver,
} from './harness.js';

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

const ingest = (url: string, query: string, options: Parameters<typeof rawRequest>[1] = {}) =>
  rawRequest(`${url}/ingest?${query}`, { body: 'profile', ...options });

describe('POST /ingest', () => {
  it('forwards the body untouched, even when it says it is gzip', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const body = gzipSync(Buffer.from('a profile'));
    const res = await ingest(url, 'name=app', {
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/octet-stream' },
      body,
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(receivers[0]!.ingests[0]!.profile.body).equals(body)).toBe(true);
  });

  it('passes on only the content types, in order, whatever else the request carries', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    await ingest(url, 'name=app', {
      headers: { authorization: 'Bearer secret', 'x-scope-orgid': 'tenant', 'content-type': ['multipart/form-data; boundary=x', 'second'] },
    });
    const profile = receivers[0]!.ingests[0]!.profile;
    expect(profile.contentType).toEqual(['multipart/form-data; boundary=x', 'second']);
    expect(Object.keys(profile).sort()).toEqual(['body', 'contentType', 'labels', 'path', 'rawQuery']);
  });

  it('keeps the raw query byte for byte', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    const query = 'name=app%7Benv%3Dprod%7D&from=now-1h&until=now&format=pprof&spyName=nodespy&x=a+b&x=%20';
    await ingest(url, query);
    expect(receivers[0]!.ingests[0]!.profile.rawQuery).toBe(query);
  });

  it('answers 200 with no labels when name is missing or does not parse, and warns', async () => {
    const receivers = [recordingReceiver()];
    const started = await serve(receivers);
    for (const query of [
      'from=1',
      `name=${encodeURIComponent('{env=prod}')}`,
      `name=${encodeURIComponent('my app')}`,
      `name=${encodeURIComponent('app{bad-key=1}')}`,
    ]) {
      expect((await ingest(started.url, query)).status).toBe(200);
    }
    expect(receivers[0]!.ingests.map((i) => i.labels)).toEqual([{}, {}, {}, {}]);
    expect(started.ctx.logs.filter((l) => l.startsWith('warn Failed to parse labels from name parameter'))).toHaveLength(3);
  });

  it('keeps stray bytes of escapes that are not valid UTF-8: a value carries them on, an app name or key fails the parse', async () => {
    // The reference's parser copies the raw bytes: a value keeps them (and the writer's UTF-8 check
    // refuses it later: see chain.test.ts), a byte in the app name or a key is not an allowed
    // character, read by Go as U+FFFD in the message.
    const receivers = [recordingReceiver()];
    const started = await serve(receivers);
    for (const query of ['name=app%7Benv%3D%FF%7D', 'name=app%7Benv%3D%E2%82x%7D', 'name=app%FF', 'name=app%7B%FF%3D1%7D']) {
      expect((await ingest(started.url, query)).status).toBe(200);
    }
    expect(receivers[0]!.ingests.map((i) => i.labels)).toEqual([
      { __name__: 'app', env: '\udcff', service_name: 'app' },
      { __name__: 'app', env: '\udce2\udc82x', service_name: 'app' },
      {},
      {},
    ]);
    expect(started.ctx.logs.filter((l) => l.startsWith('warn Failed to parse labels from name parameter'))).toHaveLength(2);
  });

  it('drops a service_name given empty and still moves __name__ into app_name', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    await ingest(url, `name=${encodeURIComponent('app{service_name=,env=}')}`);
    expect(receivers[0]!.ingests[0]!.labels).toEqual({ __name__: 'app', app_name: 'app' });
  });

  it('answers with the downstream status and its reason phrase when a writer reports one', async () => {
    const receivers = [
      recordingReceiver({ fail: () => new Error('plain') }),
      recordingReceiver({
        fail: () =>
          new WrappedError(
            'failed to ingest to endpoint x (1 retries)',
            new WrappedError('remote error', new RemoteStatusError(429, 'slow')),
          ),
      }),
    ];
    const { url } = await serve(receivers);
    const res = await ingest(url, 'name=app');
    expect(res.status).toBe(429);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body.toString()).toBe('Too Many Requests\n');
  });

  it('uses the reference reason phrases, not the runtime ones', async () => {
    const { url } = await serve([recordingReceiver({ fail: () => new RemoteStatusError(413, 'big') })]);
    const res = await ingest(url, 'name=app');
    expect(res.status).toBe(413);
    expect(res.body.toString()).toBe('Request Entity Too Large\n');
  });

  it('calls the receivers concurrently and answers after the slowest', async () => {
    const order: string[] = [];
    const slow = recordingReceiver({ delayMs: 150 });
    const fast = recordingReceiver();
    const wrap = (name: string, r: RecordingReceiver): RecordingReceiver => ({
      ...r,
      appends: r.appends,
      ingests: r.ingests,
      append: r.append,
      appendIngest: async (p, s) => {
        order.push(`${name} start`);
        await r.appendIngest(p, s);
        order.push(`${name} end`);
      },
    });
    const { url } = await serve([wrap('slow', slow), wrap('fast', fast)]);
    const started = Date.now();
    expect((await ingest(url, 'name=app')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(order).toEqual(['slow start', 'fast start', 'fast end', 'slow end']);
  });

  it('gives every receiver its own label list', async () => {
    const mutating: RecordingReceiver = {
      ...recordingReceiver(),
      appendIngest: async (profile) => {
        (profile.labels as Array<{ name: string; value: string }>).push({ name: 'mutated', value: 'yes' });
      },
    };
    const other = recordingReceiver();
    const { url } = await serve([mutating, other]);
    await ingest(url, 'name=app');
    expect(other.ingests[0]!.labels).toEqual({ __name__: 'app', service_name: 'app' });
  });

  it('aborts the receivers signal when the client goes away', async () => {
    let seen: AbortSignal | undefined;
    const hanging: RecordingReceiver = {
      ...recordingReceiver(),
      appendIngest: (_profile, signal) => {
        seen = signal;
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      },
    };
    const { url } = await serve([hanging]);
    await new Promise<void>((resolve) => {
      const req = request(`${url}/ingest?name=app`, { method: 'POST' });
      req.on('error', () => resolve());
      req.end('body', () => setTimeout(() => req.destroy(), 50));
    });
    for (let i = 0; i < 50 && !seen?.aborted; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen?.aborted).toBe(true);
    expect((seen!.reason as Error).message).toBe('context canceled');
  });

  it('forwards any body byte for byte', async () => {
    const receivers = [recordingReceiver()];
    const { url } = await serve(receivers);
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        receivers[0]!.ingests.length = 0;
        expect((await ingest(url, 'name=app', { body: bytes })).status).toBe(200);
        expect(Buffer.from(receivers[0]!.ingests[0]!.profile.body).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it('accepts large bodies without a size limit when max_body_size is 0', async () => {
    const receivers = [recordingReceiver()];
    const started = await startReceiveHttp(receivers, {
      config: receiverConfig('', 1).replace('forward_to', 'max_body_size = "0"\n  forward_to'),
    });
    running.push(started);
    const body = randomBytes(32 << 20, 3);
    expect((await ingest(started.url, 'name=app', { body })).status).toBe(200);
    expect(receivers[0]!.ingests[0]!.profile.body.byteLength).toBe(32 << 20);
  });
});
