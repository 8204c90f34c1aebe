import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, type Clock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { ConfigErrors } from '../../lib/config/errors.js';
import type { LogsReceiver } from '../../core/receiver.js';
import { decodePushRequest } from '../../lib/loki/wire.js';
import { snappyDecode } from '../../lib/loki/compression.js';
import { validatedArgs } from '../../core/runtime/component.js';
import { LogsWrite, logsWriteComponent, type LogsWriteTestHooks } from '../../sinks/logs-write.js';
import type { PushRequest, PushResult } from '../../sinks/loki/transport.js';
import { decodeWalEntry } from '../../sinks/loki/wal-record.js';
import {
  componentArgs,
  entryOf,
  eventually,
  metricValue,
  pushProto,
  startSourceApi,
  testContext,
  type RawResponse,
  type TestContext,
} from '../receivers/loki/harness.js';
import { startFakeLoki, type FakeLoki } from './loki/fake-loki.js';
import { fullDisk } from './loki/full-disk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The logs.write block in `text` decoded and validated, as the runtime hands it to the component. */
function writeArgs(text: string, file?: string) {
  return validatedArgs(logsWriteComponent, componentArgs(logsWriteComponent, text, [], file), { id: 'logs.write.test' });
}

interface StartedWrite {
  readonly component: LogsWrite;
  readonly receiver: LogsReceiver;
  readonly ctx: TestContext;
}

function startWrite(config: string, options: { clock?: Clock; hooks?: LogsWriteTestHooks } = {}): StartedWrite {
  const ctx = testContext('logs.write.test', options.clock ? { clock: options.clock } : {});
  const component = new LogsWrite(writeArgs(config), ctx, options.hooks);
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await component.stop();
  });
  const receiver = (component.exports.receiver as unknown as { value: LogsReceiver }).value;
  const stop = component.stop.bind(component);
  component.stop = async () => {
    stopped = true;
    await stop();
  };
  return { component, receiver, ctx };
}

async function fakeLoki(): Promise<FakeLoki> {
  const loki = await startFakeLoki();
  cleanups.push(() => loki.close());
  return loki;
}

/** A transport that records requests and answers from a script (then 204). */
function scriptedTransport(answers: Array<PushResult | (() => Promise<PushResult>)> = []) {
  const requests: Array<{ request: PushRequest; lines: string[] }> = [];
  const transport = async (request: PushRequest): Promise<PushResult> => {
    const streams = decodePushRequest(snappyDecode(request.body, 1 << 30));
    requests.push({ request, lines: streams.flatMap((s) => s.entries.map((e) => e.line)) });
    const next = answers.shift();
    if (next === undefined) return { status: 204, message: '' };
    return typeof next === 'function' ? next() : next;
  };
  return { transport, requests };
}

const tick = () => new Promise((r) => setImmediate(r));

async function advance(clock: ManualClock, ms: number, step = 10): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advanceBy(step);
    await tick();
  }
}

function endpoint(url: string, extra = ''): string {
  return `logs.write "test" {\n  endpoint {\n    url = ${JSON.stringify(url)}\n    ${extra}\n  }\n}\n`;
}

describe('logs.write delivery', () => {
  it('pushes snappy protobuf grouped into streams, with external labels under the entry labels', async () => {
    const loki = await fakeLoki();
    const write = startWrite(`logs.write "test" {
  endpoint {
    url = ${JSON.stringify(loki.url)}
    batch_wait = "10ms"
    headers = { "X-Custom" = "yes" }
  }
  external_labels = { cluster = "eu", app = "external" }
}
`);
    const e1: Entry = {
      ...entryOf('one', { app: 'web' }, 1_700_000_000_000_000_001n),
      structuredMetadata: [{ name: 'trace_id', value: 't1' }],
    };
    await write.receiver.send([e1, entryOf('two', { app: 'db' }, 2n), entryOf('three', { app: 'web' }, 3n)]);
    await eventually(() => loki.accepted.length === 1, 5000, 'the push');
    const push = loki.accepted[0]!;
    expect(push.headers['content-type']).toBe('application/x-protobuf');
    expect(push.headers['user-agent']).toBe('Rivulet/0.1.0');
    expect(push.headers['x-custom']).toBe('yes');
    expect(push.headers['x-scope-orgid']).toBeUndefined();
    expect(push.streams).toEqual([
      {
        labels: { app: 'web', cluster: 'eu' },
        entries: [
          { timestampNs: 1_700_000_000_000_000_001n, line: 'one', structuredMetadata: [{ name: 'trace_id', value: 't1' }] },
          { timestampNs: 3n, line: 'three', structuredMetadata: [] },
        ],
      },
      { labels: { app: 'db', cluster: 'eu' }, entries: [{ timestampNs: 2n, line: 'two', structuredMetadata: [] }] },
    ]);
    await write.component.stop();
    expect(await metricValue(write.ctx.registry, 'logs_write_sent_entries_total', { host: `127.0.0.1:${loki.port}` })).toBe(3);
    expect(await metricValue(write.ctx.registry, 'logs_write_sent_bytes_total')).toBe('onetwothreetrace_idt1'.length);
    expect(await metricValue(write.ctx.registry, 'logs_write_encoded_bytes_total')).toBeGreaterThan(0);
  });

  it('sends each tenant in its own batch with X-Scope-OrgID, never as a label', async () => {
    const loki = await fakeLoki();
    const write = startWrite(endpoint(loki.url, 'tenant_id = "default-team"\n    batch_wait = "10ms"'));
    await write.receiver.send([
      entryOf('a1', { app: 'a', __tenant_id__: 'team-a' }),
      entryOf('d1', { app: 'd' }),
      entryOf('a2', { app: 'a', __tenant_id__: 'team-a' }),
    ]);
    await eventually(() => loki.accepted.length === 2, 5000, 'two pushes');
    expect(
      loki.accepted.map((p) => [
        p.headers['x-scope-orgid'],
        p.streams.map((s) => s.labels),
        p.streams.flatMap((s) => s.entries.map((e) => e.line)),
      ]),
    ).toEqual([
      ['team-a', [{ app: 'a' }], ['a1', 'a2']],
      ['default-team', [{ app: 'd' }], ['d1']],
    ]);
  });

  it('authenticates with basic auth or a bearer token', async () => {
    const loki = await fakeLoki();
    const basic = startWrite(
      endpoint(loki.url, 'batch_wait = "0s"\n    basic_auth {\n      username = "user"\n      password = "pass"\n    }'),
    );
    await basic.receiver.send([entryOf('x')]);
    await eventually(() => loki.accepted.length === 1);
    expect(loki.accepted[0]!.headers.authorization).toBe(`Basic ${Buffer.from('user:pass').toString('base64')}`);
    const bearer = startWrite(endpoint(loki.url, 'batch_wait = "0s"\n    bearer_token = "tok"'));
    await bearer.receiver.send([entryOf('y')]);
    await eventually(() => loki.accepted.length === 2);
    expect(loki.accepted[1]!.headers.authorization).toBe('Bearer tok');
  });

  it('splits batches at batch_size and sends a partial batch after batch_wait', async () => {
    const clock = new ManualClock(0n);
    const { transport, requests } = scriptedTransport();
    const write = startWrite(endpoint('http://loki.invalid/push', 'batch_size = "10B"\n    batch_wait = "1s"'), {
      clock,
      hooks: { transport },
    });
    await write.receiver.send(['aaaa', 'bbbb', 'cccc', 'dd'].map((l) => entryOf(l)));
    await advance(clock, 10);
    // 14 bytes are queued, more than batch_size: the first 8 go at once, the rest waits.
    expect(requests.map((r) => r.lines)).toEqual([['aaaa', 'bbbb']]);
    await advance(clock, 900);
    expect(requests.length).toBe(1);
    await advance(clock, 200);
    expect(requests.map((r) => r.lines)).toEqual([
      ['aaaa', 'bbbb'],
      ['cccc', 'dd'],
    ]);
  });
});

describe('logs.write retries', () => {
  it('retries 5xx and network errors with doubling backoff, then delivers', async () => {
    const clock = new ManualClock(0n);
    const { transport, requests } = scriptedTransport([
      { status: 500, message: 'boom' },
      { status: -1, message: 'connect ECONNREFUSED' },
      { status: 503, message: 'busy' },
    ]);
    const write = startWrite(
      endpoint('http://loki.invalid/push', 'batch_wait = "0s"\n    min_backoff_period = "100ms"\n    max_backoff_period = "1s"'),
      {
        clock,
        hooks: { transport, random: () => 0 },
      },
    );
    await write.receiver.send([entryOf('x')]);
    await advance(clock, 10);
    expect(requests.length).toBe(1);
    await advance(clock, 100);
    expect(requests.length).toBe(2);
    await advance(clock, 150);
    expect(requests.length).toBe(2);
    await advance(clock, 60);
    expect(requests.length).toBe(3);
    await advance(clock, 400);
    expect(requests.length).toBe(4);
    expect(await metricValue(write.ctx.registry, 'logs_write_batch_retries_total')).toBe(3);
    expect(await metricValue(write.ctx.registry, 'logs_write_sent_entries_total')).toBe(1);
    expect(write.ctx.logs.filter((l) => l.startsWith('warn error sending batch, will retry')).length).toBe(3);
  });

  it('waits for the Retry-After of a 429 before retrying', async () => {
    const clock = new ManualClock(0n);
    const { transport, requests } = scriptedTransport([{ status: 429, retryAfter: '2', message: 'slow down' }]);
    const write = startWrite(
      endpoint('http://loki.invalid/push', 'batch_wait = "0s"\n    min_backoff_period = "100ms"\n    max_backoff_period = "10s"'),
      {
        clock,
        hooks: { transport, random: () => 0 },
      },
    );
    await write.receiver.send([entryOf('x')]);
    await advance(clock, 1900);
    expect(requests.length).toBe(1);
    await advance(clock, 200);
    expect(requests.length).toBe(2);
  });

  it('drops a 429 at once when retry_on_http_429 is false, counted as rate_limited', async () => {
    const clock = new ManualClock(0n);
    const { transport, requests } = scriptedTransport([{ status: 429, message: 'limited' }]);
    const write = startWrite(endpoint('http://loki.invalid/push', 'batch_wait = "0s"\n    retry_on_http_429 = false'), {
      clock,
      hooks: { transport },
    });
    await write.receiver.send([entryOf('x', { __tenant_id__: 't1' })]);
    await advance(clock, 2000);
    expect(requests.length).toBe(1);
    expect(await metricValue(write.ctx.registry, 'logs_write_dropped_entries_total', { reason: 'rate_limited', tenant: 't1' })).toBe(1);
    expect(await metricValue(write.ctx.registry, 'logs_write_dropped_bytes_total', { reason: 'rate_limited', tenant: 't1' })).toBe(1);
  });

  it('drops a batch answered with another 4xx without retrying', async () => {
    const clock = new ManualClock(0n);
    const { transport, requests } = scriptedTransport([{ status: 400, message: 'entry too far behind' }]);
    const write = startWrite(endpoint('http://loki.invalid/push', 'batch_wait = "0s"'), { clock, hooks: { transport } });
    await write.receiver.send([entryOf('x')]);
    await advance(clock, 2000);
    expect(requests.length).toBe(1);
    expect(await metricValue(write.ctx.registry, 'logs_write_dropped_entries_total', { reason: 'ingester_error' })).toBe(1);
    expect(write.ctx.logs).toContain(
      'error final error sending batch {"host":"loki.invalid","status":400,"tenant":"","error":"entry too far behind","entries":1}',
    );
  });

  it('gives up after max_backoff_retries attempts in total', async () => {
    const clock = new ManualClock(0n);
    const failing = Array.from({ length: 10 }, () => ({ status: 500, message: 'down' }));
    const { transport, requests } = scriptedTransport(failing);
    const write = startWrite(
      endpoint(
        'http://loki.invalid/push',
        'batch_wait = "0s"\n    min_backoff_period = "10ms"\n    max_backoff_period = "20ms"\n    max_backoff_retries = 3',
      ),
      {
        clock,
        hooks: { transport },
      },
    );
    await write.receiver.send([entryOf('x')]);
    await advance(clock, 1000);
    expect(requests.length).toBe(3);
    expect(await metricValue(write.ctx.registry, 'logs_write_dropped_entries_total', { reason: 'ingester_error' })).toBe(1);
  });

  it('retries against a real endpoint that answers 500 and 429, with the backoff observed', async () => {
    const loki = await fakeLoki();
    loki.script({ status: 500 }, { status: 429, headers: { 'Retry-After': '0' } });
    const write = startWrite(endpoint(loki.url, 'batch_wait = "0s"\n    min_backoff_period = "100ms"\n    max_backoff_period = "200ms"'));
    await write.receiver.send([entryOf('persist')]);
    await eventually(() => loki.accepted.length === 1, 5000, 'delivery');
    expect(loki.arrivals.map((a) => a.status)).toEqual([500, 429, 204]);
    expect(loki.arrivals[1]!.at - loki.arrivals[0]!.at).toBeGreaterThanOrEqual(95);
    expect(loki.arrivals[2]!.at - loki.arrivals[1]!.at).toBeGreaterThanOrEqual(95);
    expect(loki.lines()).toEqual(['persist']);
  });
});

describe('logs.write backpressure and shutdown', () => {
  it('makes send wait while the queue is at capacity and resumes when a batch is delivered', async () => {
    let release!: () => void;
    const held = new Promise<PushResult>((resolve) => (release = () => resolve({ status: 204, message: '' })));
    const { transport, requests } = scriptedTransport([() => held]);
    const write = startWrite(endpoint('http://loki.invalid/push', 'batch_wait = "0s"\n    queue_config {\n      capacity = "8B"\n    }'), {
      hooks: { transport },
    });
    await write.receiver.send([entryOf('12345678')]);
    await eventually(() => requests.length === 1, 5000, 'the first request');
    let accepted = false;
    const second = write.receiver.send([entryOf('abc')]).then(() => (accepted = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(accepted).toBe(false);
    expect(await metricValue(write.ctx.registry, 'logs_write_queued_bytes')).toBe(8);
    release();
    await second;
    await eventually(() => requests.length === 2, 5000, 'the second request');
    expect(requests.map((r) => r.lines)).toEqual([['12345678'], ['abc']]);
  });

  it('sends what is queued at once when stopped, without waiting for batch_wait', async () => {
    const loki = await fakeLoki();
    const write = startWrite(endpoint(loki.url, 'batch_wait = "1h"'));
    await write.receiver.send([entryOf('queued')]);
    await write.component.stop();
    expect(loki.lines()).toEqual(['queued']);
  });

  it('counts what it could not deliver within drain_timeout as dropped with reason shutdown', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const write = startWrite(
      endpoint(
        loki.url,
        'batch_wait = "0s"\n    min_backoff_period = "20ms"\n    max_backoff_period = "40ms"\n    queue_config {\n      drain_timeout = "200ms"\n    }',
      ),
    );
    await write.receiver.send([entryOf('lost-1'), entryOf('lost-2')]);
    const began = Date.now();
    await write.component.stop();
    expect(Date.now() - began).toBeLessThan(2000);
    expect(await metricValue(write.ctx.registry, 'logs_write_dropped_entries_total', { reason: 'shutdown' })).toBe(2);
    expect(write.ctx.logs.some((l) => l.startsWith('error dropped entries not delivered before drain_timeout'))).toBe(true);
    await expect(write.receiver.send([entryOf('late')])).rejects.toThrow('logs.write is stopped');
  });

  it('delivers everything once an endpoint that was down comes back', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const write = startWrite(
      endpoint(
        loki.url,
        'batch_wait = "0s"\n    min_backoff_period = "20ms"\n    max_backoff_period = "50ms"\n    max_backoff_retries = 0',
      ),
    );
    for (let i = 0; i < 5; i++) await write.receiver.send([entryOf(`line-${i}`, { app: 'a' })]);
    await new Promise((r) => setTimeout(r, 200));
    await loki.up();
    await eventually(() => loki.lines().length === 5, 5000, 'all lines');
    expect(loki.lines()).toEqual(['line-0', 'line-1', 'line-2', 'line-3', 'line-4']);
    expect(await metricValue(write.ctx.registry, 'logs_write_batch_retries_total')).toBeGreaterThan(0);
  });
});

describe('logs.write config', () => {
  const errorsOf = (text: string): string[] => {
    try {
      new LogsWrite(writeArgs(text, 'w.alloy'), testContext('logs.write.test'));
    } catch (err) {
      if (err instanceof ConfigErrors) return err.errors.map((e) => e.message);
      throw err;
    }
    return [];
  };

  it('requires an endpoint block', () => {
    let message = '';
    try {
      componentArgs(logsWriteComponent, 'logs.write "test" {\n}\n', [], 'w.alloy');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('w.alloy:1:1: logs.write "test": missing required block "endpoint"');
  });

  it('names a bad url, conflicting credentials and a bad batch size at their attributes', () => {
    expect(
      errorsOf(
        'logs.write "test" {\n  endpoint {\n    url = "ftp://x"\n    bearer_token = "a"\n    bearer_token_file = "/nonexistent"\n    batch_size = "1kB"\n  }\n}\n',
      ),
    ).toEqual([
      'w.alloy:3:5: logs.write "test" > endpoint: url must use http or https, got "ftp://x"',
      'w.alloy:4:5: logs.write "test" > endpoint: at most one of basic_auth, bearer_token and bearer_token_file may be set',
      'w.alloy:5:5: logs.write "test" > endpoint: reading bearer_token_file: ENOENT: no such file or directory, open \'/nonexistent\'',
      'w.alloy:6:5: logs.write "test" > endpoint: attribute "batch_size": units: unknown unit kB in 1kB',
    ]);
  });
});

describe('logs.write write-ahead log', () => {
  const walDir = () => mkdtempSync(join(tmpdir(), 'rivulet-write-wal-'));
  const segments = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.seg')) : []);
  const walConfig = (url: string, dir: string, extra = '', wal = '') =>
    `logs.write "test" {\n  endpoint {\n    name = "main"\n    url = ${JSON.stringify(url)}\n    batch_wait = "0s"\n    min_backoff_period = "20ms"\n    max_backoff_period = "50ms"\n    max_backoff_retries = 0\n    ${extra}\n  }\n  wal {\n    enabled = true\n    dir = ${JSON.stringify(dir)}\n    ${wal}\n  }\n}\n`;

  it('acknowledges a send once it is on disk, delivers from there and deletes what was delivered', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const write = startWrite(walConfig(loki.url, dir));
    const entry: Entry = { ...entryOf('kept', { app: 'a' }, 7n), structuredMetadata: [{ name: 'k', value: 'v' }] };
    await write.receiver.send([entry]);
    const files = segments(join(dir, 'main'));
    expect(files.length).toBe(1);
    const payload = readFileSync(join(dir, 'main', files[0]!)).subarray(24);
    expect(decodeWalEntry(payload)).toEqual({ tenant: '', entry });
    expect(await metricValue(write.ctx.registry, 'logs_write_wal_bytes')).toBe(24 + payload.length);
    await loki.up();
    await eventually(() => loki.lines().length === 1, 5000, 'the delivery');
    await eventually(() => segments(join(dir, 'main')).length === 0, 5000, 'the segment to be deleted');
    // The cursor is written once the delivered segment is gone.
    await eventually(() => existsSync(join(dir, 'main', 'delivered.json')), 5000, 'the cursor');
    expect(JSON.parse(readFileSync(join(dir, 'main', 'delivered.json'), 'utf8'))).toEqual({ version: 1, delivered: {}, below: 1 });
    expect(loki.accepted[0]!.streams).toMatchObject([
      { labels: { app: 'a' }, entries: [{ timestampNs: 7n, line: 'kept', structuredMetadata: [{ name: 'k', value: 'v' }] }] },
    ]);
  });

  it('keeps what is undelivered at drain_timeout and sends it, once, after the next start', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const config = walConfig(loki.url, dir, 'queue_config {\n      drain_timeout = "200ms"\n    }');
    const first = startWrite(config);
    for (let i = 0; i < 3; i++) await first.receiver.send([entryOf(`line-${i}`, { app: 'a' })]);
    await first.component.stop();
    expect(await metricValue(first.ctx.registry, 'logs_write_dropped_entries_total')).toBe(0);
    expect(first.ctx.logs).toContain(
      'warn entries not delivered before drain_timeout stay in the write-ahead log for the next start {"host":"127.0.0.1:' +
        `${loki.port}","records":3}`,
    );
    await loki.up();
    const second = startWrite(config);
    await eventually(() => loki.lines().length === 3, 5000, 'the replay');
    await second.component.stop();
    expect(loki.lines()).toEqual(['line-0', 'line-1', 'line-2']);
    expect(second.ctx.logs.some((l) => l.startsWith('info replaying the write-ahead log'))).toBe(true);
    expect(segments(join(dir, 'main'))).toEqual([]);
  });

  it('makes send wait while the log is at max_size and resumes once delivered segments are deleted', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const write = startWrite(walConfig(loki.url, dir, '', 'max_size = "8KiB"'));
    const line = 'x'.repeat(900);
    const acknowledged: number[] = [];
    const sends = Array.from({ length: 12 }, (_, i) => write.receiver.send([entryOf(`${i}${line}`)]).then(() => acknowledged.push(i)));
    await eventually(() => acknowledged.length >= 8, 5000, 'eight sends');
    await new Promise((r) => setTimeout(r, 100));
    // Records of about 940 bytes: eight fit in 8 KiB; the rest wait, in order.
    expect(acknowledged).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(await metricValue(write.ctx.registry, 'logs_write_wal_bytes')).toBeLessThanOrEqual(8 * 1024);
    await loki.up();
    await Promise.all(sends);
    expect(acknowledged).toEqual(Array.from({ length: 12 }, (_, i) => i));
    await eventually(() => loki.lines().length === 12, 5000, 'every line');
    expect(loki.lines().map((l) => Number.parseInt(l, 10))).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('pushes back on a push source while the log is full: it answers 429 with Retry-After', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const write = startWrite(walConfig(loki.url, walDir(), '', 'max_size = "8KiB"'));
    const api = await startSourceApi([write.receiver], { extra: 'max_pending_size = "8KiB"' });
    cleanups.push(() => api.stop());
    const answers: Array<Promise<RawResponse>> = [];
    let refused: RawResponse | undefined;
    for (let i = 0; i < 60 && !refused; i++) {
      const entries = [{ timestampNs: BigInt(i + 1), line: `${i} ${'x'.repeat(900)}`, structuredMetadata: [] }];
      const answer = pushProto(api.url, [{ labels: '{app="a"}', entries }]);
      const early = await Promise.race([answer, new Promise<undefined>((r) => setTimeout(r, 50, undefined))]);
      if (early?.status === 429) refused = early;
      else answers.push(answer);
    }
    expect(refused?.headers['retry-after']).toBe('1');
    expect(await metricValue(write.ctx.registry, 'logs_write_wal_bytes')).toBeLessThanOrEqual(8 * 1024);
    await loki.up();
    // A push answered after the 50 ms look (a slow machine) may be a refusal too, never anything else.
    const settled = await Promise.all(answers);
    for (const answer of settled) if (answer.status !== 204) expect([answer.status, answer.headers['retry-after']]).toEqual([429, '1']);
    const accepted = settled.filter((a) => a.status === 204).length;
    expect(accepted).toBeGreaterThan(0);
    await eventually(() => loki.lines().length === accepted, 5000, 'every acknowledged line');
  });

  it('hands an endpoint’s log to the queue that replaces it on update, losing and repeating nothing', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const write = startWrite(walConfig(loki.url, dir));
    for (let i = 0; i < 4; i++) await write.receiver.send([entryOf(`before-${i}`)]);
    await new Promise((r) => setTimeout(r, 100));
    write.component.update(writeArgs(walConfig(loki.url, dir, 'batch_size = "64KiB"')));
    await write.receiver.send([entryOf('after')]);
    await loki.up();
    await eventually(() => loki.lines().length >= 5, 5000, 'every line');
    await write.component.stop();
    expect(loki.lines()).toEqual(['before-0', 'before-1', 'before-2', 'before-3', 'after']);
  });

  it('refuses a wal without dir, two endpoints sharing one log, and a changed wal block', async () => {
    const messageOf = (fn: () => unknown): string => {
      try {
        fn();
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    };
    const build = (text: string) => () => new LogsWrite(writeArgs(text, 'w.alloy'), testContext('logs.write.test'));
    expect(
      messageOf(build('logs.write "test" {\n  endpoint {\n    url = "http://a/push"\n  }\n  wal {\n    enabled = true\n  }\n}\n')),
    ).toBe('w.alloy:6:5: logs.write "test" > wal: dir must be set when the wal is enabled');
    expect(
      messageOf(
        build(
          'logs.write "test" {\n  endpoint {\n    url = "http://a/push"\n  }\n  endpoint {\n    url = "http://a/push"\n  }\n  wal {\n    enabled = true\n    dir = "/tmp/w"\n  }\n}\n',
        ),
      ),
    ).toMatch(
      /^w\.alloy:8:3: logs\.write "test" > wal: two endpoints would share the write-ahead log \/tmp\/w\/url-[0-9a-f]{16}; give them distinct names$/,
    );
    const dir = walDir();
    const write = startWrite(walConfig('http://127.0.0.1:1/push', dir));
    expect(
      messageOf(() => write.component.update(writeArgs(walConfig('http://127.0.0.1:1/push', dir, '', 'fsync = "never"'), 'w.alloy'))),
    ).toBe('w.alloy:11:3: logs.write "test": the wal block cannot change while the component runs');
  });
});

describe('logs.write write-ahead log faults', () => {
  const walDir = () => mkdtempSync(join(tmpdir(), 'rivulet-write-wal-'));
  const walConfig = (url: string, dir: string, extra = '') =>
    `logs.write "test" {\n  endpoint {\n    name = "main"\n    url = ${JSON.stringify(url)}\n    batch_wait = "0s"\n    min_backoff_period = "20ms"\n    max_backoff_period = "50ms"\n    max_backoff_retries = 0\n    ${extra}\n  }\n  wal {\n    enabled = true\n    dir = ${JSON.stringify(dir)}\n    fsync = "never"\n  }\n}\n`;
  const pushLine = (url: string, i: number) =>
    pushProto(url, [
      { labels: '{app="a"}', entries: [{ timestampNs: BigInt(i + 1), line: `${i} ${'x'.repeat(1000)}`, structuredMetadata: [] }] },
    ]);
  const numbersOf = (lines: readonly string[]) => lines.map((l) => Number.parseInt(l, 10));

  it('answers 429 with Retry-After while its disk is full, recovers by itself, and loses and repeats nothing', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const disk = fullDisk(dir, 40 * 1024);
    const config = walConfig(loki.url, dir);
    const write = startWrite(config, { hooks: { openFile: disk.openFile } });
    const api = await startSourceApi([write.receiver]);
    cleanups.push(() => api.stop());
    const acknowledged: number[] = [];
    let refused: RawResponse | undefined;
    let next = 0;
    for (; next < 100 && !refused; next++) {
      const answer = await pushLine(api.url, next);
      if (answer.status === 204) acknowledged.push(next);
      else refused = answer;
    }
    expect([refused?.status, refused?.headers['retry-after'], refused?.body]).toEqual([
      429,
      '1',
      'the write-ahead log’s disk is full (ENOSPC), retry after 1s\n',
    ]);
    expect(acknowledged.length).toBeGreaterThan(10);
    expect(await metricValue(api.ctx.registry, 'logs_source_api_rejected_requests_total', { reason: 'receiver_full' })).toBe(1);
    // Once the endpoint is back, delivered segments are deleted and the refused push goes in.
    await loki.up();
    const upAt = performance.now();
    let recoveredMs: number | undefined;
    for (let i = next - 1; i < next + 20; i++) {
      for (let attempt = 0; ; attempt++) {
        const answer = await pushLine(api.url, i);
        if (answer.status === 204) break;
        expect([answer.status, answer.body]).toEqual([429, 'the write-ahead log’s disk is full (ENOSPC), retry after 1s\n']);
        expect(attempt).toBeLessThan(250);
        await new Promise((r) => setTimeout(r, 20));
      }
      recoveredMs ??= performance.now() - upAt;
      acknowledged.push(i);
    }
    expect(recoveredMs).toBeLessThan(5000);
    await eventually(() => loki.lines().length >= acknowledged.length, 5000, 'every acknowledged line');
    expect(numbersOf(loki.lines())).toEqual(acknowledged);
    await eventually(() => existsSync(join(dir, 'main', 'delivered.json')), 5000, 'the cursor');
    await write.component.stop();
    // After a restart, nothing delivered is sent again: the next line is the first to arrive.
    const again = startWrite(config);
    await again.receiver.send([entryOf('after')]);
    await eventually(() => loki.lines().length > acknowledged.length, 5000, 'the line after the restart');
    expect(loki.lines().slice(acknowledged.length)).toEqual(['after']);
  });

  it('counts the entries a damaged record held when replaying, and delivers every other one', async () => {
    const loki = await fakeLoki();
    await loki.down();
    const dir = walDir();
    const config = walConfig(loki.url, dir, 'queue_config {\n      drain_timeout = "0s"\n    }');
    const first = startWrite(config);
    for (let i = 0; i < 10; i++) await first.receiver.send([entryOf(`line-${i}`)]);
    await first.component.stop();
    const [segment] = readdirSync(join(dir, 'main')).filter((f) => f.endsWith('.seg'));
    const path = join(dir, 'main', segment!);
    const bytes = readFileSync(path);
    const at = bytes.indexOf('line-3');
    bytes[at + 2]! ^= 0x01;
    writeFileSync(path, bytes);
    await loki.up();
    const second = startWrite(config);
    await eventually(() => loki.lines().length === 9, 5000, 'the replay');
    expect(loki.lines()).toEqual(['line-0', 'line-1', 'line-2', 'line-4', 'line-5', 'line-6', 'line-7', 'line-8', 'line-9']);
    expect(await metricValue(second.ctx.registry, 'logs_write_wal_lost_entries_total', { reason: 'damaged' })).toBe(1);
    expect(second.ctx.logs.filter((l) => l.startsWith('error'))).toEqual([
      `error giving up write-ahead records that cannot be read {"path":${JSON.stringify(path)},"reason":"damaged","first":3,"records":1}`,
    ]);
  });

  it('keeps its position across reloads: a request under way finishes and is not sent again', async () => {
    const dir = walDir();
    const received: string[] = [];
    let answer: (() => void) | undefined;
    // Like a real endpoint, it stores a push on arrival; an aborted request gets no answer.
    const transport = (request: PushRequest, signal: AbortSignal): Promise<PushResult> => {
      const streams = decodePushRequest(snappyDecode(request.body, 1 << 30));
      received.push(...streams.flatMap((s) => s.entries.map((e) => e.line)));
      return new Promise((resolve) => {
        answer = () => resolve({ status: 204, message: '' });
        signal.addEventListener('abort', () => resolve({ status: -1, message: 'aborted' }), { once: true });
      });
    };
    const config = (size: string) => walConfig('http://127.0.0.1:1/push', dir, `batch_size = "${size}"`);
    const write = startWrite(config('1MiB'), { hooks: { transport } });
    const reloads = 20;
    for (let i = 0; i < reloads; i++) {
      await write.receiver.send([entryOf(`line-${i}`)]);
      await eventually(() => received.length > i, 5000, `line ${i} to be under way`);
      write.component.update(writeArgs(config(i % 2 === 0 ? '512KiB' : '1MiB')));
      // The answer comes after the replaced queue began stopping.
      await new Promise((r) => setTimeout(r, 10));
      answer!();
    }
    await eventually(() => received.includes(`line-${reloads - 1}`), 5000, 'the last line');
    answer!();
    await write.component.stop();
    expect(received).toEqual(Array.from({ length: reloads }, (_, i) => `line-${i}`));
  });
});
