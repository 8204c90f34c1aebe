import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { CanceledError } from '../../../lib/go/context-errors.js';
import { labelsFromObject } from '../../../lib/pyroscope/labels.js';
import { scopedDeadline } from '../../../core/deadline.js';
import type { IngestProfile } from '../../../core/profiles.js';
import { freePort } from '../../receivers/profiles/harness.js';
import { instantClock, noSignal, startIngestServer, startPushServer, writerFor, writerOn, type DownstreamServer } from './harness.js';

let servers: Array<DownstreamServer<unknown>> = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
function track<T extends DownstreamServer<unknown>>(server: T): T {
  servers.push(server);
  return server;
}

const dir = mkdtempSync(join(tmpdir(), 'rivulet-write-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const series = {
  labels: labelsFromObject({ __name__: 'cpu', service_name: 'svc' }),
  samples: [{ id: 'a', rawProfile: Buffer.from('12345') }],
};
const ingest = (
  rawQuery = 'from=1',
  labels: Record<string, string> = { __name__: 'app', service_name: 'app', env: 'prod' },
): IngestProfile => ({
  body: Buffer.from('body'),
  contentType: ['application/octet-stream'],
  path: '/ingest',
  rawQuery,
  labels: labelsFromObject(labels),
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('profiles.write, Push path', () => {
  it('drops reserved labels except __name__ and __delta__ and lets external labels win', async () => {
    const server = track(await startPushServer());
    const { writer } = writerFor(`external_labels = { service_name = "override", team = "core" }\nendpoint {\n  url = "${server.url}"\n}`);
    await writer.append(
      { ...series, labels: labelsFromObject({ __name__: 'cpu', __delta__: 'false', __period_type__: 'x', service_name: 'svc' }) },
      noSignal,
    );
    expect(server.calls[0]!.request.series[0]!.labels.map((l) => `${l.name}=${l.value}`)).toEqual([
      '__delta__=false',
      '__name__=cpu',
      'service_name=override',
      'team=core',
    ]);
  });

  it('sends an empty X-Alloy-Id and the Rivulet User-Agent on every Push request, over an endpoint header of the same name', async () => {
    const server = track(await startPushServer());
    const { writer } = writerFor(
      `endpoint {\n  url = "${server.url}"\n  headers = { "X-Alloy-Id" = "mine", "User-Agent" = "mine" }\n  max_backoff_retries = 1\n}`,
    );
    await writer.append(series, noSignal);
    await writer.append(series, noSignal);
    expect(server.calls.map((c) => [c.headers.get('x-alloy-id'), c.headers.get('user-agent')])).toEqual([
      ['', 'Rivulet/0.1.0'],
      ['', 'Rivulet/0.1.0'],
    ]);
  });

  it('refuses a label with an empty name as a duplicate name, sending nothing', async () => {
    const server = track(await startPushServer());
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n}`);
    const labels = [
      { name: '', value: 'x' },
      { name: 'app', value: 'a' },
    ];
    const err = await rejection(writer.append({ ...series, labels }, noSignal));
    expect(err.message).toBe('invalid labels in profile: duplicate label name: ');
    const ingestErr = await rejection(writer.appendIngest({ ...ingest(), labels }, noSignal));
    expect(ingestErr.message).toBe('invalid labels in profile: duplicate label name: ');
    expect(server.calls).toHaveLength(0);
  });

  it('sends remote_timeout as the time left when the caller has no deadline', async () => {
    const server = track(await startPushServer());
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n  remote_timeout = "3s"\n}`);
    await writer.append(series, noSignal);
    expect(server.calls[0]!.timeoutMs).toBeGreaterThan(2_500);
    expect(server.calls[0]!.timeoutMs).toBeLessThanOrEqual(3_000);
  });

  it('sends the caller time left when it is shorter than remote_timeout', async () => {
    const server = track(await startPushServer());
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n  remote_timeout = "10s"\n}`);
    const deadline = scopedDeadline(Date.now() + 1_500);
    await writer.append(series, deadline.signal);
    deadline.release();
    expect(server.calls[0]!.timeoutMs).toBeGreaterThan(1_000);
    expect(server.calls[0]!.timeoutMs).toBeLessThanOrEqual(1_500);
  });

  it('stops retrying at the caller deadline', async () => {
    const server = track(await startPushServer(() => new Promise((r) => setTimeout(r, 400))));
    const { writer } = writerFor(
      `endpoint {\n  url = "${server.url}"\n  remote_timeout = "100ms"\n  max_backoff_retries = 0\n  min_backoff_period = "10ms"\n  max_backoff_period = "10ms"\n}`,
      {
        random: () => 0,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      },
    );
    const deadline = scopedDeadline(Date.now() + 350);
    const started = Date.now();
    const err = await rejection(writer.append(series, deadline.signal));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(err.message).toMatch(
      new RegExp(`^failed to push to endpoint ${server.url} \\(\\d+ retries\\): deadline_exceeded: context deadline exceeded$`),
    );
    expect(server.calls.length).toBeGreaterThanOrEqual(2);
    expect(server.calls.length).toBeLessThanOrEqual(4);
  });

  it('sends nothing once the caller deadline has passed', async () => {
    const server = track(await startPushServer());
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n}`);
    const err = await rejection(writer.append(series, scopedDeadline(Date.now() - 1).signal));
    expect(err.message).toBe(`failed to push to endpoint ${server.url} (1 retries): deadline_exceeded: context deadline exceeded`);
    expect(server.calls).toHaveLength(0);
  });

  it('retries a bare 400 from a proxy, which a Connect client reads as internal', async () => {
    let calls = 0;
    const proxy = createServer((req, res) => {
      calls++;
      req.resume();
      res.writeHead(400, { 'content-type': 'text/html' });
      res.end('<html>bad request</html>');
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    try {
      const { writer } = writerFor(`endpoint {\n  url = "${url}"\n  max_backoff_retries = 3\n}`);
      const err = await rejection(writer.append(series, noSignal));
      expect(err.message).toMatch(new RegExp(`^failed to push to endpoint ${url} \\(3 retries\\): internal: `));
      expect(calls).toBe(3);
    } finally {
      proxy.close();
    }
  });

  it('retries a refused connection as unavailable', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const clock = instantClock();
    const { writer } = writerFor(`endpoint {\n  url = "${url}"\n  max_backoff_retries = 2\n}`, clock);
    const err = await rejection(writer.append(series, noSignal));
    expect(err.message).toMatch(new RegExp(`^failed to push to endpoint ${url} \\(2 retries\\): unavailable: `));
    expect(clock.waits).toHaveLength(1);
  });

  it('does not retry a canceled call', async () => {
    const controller = new AbortController();
    // Canceled once the call has reached the server, however long a loaded machine took to send it.
    const server = track(
      await startPushServer(() => {
        setTimeout(() => controller.abort(new CanceledError()), 50);
        return new Promise((r) => setTimeout(r, 300));
      }),
    );
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n}`);
    const err = await rejection(writer.append(series, controller.signal));
    expect(err.message).toBe(`failed to push to endpoint ${server.url} (0 retries): canceled: context canceled`);
    expect(server.calls).toHaveLength(1);
  });

  it('sends credentials: basic auth, a bearer token file, an authorization block', async () => {
    const server = track(await startPushServer());
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'from-file\n');
    for (const auth of [
      'basic_auth {\n  username = "u"\n  password = "p"\n}',
      `bearer_token_file = ${JSON.stringify(tokenFile)}`,
      'authorization {\n  type = "Token"\n  credentials = "secret"\n}',
    ]) {
      const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n  ${auth}\n}`);
      await writer.append(series, noSignal);
    }
    expect(server.calls.map((c) => c.headers.get('authorization'))).toEqual([
      `Basic ${Buffer.from('u:p').toString('base64')}`,
      'Bearer from-file',
      'Token secret',
    ]);
  });

  it('counts bytes and profiles sent and dropped per endpoint', async () => {
    const ok = track(await startPushServer());
    const down = `http://127.0.0.1:${await freePort()}`;
    const { writer, registry } = writerFor(
      `endpoint {\n  url = "${ok.url}"\n}\nendpoint {\n  url = "${down}"\n  max_backoff_retries = 1\n}`,
    );
    await rejection(writer.append(series, noSignal));
    const value = async (name: string, endpoint: string) =>
      (await registry.getSingleMetric(name)!.get()).values.find((v) => v.labels.endpoint === endpoint)?.value;
    expect(await value('profiles_write_sent_bytes_total', ok.url)).toBe(5);
    expect(await value('profiles_write_sent_profiles_total', ok.url)).toBe(1);
    expect(await value('profiles_write_dropped_bytes_total', down)).toBe(5);
    expect(await value('profiles_write_dropped_profiles_total', down)).toBe(1);
    const latency = (await registry.getSingleMetric('profiles_write_latency')!.get()).values.filter(
      (v) => (v as { metricName?: string }).metricName === 'profiles_write_latency_count',
    );
    expect(latency.map((v) => `${v.labels.endpoint} ${v.labels.type}`).sort()).toEqual(
      [`- push_total`, `${down} push_downstream`, `${down} push_endpoint`, `${ok.url} push_downstream`, `${ok.url} push_endpoint`].sort(),
    );
  });
});

describe('profiles.write, ingest path', () => {
  it('joins /ingest onto the endpoint path and replaces the endpoint query', async () => {
    const server = track(await startIngestServer());
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}/base/?tenant=dropped"\n}`);
    await writer.appendIngest(ingest('until=2&from=1&name=ignored&spyName=my+spy'), noSignal);
    expect(server.calls[0]!.url).toBe('/base/ingest?from=1&name=app%7Benv%3Dprod%2Cservice_name%3Dapp%7D&spyName=my+spy&until=2');
  });

  it('sends an empty X-Alloy-Id on every ingest request and no User-Agent of its own', async () => {
    const server = track(await startIngestServer((n) => ({ status: n === 0 ? 503 : 200 })));
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n  headers = { "X-Alloy-Id" = "mine" }\n}`);
    await writer.appendIngest(ingest(), noSignal);
    const sent = (raw: string[]) => raw.filter((_, i) => i % 2 === 0).map((name, i) => `${name}: ${raw[2 * i + 1]}`);
    expect(server.calls.map((c) => sent(c.rawHeaders).filter((h) => /^(x-alloy-id|user-agent):/i.test(h)))).toEqual([
      ['X-Alloy-Id: '],
      ['X-Alloy-Id: '],
    ]);
  });

  it('drops empty external labels from the name', async () => {
    const server = track(await startIngestServer());
    const { writer } = writerFor(`external_labels = { env = "" }\nendpoint {\n  url = "${server.url}"\n}`);
    await writer.appendIngest(ingest(''), noSignal);
    expect(new URL(server.calls[0]!.url, 'http://x').searchParams.get('name')).toBe('app{service_name=app}');
  });

  it('sends no Content-Type when none came in, unless an endpoint header sets one', async () => {
    const server = track(await startIngestServer());
    const plain = writerFor(`endpoint {\n  url = "${server.url}"\n}`).writer;
    await plain.appendIngest({ ...ingest(), contentType: [] }, noSignal);
    const withHeader = writerFor(`endpoint {\n  url = "${server.url}"\n  headers = { "Content-Type" = "from/endpoint" }\n}`).writer;
    await withHeader.appendIngest({ ...ingest(), contentType: [] }, noSignal);
    await withHeader.appendIngest(ingest(), noSignal);
    expect(server.calls.map((c) => c.headers['content-type'])).toEqual([undefined, 'from/endpoint', 'application/octet-stream']);
  });

  it('reports a refused connection as a request failure and retries it', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const { writer } = writerFor(`endpoint {\n  url = "${url}"\n  max_backoff_retries = 2\n}`);
    const err = await rejection(writer.appendIngest(ingest(), noSignal));
    expect(err.message).toMatch(
      new RegExp(`^failed to ingest to endpoint ${url} \\(2 retries\\): do request: Post "${url}/ingest\\?[^"]*": connect ECONNREFUSED`),
    );
  });

  it('times an attempt out after remote_timeout', async () => {
    const server = track(await startIngestServer(() => new Promise((r) => setTimeout(() => r({ status: 200 }), 500))));
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n  remote_timeout = "100ms"\n  max_backoff_retries = 1\n}`);
    const err = await rejection(writer.appendIngest(ingest(), noSignal));
    expect(err.message).toMatch(/\(1 retries\): do request: Post "[^"]+": context deadline exceeded$/);
  });

  it('refuses an empty label set without sending', async () => {
    const server = track(await startIngestServer());
    const { writer } = writerFor(`endpoint {\n  url = "${server.url}"\n}`);
    const err = await rejection(writer.appendIngest(ingest('', {}), noSignal));
    expect(err.message).toBe('invalid labels in profile: service name is required');
    expect(server.calls).toHaveLength(0);
  });

  it('succeeds without I/O when there are no endpoints', async () => {
    const { writer } = writerFor('');
    await writer.appendIngest(ingest(), noSignal);
    await writer.append(series, noSignal);
  });
});

interface Hop {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A server on `host` answering every request with `status` and `Location: location(n)` (none when undefined). */
async function startRedirectServer(status: number, location: (n: number) => string | undefined, host = '127.0.0.1') {
  const hops: Hop[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hops.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      const to = location(hops.length - 1);
      res.writeHead(status, to === undefined ? {} : { Location: to });
      res.end('moved');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const url = `http://${host}:${(server.address() as { port: number }).port}`;
  return track({ url, calls: hops, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}

describe('profiles.write, ingest redirects (follow_redirects)', () => {
  it.each([307, 308])('follows a %i with the same method, body and headers, and a Referer', async (status) => {
    const target = track(await startIngestServer());
    const from = await startRedirectServer(status, () => `${target.url}/moved/ingest?x=1`);
    const { writer } = writerFor(`endpoint {\n  url = "${from.url}"\n  bearer_token = "t0ken"\n  max_backoff_retries = 1\n}`);
    await writer.appendIngest(ingest(), noSignal);
    const first = `${from.url}${from.calls[0]!.url}`;
    expect(target.calls).toHaveLength(1);
    const hop = target.calls[0]!;
    expect([hop.url, hop.body.toString()]).toEqual(['/moved/ingest?x=1', 'body']);
    expect([hop.headers['content-type'], hop.headers['content-length'], hop.headers['x-alloy-id'], hop.headers.referer]).toEqual([
      'application/octet-stream',
      '4',
      '',
      first,
    ]);
    expect(hop.headers.authorization).toBe('Bearer t0ken');
  });

  it.each([301, 302, 303])('follows a %i as a GET without a body, keeping the other headers', async (status) => {
    const target = await startRedirectServer(200, () => undefined);
    const from = await startRedirectServer(status, () => `${target.url}/elsewhere`);
    const { writer } = writerFor(`endpoint {\n  url = "${from.url}"\n  headers = { "X-Scope-OrgID" = "t1" }\n  max_backoff_retries = 1\n}`);
    await writer.appendIngest(ingest(), noSignal);
    expect(from.calls.map((h) => h.method)).toEqual(['POST']);
    const hop = target.calls[0]!;
    expect([hop.method, hop.url, hop.body]).toEqual(['GET', '/elsewhere', '']);
    expect([hop.headers['content-length'], hop.headers['content-type'], hop.headers['x-scope-orgid'], hop.headers['x-alloy-id']]).toEqual([
      undefined,
      'application/octet-stream',
      't1',
      '',
    ]);
    expect(hop.headers.referer).toBe(`${from.url}${from.calls[0]!.url}`);
  });

  it('reports a redirect as a status when follow_redirects is false, and one without Location in any case', async () => {
    const target = track(await startIngestServer());
    const from = await startRedirectServer(307, () => target.url);
    const { writer } = writerFor(`endpoint {\n  url = "${from.url}"\n  follow_redirects = false\n  max_backoff_retries = 1\n}`);
    const err = await rejection(writer.appendIngest(ingest(), noSignal));
    expect(err.message).toBe(
      `failed to ingest to endpoint ${from.url} (0 retries): remote error: pyroscope write error: status=307 msg=moved`,
    );
    expect(target.calls).toHaveLength(0);

    const nowhere = await startRedirectServer(302, () => undefined);
    const following = writerFor(`endpoint {\n  url = "${nowhere.url}"\n  max_backoff_retries = 1\n}`).writer;
    const err2 = await rejection(following.appendIngest(ingest(), noSignal));
    expect(err2.message).toBe(
      `failed to ingest to endpoint ${nowhere.url} (0 retries): remote error: pyroscope write error: status=302 msg=moved`,
    );
  });

  it('keeps an endpoint Cookie on a redirect to the same host name on another port, as Go compares names without ports', async () => {
    const target = track(await startIngestServer());
    const from = await startRedirectServer(307, () => `${target.url}/ingest`);
    const { writer } = writerFor(`endpoint {\n  url = "${from.url}"\n  headers = { "Cookie" = "c=1" }\n}`);
    await writer.appendIngest(ingest(), noSignal);
    expect(target.calls[0]!.headers.cookie).toBe('c=1');
  });

  it('drops an endpoint Cookie or Authorization header on a redirect to another host, but not the configured credentials', async () => {
    // Another loopback address is another host name.
    const target = await startRedirectServer(200, () => undefined, '127.0.0.2');
    const from = await startRedirectServer(307, () => `${target.url}/ingest`);
    const { writer } = writerFor(
      `endpoint {\n  url = "${from.url}"\n  headers = { "Cookie" = "c=1", "X-Scope-OrgID" = "t1" }\n  basic_auth {\n    username = "u"\n    password = "p"\n  }\n}`,
    );
    await writer.appendIngest(ingest(), noSignal);
    expect([from.calls[0]!.headers.cookie, from.calls[0]!.headers.authorization]).toEqual(['c=1', 'Basic dTpw']);
    const hop = target.calls[0]!.headers;
    expect([hop.cookie, hop.authorization, hop['x-scope-orgid']]).toEqual([undefined, 'Basic dTpw', 't1']);
  });

  it('stops after 10 redirects', async () => {
    const loop = await startRedirectServer(307, (n) => `/ingest?hop=${n + 1}`);
    const { writer } = writerFor(`endpoint {\n  url = "${loop.url}"\n  max_backoff_retries = 1\n}`);
    const err = await rejection(writer.appendIngest(ingest(), noSignal));
    expect(loop.calls).toHaveLength(10);
    expect(err.message).toBe(
      `failed to ingest to endpoint ${loop.url} (1 retries): do request: Post "/ingest?hop=10": stopped after 10 redirects`,
    );
  });
});

describe('ProfilesWriter on its component clock', () => {
  /** A clock at a fixed moment, moved only by the test. */
  const virtualClock = () => new ManualClock(BigInt(Date.UTC(2030, 0, 1)) * 1_000_000n);
  /** Whether `promise` has settled, after the I/O and microtasks under way have run. */
  const settledYet = async (promise: Promise<unknown>) => {
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    return settled;
  };

  it('ends an unanswered attempt when the clock reaches remote_timeout, not the wall clock', async () => {
    let answer: () => void = () => {};
    const server = track(await startPushServer(() => new Promise<void>((resolve) => (answer = resolve))));
    const clock = virtualClock();
    const { writer } = writerOn(`endpoint {\n  url = "${server.url}"\n  remote_timeout = "3s"\n  max_backoff_retries = 1\n}`, clock);
    const pushing = writer.append(series, noSignal);
    const failure = pushing.then(
      () => new Error('the push succeeded'),
      (err: Error) => err,
    );
    await vi.waitFor(() => expect(server.calls).toHaveLength(1));
    expect(server.calls[0]!.timeoutMs).toBeGreaterThan(2_500);
    expect(server.calls[0]!.timeoutMs).toBeLessThanOrEqual(3_000);
    clock.advanceBy(2_999);
    expect(await settledYet(pushing)).toBe(false);
    clock.advanceBy(1);
    expect((await failure).message).toBe(
      `failed to push to endpoint ${server.url} (1 retries): deadline_exceeded: context deadline exceeded`,
    );
    answer();
  });

  it('waits out the retry backoff on the clock and times the call on it', async () => {
    const server = track(
      await startPushServer((n) => {
        if (n === 0) throw new ConnectError('try later', Code.Unavailable);
      }),
    );
    const clock = virtualClock();
    const failures: string[] = [];
    const { writer, registry } = writerOn(
      `endpoint {\n  url = "${server.url}"\n  min_backoff_period = "2s"\n  max_backoff_period = "2s"\n}`,
      clock,
      (_level, message) => failures.push(message),
    );
    const pushing = writer.append(series, noSignal);
    // The writer logs a failure just before it starts waiting out the backoff.
    await vi.waitFor(() => expect(failures).toEqual(['failed to push to endpoint']));
    clock.advanceBy(1_999);
    expect(await settledYet(pushing)).toBe(false);
    expect(server.calls).toHaveLength(1);
    clock.advanceBy(1);
    await pushing;
    expect(server.calls).toHaveLength(2);
    const text = await registry.metrics();
    const labels = `component_path="/",component_id="profiles.write.test",endpoint="${server.url}"`;
    expect(text).toContain(`profiles_write_retries_total{${labels}} 1\n`);
    expect(text).toContain(
      `profiles_write_latency_sum{component_path="/",component_id="profiles.write.test",endpoint="-",type="push_total"} 2\n`,
    );
    expect(text).toContain(`profiles_write_latency_sum{${labels},type="push_endpoint"} 2\n`);
    expect(text).toContain(`profiles_write_latency_sum{${labels},type="push_downstream"} 0\n`);
  });
});
