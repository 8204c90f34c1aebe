/**
 * lokiPushReceiver used as a library: mounted in the test's own Koa app beside metricsMiddleware,
 * subscribed to directly, each push answered only once its batch is acknowledged.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import { Router } from '@koa/router';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { sendTo, type LogBatch } from '../../../core/delivery.js';
import { RetryLaterError } from '../../../core/receiver.js';
import { metricsMiddleware } from '../../../core/metrics-endpoint.js';
import { lokiPushReceiver, type LokiPushOptions, type LokiPushReceiver } from '../../../receivers/loki/push-receiver.js';
import { lokiPushReceiver as exportedFactory, metricsMiddleware as exportedMetrics } from '../../../receivers/index.js';
import type { RunOptions } from '../../../core/runtime/standalone.js';
import { protoBody, recordingReceiver } from './harness.js';

const NS = 1_700_000_000_123_456_789n;

/** Batches as the subscriber sees them, with a way to wait for the next one. */
interface HeldBatches {
  readonly batches: LogBatch[];
  next(): Promise<LogBatch>;
  readonly completed: () => boolean;
}

function holdBatches(push: LokiPushReceiver): HeldBatches {
  const batches: LogBatch[] = [];
  const waiting: ((batch: LogBatch) => void)[] = [];
  let seen = 0;
  let completed = false;
  push.subscribe({
    next: (batch) => {
      batches.push(batch);
      waiting.shift()?.(batch);
    },
    complete: () => (completed = true),
  });
  return {
    batches,
    completed: () => completed,
    next: () => {
      const index = seen++;
      if (batches[index]) return Promise.resolve(batches[index]);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

interface Served {
  readonly url: string;
  readonly registry: Registry;
  readonly push: LokiPushReceiver;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** The test's own Koa app: the receiver's middleware, /metrics, and a route of the app's own. */
async function serve(options: LokiPushOptions = {}, run: RunOptions = {}): Promise<Served> {
  const registry = run.registry ?? new Registry();
  const push = lokiPushReceiver(options, { id: 'push', ...run, registry, log: () => {} });
  const app = new Koa();
  app.use(push.middleware());
  app.use(metricsMiddleware(registry));
  app.use(async (ctx, next) => {
    if (ctx.path !== '/hello') return next();
    ctx.body = 'the app answers its own routes';
  });
  return { url: await listen(app), registry, push };
}

async function listen(app: Pick<Koa, 'listen'>): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function pushJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/loki/api/v1/push`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const ONE_LINE = { streams: [{ stream: { app: 'web' }, values: [['1', 'x']] }] };

/** Whether `promise` has settled, after a request to the same server has been answered. */
async function settledAfterRoundTrip(url: string, promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await fetch(`${url}/hello`).then((res) => res.text());
  return settled;
}

/** The exposition lines of the logs_source_api families. */
async function sourceMetricLines(url: string): Promise<string[]> {
  const res = await fetch(`${url}/metrics`);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return (await res.text()).split('\n').filter((line) => line.startsWith('logs_source_api_'));
}

describe('lokiPushReceiver in a Koa app', () => {
  it('answers a JSON push 204 only once the subscriber acknowledges its batch', async () => {
    const { url, push } = await serve({ labels: { source: 'push' }, use_incoming_timestamp: true });
    const held = holdBatches(push);
    const answer = pushJson(
      url,
      {
        streams: [
          {
            stream: { app: 'web', __meta: 'dropped' },
            values: [
              [String(NS), 'first', { trace_id: 'abc' }],
              [String(NS + 1n), 'second'],
            ],
          },
        ],
      },
      { 'X-Scope-OrgID': 'team-a' },
    );
    const batch = await held.next();
    expect(batch.entries).toEqual([
      {
        labels: { app: 'web', source: 'push', __tenant_id__: 'team-a' },
        line: 'first',
        timestamp: NS,
        structuredMetadata: [{ name: 'trace_id', value: 'abc' }],
        extracted: {},
      },
      {
        labels: { app: 'web', source: 'push', __tenant_id__: 'team-a' },
        line: 'second',
        timestamp: NS + 1n,
        structuredMetadata: [],
        extracted: {},
      },
    ]);
    expect(await settledAfterRoundTrip(url, answer)).toBe(false);
    batch.ack();
    const res = await answer;
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });

  it('emits a snappy protobuf push as one batch, entries exact', async () => {
    const { url, push } = await serve({ use_incoming_timestamp: true });
    const held = holdBatches(push);
    const answer = fetch(`${url}/api/v1/push`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-protobuf' },
      body: new Uint8Array(
        protoBody([
          {
            labels: '{app="web", env="prod"}',
            entries: [{ timestampNs: NS, line: 'a', structuredMetadata: [{ name: 'user', value: 'ann' }] }],
          },
          { labels: '{app="db"}', entries: [{ timestampNs: 5n, line: 'b', structuredMetadata: [] }] },
        ]),
      ),
    });
    const batch = await held.next();
    expect(batch.entries).toEqual([
      {
        labels: { app: 'web', env: 'prod' },
        line: 'a',
        timestamp: NS,
        structuredMetadata: [{ name: 'user', value: 'ann' }],
        extracted: {},
      },
      { labels: { app: 'db' }, line: 'b', timestamp: 5n, structuredMetadata: [], extracted: {} },
    ]);
    batch.ack();
    expect((await answer).status).toBe(204);
    expect(held.batches.length).toBe(1);
  });

  it('stamps entries with the receive time from its clock unless use_incoming_timestamp is set', async () => {
    const clock = new ManualClock(NS);
    clock.advanceBy(2);
    const { url, push } = await serve({}, { clock });
    const held = holdBatches(push);
    const answer = pushJson(url, ONE_LINE);
    const batch = await held.next();
    expect(batch.entries.map((e) => e.timestamp)).toEqual([NS + 2_000_000n]);
    batch.ack();
    expect((await answer).status).toBe(204);
  });

  it('answers 429 with Retry-After when the batch is refused with RetryLaterError', async () => {
    const { url, push } = await serve();
    const held = holdBatches(push);
    const answer = pushJson(url, ONE_LINE);
    (await held.next()).nack(new RetryLaterError('the queue is full'));
    const res = await answer;
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.text()).toBe('the queue is full, retry after 1s\n');
    expect(await sourceMetricLines(url)).toEqual([
      'logs_source_api_requests_total{component_id="push",route="/loki/api/v1/push",status_code="429"} 1',
      'logs_source_api_rejected_requests_total{component_id="push",reason="receiver_full"} 1',
      'logs_source_api_pending_bytes{component_id="push"} 0',
    ]);
  });

  it('answers 500 when the batch is refused with any other error', async () => {
    const { url, push } = await serve();
    const held = holdBatches(push);
    const answer = pushJson(url, ONE_LINE);
    (await held.next()).nack(new Error('disk full'));
    const res = await answer;
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('forwarding entries failed: disk full\n');
  });

  it('refuses pushes with 503 and is not ready before it is subscribed', async () => {
    const { url, push } = await serve();
    const res = await pushJson(url, ONE_LINE);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('the server is shutting down\n');
    const ready = await fetch(`${url}/ready`);
    expect([ready.status, await ready.text()]).toEqual([503, 'not ready']);
    holdBatches(push);
    const readyNow = await fetch(`${url}/ready`);
    expect([readyNow.status, await readyNow.text()]).toEqual([200, 'ready']);
  });

  it('holds what unacknowledged pushes hold within max_pending_size: one more is answered 429', async () => {
    // Each push holds about 1.3 KiB of body and 2 KiB of decoded entry: one fits, two do not.
    const { url, push } = await serve({ max_pending_size: '4KiB' });
    const held = holdBatches(push);
    const long = { streams: [{ stream: { app: 'web' }, values: [['1', 'x'.repeat(1200)]] }] };
    const first = pushJson(url, long);
    const batch = await held.next();
    const second = await pushJson(url, long);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.text()).toBe('too many entries waiting to be forwarded, retry after 1s\n');
    // The admitted push's decoded entry, held until its batch is answered.
    expect(await sourceMetricLines(url)).toEqual([
      'logs_source_api_requests_total{component_id="push",route="/loki/api/v1/push",status_code="429"} 1',
      'logs_source_api_rejected_requests_total{component_id="push",reason="queue_full"} 1',
      'logs_source_api_pending_bytes{component_id="push"} 2121',
    ]);
    expect(held.batches.length).toBe(1);
    batch.ack();
    expect((await first).status).toBe(204);
    const third = pushJson(url, long);
    (await held.next()).ack();
    expect((await third).status).toBe(204);
  });

  it('stops by refusing new pushes, answering the one in flight once acknowledged, then completing', async () => {
    const { url, push } = await serve();
    const held = holdBatches(push);
    const inFlight = pushJson(url, ONE_LINE);
    const batch = await held.next();
    let stopped = false;
    const stopping = push.stop().then(() => (stopped = true));
    const refused = await pushJson(url, ONE_LINE);
    expect(refused.status).toBe(503);
    expect(stopped).toBe(false);
    expect(held.completed()).toBe(false);
    batch.ack();
    expect((await inFlight).status).toBe(204);
    await stopping;
    expect(held.completed()).toBe(true);
    expect(held.batches.length).toBe(1);
  });

  it('stops waiting for a push in flight after graceful_shutdown_timeout on its clock', async () => {
    const clock = new ManualClock();
    const { url, push } = await serve({ graceful_shutdown_timeout: '5s' }, { clock });
    const held = holdBatches(push);
    const inFlight = pushJson(url, ONE_LINE);
    const batch = await held.next();
    let stopped = false;
    const stopping = push.stop().then(() => (stopped = true));
    clock.advanceBy(4999);
    await Promise.resolve();
    expect(stopped).toBe(false);
    clock.advanceBy(1);
    await stopping;
    expect(held.completed()).toBe(true);
    // The subscriber may still answer what it was given.
    batch.ack();
    expect((await inFlight).status).toBe(204);
  });

  it('delivers through sendTo and shows its counters with exact values on /metrics', async () => {
    const { url, push } = await serve();
    const receiver = recordingReceiver();
    push.pipe(sendTo(receiver)).subscribe();
    const two = {
      streams: [
        {
          stream: { app: 'web' },
          values: [
            ['1', 'a'],
            ['2', 'b'],
          ],
        },
      ],
    };
    expect((await pushJson(url, two)).status).toBe(204);
    expect((await pushJson(url, ONE_LINE)).status).toBe(204);
    expect((await pushJson(url, { streams: [{ stream: { app: 'web' }, values: [['x', 'bad']] }] })).status).toBe(400);
    const raw = await fetch(`${url}/loki/api/v1/raw`, { method: 'POST', body: 'one\ntwo\n' });
    expect(raw.status).toBe(204);
    expect(receiver.entries.map((e) => e.line)).toEqual(['a', 'b', 'x', 'one', 'two']);
    expect(await sourceMetricLines(url)).toEqual([
      'logs_source_api_requests_total{component_id="push",route="/loki/api/v1/push",status_code="204"} 2',
      'logs_source_api_requests_total{component_id="push",route="/loki/api/v1/push",status_code="400"} 1',
      'logs_source_api_requests_total{component_id="push",route="/loki/api/v1/raw",status_code="204"} 1',
      'logs_source_api_entries_total{component_id="push"} 5',
      'logs_source_api_rejected_requests_total{component_id="push",reason="bad_json"} 1',
      'logs_source_api_pending_bytes{component_id="push"} 0',
    ]);
  });

  it('answers other methods on its paths 405 and leaves every other path to the app', async () => {
    const { url, push } = await serve();
    holdBatches(push);
    const wrongMethod = await fetch(`${url}/loki/api/v1/push`);
    expect([wrongMethod.status, await wrongMethod.text()]).toEqual([405, '']);
    const own = await fetch(`${url}/hello`);
    expect([own.status, await own.text()]).toEqual([200, 'the app answers its own routes']);
    expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
    expect(await sourceMetricLines(url)).toEqual([
      'logs_source_api_requests_total{component_id="push",route="/loki/api/v1/push",status_code="405"} 1',
    ]);
  });

  it('serves its router nested under a prefix of the app', async () => {
    const push = lokiPushReceiver({}, { registry: new Registry(), log: () => {} });
    const outer = new Router();
    outer.use('/logs', push.router.routes(), push.router.allowedMethods());
    const url = await listen(new Koa().use(outer.routes()).use(outer.allowedMethods()));
    const receiver = recordingReceiver();
    push.pipe(sendTo(receiver)).subscribe();
    expect((await pushJson(`${url}/logs`, ONE_LINE)).status).toBe(204);
    expect((await fetch(`${url}/logs/ready`)).status).toBe(200);
    expect(receiver.entries.map((e) => e.line)).toEqual(['x']);
  });

  it('applies updated labels to the next push', async () => {
    const { url, push } = await serve({ labels: { v: '1' } });
    const receiver = recordingReceiver();
    push.pipe(sendTo(receiver)).subscribe();
    await pushJson(url, ONE_LINE);
    push.update({ labels: { v: '2' } });
    await pushJson(url, ONE_LINE);
    expect(receiver.entries.map((e) => e.labels)).toEqual([
      { app: 'web', v: '1' },
      { app: 'web', v: '2' },
    ]);
  });
});

describe('lokiPushReceiver options', () => {
  const errorOf = (options: Record<string, unknown>): string => {
    try {
      lokiPushReceiver(options as LokiPushOptions, { registry: new Registry() });
    } catch (err) {
      return (err as Error).message;
    }
    return 'no error';
  };

  it("throws logs.source.api's error texts, every bad attribute at once", () => {
    expect(errorOf({ max_body_size: 'lots' })).toBe('lokiPushReceiver: attribute "max_body_size": units: invalid lots');
    expect(errorOf({ max_entries_per_push: 0, max_line_size: 'long' })).toBe(
      'lokiPushReceiver: attribute "max_entries_per_push": must be at least 1, got 0\n' +
        'lokiPushReceiver: attribute "max_line_size": units: invalid long',
    );
  });

  it('takes neither forward_to nor an http block', () => {
    expect(errorOf({ forward_to: [] })).toBe('lokiPushReceiver: unrecognized attribute name "forward_to"');
    expect(errorOf({ http: { listen_port: 0 } })).toBe('lokiPushReceiver: unrecognized attribute name "http"');
  });

  it('keeps its settings when an update is invalid', async () => {
    const { url, push } = await serve({ labels: { v: '1' } });
    expect(() => push.update({ max_pending_size: '0' })).toThrow('push: attribute "max_pending_size": must be at least 1 bytes, got "0"');
    const receiver = recordingReceiver();
    push.pipe(sendTo(receiver)).subscribe();
    expect((await pushJson(url, ONE_LINE)).status).toBe(204);
    expect(receiver.entries.map((e) => e.labels)).toEqual([{ app: 'web', v: '1' }]);
  });

  it('is exported with metricsMiddleware from the receivers index', () => {
    expect(exportedFactory).toBe(lokiPushReceiver);
    expect(exportedMetrics).toBe(metricsMiddleware);
  });
});
