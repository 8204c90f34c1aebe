import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { ProfileDelivery } from '../../core/profile-delivery.js';
import { labelsToObject } from '../../lib/pyroscope/labels.js';
import { RemoteStatusError } from '../../lib/pyroscope/remote-status-error.js';
import { PusherService } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { profilesReceiver, type ReconfigurableProfilesSource } from '../../receivers/index.js';
import { pprofBytes, rawRequest } from './profiles/harness.js';

const quiet = { registry: new Registry(), log: () => {} };
let server: Server | undefined;
let profiles: ReconfigurableProfilesSource | undefined;

afterEach(async () => {
  await profiles?.stop();
  profiles = undefined;
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  }
});

/** The user's own Koa app: a route of its own beside the mounted profile routes. */
async function mount(source: ReconfigurableProfilesSource): Promise<string> {
  const app = new Koa();
  app.use(async (ctx, next) => {
    if (ctx.path === '/health') ctx.body = 'ok';
    else await next();
  });
  app.use(source.middleware());
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Deliveries as they arrive, left unanswered for the test to answer. */
function collect(source: ReconfigurableProfilesSource) {
  const deliveries: ProfileDelivery[] = [];
  const waiters: Array<() => void> = [];
  let completed = false;
  source.subscribe({
    next: (d) => {
      deliveries.push(d);
      waiters.splice(0).forEach((wake) => wake());
    },
    complete: () => {
      completed = true;
    },
  });
  return {
    deliveries,
    completed: () => completed,
    /** Resolves once `n` deliveries have arrived. */
    async count(n: number): Promise<void> {
      while (deliveries.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

/** A promise's state after the event loop has had a few turns to settle it. */
async function settledAfterTurns(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

const pushOf = (url: string) => createClient(PusherService, createConnectTransport({ baseUrl: url, httpVersion: '1.1' }));
const series = (service: string, samples = [{ ID: 'id-1', rawProfile: pprofBytes(2) }]) => ({
  labels: [{ name: 'service_name', value: service }],
  samples,
});

describe('profilesReceiver', () => {
  it('serves a Connect push in a Koa app of its own, answered only once the delivery is acknowledged', async () => {
    profiles = profilesReceiver({}, quiet);
    const url = await mount(profiles);
    const got = collect(profiles);
    const profile = pprofBytes(3);
    const pushed = pushOf(url).push({ series: [series('checkout', [{ ID: 'uuid-1', rawProfile: profile }])] }, { timeoutMs: 5_000 });
    await got.count(1);
    const delivery = got.deliveries[0]!;
    expect(delivery.kind).toBe('push');
    if (delivery.kind !== 'push') return;
    expect(labelsToObject(delivery.series.labels)).toEqual({ service_name: 'checkout' });
    expect(delivery.series.samples.map((s) => [s.id, Buffer.from(s.rawProfile).equals(profile)])).toEqual([['uuid-1', true]]);
    expect(delivery.signal.aborted).toBe(false);
    expect(await settledAfterTurns(pushed)).toBe(false);
    delivery.ack();
    await expect(pushed).resolves.toEqual(expect.objectContaining({ $typeName: 'push.v1.PushResponse' }));
    // The app's own routes are untouched.
    const health = await fetch(`${url}/health`);
    expect([health.status, await health.text()]).toEqual([200, 'ok']);
  });

  it('answers a refused Push as profiles.receive_http answers a failing receiver: internal, naming the series', async () => {
    profiles = profilesReceiver({}, quiet);
    const url = await mount(profiles);
    profiles.subscribe((d) => d.nack(new Error('disk full')));
    await expect(pushOf(url).push({ series: [series('a'), series('b')] })).rejects.toThrow(
      '[internal] unable to append series {service_name="a"} to appendable 0: disk full\n' +
        'unable to append series {service_name="b"} to appendable 0: disk full',
    );
  });

  it('delivers the series of one Push one at a time: the next only once the one before is answered', async () => {
    profiles = profilesReceiver({}, quiet);
    const url = await mount(profiles);
    const got = collect(profiles);
    const pushed = pushOf(url).push({ series: [series('a'), series('b'), series('c')] });
    await got.count(1);
    expect(await settledAfterTurns(pushed)).toBe(false);
    expect(got.deliveries).toHaveLength(1);
    got.deliveries[0]!.ack();
    await got.count(2);
    expect(await settledAfterTurns(pushed)).toBe(false);
    expect(got.deliveries).toHaveLength(2);
    got.deliveries[1]!.ack();
    await got.count(3);
    got.deliveries[2]!.ack();
    await pushed;
    expect(got.deliveries.map((d) => (d.kind === 'push' ? labelsToObject(d.series.labels).service_name : ''))).toEqual(['a', 'b', 'c']);
  });

  it('delivers an ingest request as it came, answering 200 on ack, the downstream status or 500 on nack', async () => {
    profiles = profilesReceiver({}, quiet);
    const url = await mount(profiles);
    const answers = [
      (d: ProfileDelivery) => d.ack(),
      (d: ProfileDelivery) => d.nack(new RemoteStatusError(429, 'slow down')),
      (d: ProfileDelivery) => d.nack(new Error('disk full')),
    ];
    const got: ProfileDelivery[] = [];
    profiles.subscribe((d) => {
      got.push(d);
      answers[got.length - 1]!(d);
    });
    const ingest = () =>
      rawRequest(`${url}/ingest?name=app.cpu%7Benv%3Dprod%7D&from=1`, {
        headers: { 'content-type': 'binary/octet-stream' },
        body: 'pprof',
      });
    const replies = [await ingest(), await ingest(), await ingest()];
    expect(replies.map((r) => [r.status, r.body.toString()])).toEqual([
      [200, ''],
      [429, 'Too Many Requests\n'],
      [500, 'Failed to process request\n'],
    ]);
    const first = got[0]!;
    if (first.kind !== 'ingest') throw new Error('expected an ingest delivery');
    expect({ ...first.profile, body: Buffer.from(first.profile.body).toString(), labels: labelsToObject(first.profile.labels) }).toEqual({
      body: 'pprof',
      contentType: ['binary/octet-stream'],
      path: '/ingest',
      rawQuery: 'name=app.cpu%7Benv%3Dprod%7D&from=1',
      labels: { __name__: 'app.cpu', env: 'prod', service_name: 'app.cpu' },
    });
  });

  it('refuses requests before it is subscribed to and after it stops: 503 on ingest, unavailable on Push', async () => {
    profiles = profilesReceiver({}, quiet);
    const url = await mount(profiles);
    const refusedIngest = async () => {
      const res = await rawRequest(`${url}/ingest?name=app`, { body: 'x' });
      return [res.status, res.body.toString()];
    };
    expect(await refusedIngest()).toEqual([503, 'Service Unavailable\n']);
    await expect(pushOf(url).push({ series: [series('a')] })).rejects.toThrow('[unavailable] the source has no subscriber');
    profiles.subscribe((d) => d.ack());
    expect((await rawRequest(`${url}/ingest?name=app`, { body: 'x' })).status).toBe(200);
    await profiles.stop();
    expect(await refusedIngest()).toEqual([503, 'Service Unavailable\n']);
    await expect(pushOf(url).push({ series: [series('a')] })).rejects.toThrow('[unavailable] the source has no subscriber');
  });

  it('stops gracefully: refuses new requests, waits for the one being served, then completes', async () => {
    profiles = profilesReceiver({}, quiet);
    const url = await mount(profiles);
    const got = collect(profiles);
    const pushed = pushOf(url).push({ series: [series('a')] });
    await got.count(1);
    const stopped = profiles.stop();
    expect(await settledAfterTurns(stopped)).toBe(false);
    expect((await rawRequest(`${url}/ingest?name=late`, { body: 'x' })).status).toBe(503);
    got.deliveries[0]!.ack();
    await pushed;
    await stopped;
    expect(got.completed()).toBe(true);
    expect(got.deliveries).toHaveLength(1);
  });

  it('stops waiting for an unanswered request after graceful_shutdown_timeout, on its clock', async () => {
    const clock = new ManualClock();
    profiles = profilesReceiver({ graceful_shutdown_timeout: '5s' }, { ...quiet, clock });
    const url = await mount(profiles);
    const got = collect(profiles);
    void rawRequest(`${url}/ingest?name=held`, { body: 'x' }).catch(() => {});
    await got.count(1);
    const stopped = profiles.stop();
    clock.advanceBy(4_999);
    expect(await settledAfterTurns(stopped)).toBe(false);
    clock.advanceBy(1);
    await stopped;
    expect(got.completed()).toBe(true);
  });

  it('bounds bodies by max_body_size, and takes new options with update', async () => {
    profiles = profilesReceiver({ max_body_size: '1KiB' }, quiet);
    const url = await mount(profiles);
    profiles.subscribe((d) => d.ack());
    const body = 'x'.repeat(2048);
    const refused = await rawRequest(`${url}/ingest?name=big`, { body });
    expect([refused.status, refused.body.toString()]).toEqual([413, 'request body is larger than 1024 bytes\n']);
    profiles.update({ max_body_size: '4KiB' });
    expect((await rawRequest(`${url}/ingest?name=big`, { body })).status).toBe(200);
  });

  it('rejects invalid options with the texts profiles.receive_http gives', () => {
    expect(() => profilesReceiver({ max_body_size: 'lots' }, quiet)).toThrow(
      'profiles.receive_http: attribute "max_body_size": units: invalid lots',
    );
    expect(() => profilesReceiver({ forward_to: [] } as never, quiet)).toThrow('unrecognized attribute name "forward_to"');
    expect(() => profilesReceiver({ http: {} } as never, quiet)).toThrow('unrecognized attribute name "http"');
  });
});
