/**
 * The in-process cases of the profiles conformance fixture (APPEND, APPEND_INGEST and the
 * config-only ones), run on the writer against real loopback servers. The HTTP cases run in
 * test/receivers/profiles/conformance.test.ts.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLabelSet } from '../../../lib/pyroscope/labelset.js';
import { labelsFromObject, sortLabels, type Label } from '../../../lib/pyroscope/labels.js';
import { RemoteStatusError } from '../../../lib/pyroscope/remote-status-error.js';
import type { IngestProfile } from '../../../core/profiles.js';
import { ConfigErrors } from '../../../lib/config/errors.js';
import { shouldRetry } from '../../../sinks/profiles/retry.js';
import { profilesWriteComponent } from '../../../sinks/profiles-write.js';
import { testContext } from '../../receivers/profiles/harness.js';
import {
  decodeWrite,
  instantClock,
  noSignal,
  startIngestServer,
  startPushServer,
  USER_AGENT,
  writeConfigOf,
  writerFor,
  type DownstreamServer,
} from './harness.js';

interface FixtureCase {
  name: string;
  request: { method: string };
}

const here = dirname(fileURLToPath(import.meta.url));
const cases = JSON.parse(readFileSync(join(here, '../../fixtures/conformance/profiles.json'), 'utf8')) as FixtureCase[];
const writerCases = cases.filter((c) => c.request.method !== 'POST' && c.request.method !== 'GET');

let servers: Array<DownstreamServer<unknown>> = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
function track<T extends DownstreamServer<unknown>>(server: T): T {
  servers.push(server);
  return server;
}

const sample = { id: 'test-request-id', rawProfile: Buffer.from('pprofraw') };
const fanOutLabels = labelsFromObject({ __name__: 'test', __type__: 'type', job: 'foo', foo: 'bar' });

function endpointBlock(url: string, extra = ''): string {
  return `endpoint {\n  url = ${JSON.stringify(url)}\n  ${extra}\n}`;
}

const fanOutEndpoint = (url: string, retries = 1) =>
  endpointBlock(
    url,
    `headers = { "X-Test-Header" = "test" }\n  min_backoff_period = "100ms"\n  max_backoff_period = "200ms"\n  max_backoff_retries = ${retries}`,
  );

async function failing(): Promise<DownstreamServer<import('./harness.js').PushCall>> {
  return track(
    await startPushServer(() => {
      throw new ConnectError('test', Code.Unknown);
    }),
  );
}

function ingestProfile(
  labels: Record<string, string> | Label[],
  rawQuery = 'key=value',
  contentType: string[] = ['ct1', 'ct2'],
): IngestProfile {
  return {
    body: Buffer.from('test-profile-data'),
    contentType,
    path: '/ingest',
    rawQuery,
    labels: Array.isArray(labels) ? labels : labelsFromObject(labels),
  };
}

function nameOf(url: string): Map<string, string> {
  return parseLabelSet(new URL(url, 'http://x').searchParams.get('name')!);
}

async function errorOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

const run: Record<string, () => Promise<void>> = {
  'write: fan-out to 10 endpoints, one failing': async () => {
    const failingServer = await failing();
    const ok = await Promise.all(Array.from({ length: 9 }, async () => track(await startPushServer())));
    const { writer } = writerFor(
      `external_labels = { foo = "buzz" }\n${[failingServer, ...ok].map((s) => fanOutEndpoint(s.url)).join('\n')}`,
    );
    const err = await errorOf(writer.append({ labels: fanOutLabels, samples: [sample] }, noSignal));
    expect(err.message).toContain('unknown: test');
    expect(err.message).toBe(`failed to push to endpoint ${failingServer.url} (1 retries): unknown: test`);
    const calls = [failingServer, ...ok].flatMap((s) => s.calls);
    expect(calls).toHaveLength(10);
    for (const call of calls) {
      expect(call.headers.get('x-test-header')).toBe('test');
      expect(call.headers.get('user-agent')).toBe(USER_AGENT);
      expect(call.request.series).toHaveLength(1);
      expect(call.request.series[0]!.labels.map((l) => [l.name, l.value])).toEqual([
        ['__name__', 'test'],
        ['foo', 'buzz'],
        ['job', 'foo'],
      ]);
      expect(call.request.series[0]!.samples.map((s) => [s.ID, Buffer.from(s.rawProfile).toString()])).toEqual([
        ['test-request-id', 'pprofraw'],
      ]);
    }
  },

  'write: fan-out all succeed': async () => {
    const ok = await Promise.all(Array.from({ length: 9 }, async () => track(await startPushServer())));
    const { writer } = writerFor(`external_labels = { foo = "buzz" }\n${ok.map((s) => fanOutEndpoint(s.url)).join('\n')}`);
    await writer.append({ labels: fanOutLabels, samples: [sample] }, noSignal);
    expect(ok.flatMap((s) => s.calls)).toHaveLength(9);
  },

  'write: retry budget is the number of attempts': async () => {
    const failingServer = await failing();
    const clock = instantClock();
    const { writer, registry } = writerFor(fanOutEndpoint(failingServer.url, 3), clock);
    const err = await errorOf(writer.append({ labels: fanOutLabels, samples: [sample] }, noSignal));
    expect(err.message).toBe(`failed to push to endpoint ${failingServer.url} (3 retries): unknown: test`);
    expect(failingServer.calls).toHaveLength(3);
    // Waits are drawn from [100ms, 200ms); the window is already at its cap, so it does not grow.
    expect(clock.waits).toEqual([150, 150]);
    const retries = (await registry.getSingleMetric('profiles_write_retries_total')!.get()).values;
    expect(retries.map((v) => [v.labels.endpoint, v.value])).toEqual([[failingServer.url, 2]]);
  },

  'write: no endpoints is a no-op success, then update adds one': async () => {
    const server = track(await startPushServer());
    const ctx = testContext('profiles.write.test');
    const component = profilesWriteComponent.build(decodeWrite(''), ctx);
    const receiver = (component.exports.receiver as unknown as { value: import('../../../core/profiles.js').ProfilesReceiver }).value;
    const series = { labels: labelsFromObject({ __name__: 'test' }), samples: [{ id: '', rawProfile: Buffer.from('pprofraw') }] };
    await receiver.append(series, noSignal);
    expect(server.calls).toHaveLength(0);
    component.update(decodeWrite(endpointBlock(server.url)));
    await receiver.append(series, noSignal);
    expect(server.calls).toHaveLength(1);
    expect(server.calls[0]!.timeoutMs).toBeGreaterThan(9_000);
    expect(server.calls[0]!.timeoutMs).toBeLessThanOrEqual(10_000);
    await component.stop();
  },

  'write: config parsing and defaults': async () => {
    const config = writeConfigOf(`endpoint {
  url = "http://localhost:4100"
  remote_timeout = "10s"
}
endpoint {
  url = "http://localhost:4200"
  remote_timeout = "5s"
  min_backoff_period = "1s"
  max_backoff_period = "10s"
  max_backoff_retries = 10
}
external_labels = { "foo" = "bar" }`);
    expect(config.externalLabels).toEqual({ foo: 'bar' });
    expect(
      config.endpoints.map((e) => [e.url, e.remoteTimeoutMs, e.minBackoffMs, e.maxBackoffMs, e.maxBackoffRetries, e.retryOnHttp429]),
    ).toEqual([
      ['http://localhost:4100', 10_000, 500, 300_000, 10, true],
      ['http://localhost:4200', 5_000, 1_000, 10_000, 10, true],
    ]);
  },

  'write: conflicting auth settings': async () => {
    const ctx = testContext('profiles.write.test');
    let thrown: unknown;
    try {
      profilesWriteComponent.build(
        decodeWrite(
          'endpoint {\n  url = "http://localhost:4100"\n  bearer_token = "token"\n  bearer_token_file = "/path/to/file.token"\n}',
        ),
        ctx,
      );
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigErrors);
    expect((thrown as ConfigErrors).errors.map((e) => e.message)).toEqual([
      'write.alloy:2:1: profiles.write "test" > endpoint: at most one of basic_auth, authorization, oauth2, bearer_token & bearer_token_file must be configured',
    ]);
  },

  'write ingest: headers, content types, external labels, query': async () => {
    const server = track(await startIngestServer());
    const { writer } = writerFor(
      `external_labels = { env = "prod", cluster = "cluster-1" }\n${endpointBlock(
        server.url,
        'headers = { "ContentType" = "evil-content-type", "X-Good-Header" = "i-am-so-good" }\n  max_backoff_retries = 3\n  min_backoff_period = "1ms"\n  max_backoff_period = "1ms"',
      )}`,
    );
    await writer.appendIngest(ingestProfile({ __name__: 'my.awesome.app.cpu', env: 'staging', region: 'us-west-1' }), noSignal);
    expect(server.calls).toHaveLength(1);
    const call = server.calls[0]!;
    expect(new URL(call.url, 'http://x').pathname).toBe('/ingest');
    expect(call.headers['x-good-header']).toBe('i-am-so-good');
    expect(contentTypes(call.rawHeaders)).toEqual(['ct1', 'ct2']);
    expect(Object.fromEntries(nameOf(call.url))).toEqual({
      __name__: 'my.awesome.app.cpu',
      env: 'prod',
      cluster: 'cluster-1',
      region: 'us-west-1',
    });
    expect(new URL(call.url, 'http://x').searchParams.get('key')).toBe('value');
    expect(call.body.toString()).toBe('test-profile-data');
  },

  'write ingest: 400 from one of three endpoints': async () => {
    const ok0 = track(await startIngestServer());
    const bad = track(await startIngestServer(() => ({ status: 400, body: "I don't like your profile" })));
    const ok2 = track(await startIngestServer());
    const { writer } = writerFor([ok0, bad, ok2].map((s, i) => endpointBlock(s.url, `headers = { "X-Server-ID" = "${i}" }`)).join('\n'));
    const err = await errorOf(writer.appendIngest(ingestProfile({ __name__: 'test.profile' }), noSignal));
    expect(err.message).toBe(
      `failed to ingest to endpoint ${bad.url} (0 retries): remote error: pyroscope write error: status=400 msg=I don't like your profile`,
    );
    expect([ok0, bad, ok2].map((s) => s.calls.length)).toEqual([1, 1, 1]);
    expect([ok0, bad, ok2].map((s) => s.calls[0]!.headers['x-server-id'])).toEqual(['0', '1', '2']);
  },

  'write ingest: retry after 503 then success': async () => {
    const server = track(await startIngestServer((n) => (n === 0 ? { status: 503, body: 'busy' } : { status: 200 })));
    const { writer } = writerFor(endpointBlock(server.url, 'min_backoff_period = "1ms"\n  max_backoff_period = "1ms"'));
    await writer.appendIngest(ingestProfile({ __name__: 'test.profile', service: 'test-service' }), noSignal);
    expect(server.calls).toHaveLength(2);
  },

  'write ingest: 503 forever exhausts retries': async () => {
    const server = track(await startIngestServer(() => ({ status: 503, body: 'service always unavailable' })));
    const { writer } = writerFor(
      endpointBlock(server.url, 'max_backoff_retries = 3\n  min_backoff_period = "1ms"\n  max_backoff_period = "1ms"'),
    );
    const err = await errorOf(writer.appendIngest(ingestProfile({ __name__: 'test.profile' }), noSignal));
    expect(err.message).toBe(
      `failed to ingest to endpoint ${server.url} (3 retries): remote error: pyroscope write error: status=503 msg=service always unavailable`,
    );
    expect(server.calls).toHaveLength(3);
  },

  'write ingest: service_name becomes __name__': async () => {
    const server = track(await startIngestServer());
    const { writer } = writerFor(endpointBlock(server.url));
    await writer.appendIngest(ingestProfile({ __name__: 'original-name', service_name: 'my-service-grafana' }), noSignal);
    const name = nameOf(server.calls[0]!.url);
    expect(name.get('__name__')).toBe('my-service-grafana');
    expect(name.get('service_name')).toBe('my-service-grafana');
  },

  'write ingest: label validation': async () => {
    const server = track(await startIngestServer());
    const { writer } = writerFor(endpointBlock(server.url));
    await writer.appendIngest(ingestProfile({ service_name: 'my-service', valid_label: 'value', __name__: 'my-service' }, ''), noSignal);
    const invalid: Array<[Label[], string]> = [
      [
        sortLabels([
          { name: '__name__', value: 'svc' },
          { name: 'duplicate', value: 'a' },
          { name: 'duplicate', value: 'b' },
        ]),
        'invalid labels in profile: duplicate label name: duplicate',
      ],
      [
        labelsFromObject({ __name__: 'svc', 'invalid-label': 'v' }),
        "invalid labels in profile: invalid label name: invalid label name: invalid-label: character is not allowed: '-'",
      ],
      // A value that cannot be encoded as UTF-8 (a lone surrogate is what a JS string has instead of a 0xff byte).
      [labelsFromObject({ __name__: 'svc', bad_value: '\udcff' }), 'invalid labels in profile: invalid label value for bad_value: \udcff'],
    ];
    for (const [labels, message] of invalid) {
      const err = await errorOf(writer.appendIngest(ingestProfile(labels, ''), noSignal));
      expect(err.message).toBe(message);
    }
    expect(server.calls).toHaveLength(1);
  },

  'write: retry classification table': async () => {
    const status = (code: number) => new RemoteStatusError(code, '');
    expect([shouldRetry(status(429), true), shouldRetry(status(429), false)]).toEqual([true, false]);
    expect([shouldRetry(status(408), true), shouldRetry(status(408), false)]).toEqual([true, true]);
    expect([shouldRetry(status(503), true), shouldRetry(status(503), false)]).toEqual([true, true]);
    expect([shouldRetry(status(400), true), shouldRetry(status(400), false)]).toEqual([false, false]);
    const exhausted = new ConnectError('slow down', Code.ResourceExhausted);
    expect([shouldRetry(exhausted, true), shouldRetry(exhausted, false)]).toEqual([true, false]);
  },

  'write push: resource_exhausted with retry_on_http_429 = false': async () => {
    const server = track(await startPushServer(() => Promise.reject(new ConnectError('slow down', Code.ResourceExhausted))));
    const { writer } = writerFor(
      endpointBlock(
        server.url,
        'max_backoff_retries = 3\n  min_backoff_period = "1ms"\n  max_backoff_period = "1ms"\n  retry_on_http_429 = false',
      ),
    );
    const err = await errorOf(writer.append({ labels: labelsFromObject({ __name__: 'test.profile' }), samples: [sample] }, noSignal));
    expect(err.message).toContain('resource_exhausted');
    expect(server.calls).toHaveLength(1);
  },

  'write push: resource_exhausted with retry_on_http_429 = true': async () => {
    const server = track(await startPushServer(() => Promise.reject(new ConnectError('slow down', Code.ResourceExhausted))));
    const { writer } = writerFor(
      endpointBlock(
        server.url,
        'max_backoff_retries = 3\n  min_backoff_period = "1ms"\n  max_backoff_period = "1ms"\n  retry_on_http_429 = true',
      ),
    );
    const err = await errorOf(writer.append({ labels: labelsFromObject({ __name__: 'test.profile' }), samples: [sample] }, noSignal));
    expect(err.message).toBe(`failed to push to endpoint ${server.url} (3 retries): resource_exhausted: slow down`);
    expect(server.calls).toHaveLength(3);
  },

  'write ingest: 429 with retry disabled': async () => {
    const server = track(await startIngestServer(() => ({ status: 429, body: 'too many requests' })));
    const { writer } = writerFor(
      endpointBlock(
        server.url,
        'max_backoff_retries = 3\n  min_backoff_period = "1ms"\n  max_backoff_period = "1ms"\n  retry_on_http_429 = false',
      ),
    );
    const err = await errorOf(writer.appendIngest(ingestProfile({ __name__: 'test.profile' }), noSignal));
    expect(err.message).toContain('status=429');
    expect(server.calls).toHaveLength(1);
  },

  'write ingest: 429 with retry enabled': async () => {
    const server = track(await startIngestServer(() => ({ status: 429, body: 'too many requests' })));
    const { writer } = writerFor(
      endpointBlock(server.url, 'max_backoff_retries = 3\n  min_backoff_period = "1ms"\n  max_backoff_period = "1ms"'),
    );
    const err = await errorOf(writer.appendIngest(ingestProfile({ __name__: 'test.profile' }), noSignal));
    expect(err.message).toContain('status=429');
    expect(server.calls).toHaveLength(3);
  },

  'write push: label validation': async () => {
    const server = track(await startPushServer());
    const { writer } = writerFor(endpointBlock(server.url));
    const send = (labels: Label[]) => writer.append({ labels, samples: [sample] }, noSignal);
    await send(labelsFromObject({ __name__: 'svc', valid_label: 'v' }));
    const invalid: Array<[Label[], string]> = [
      [
        sortLabels([
          { name: '__name__', value: 'svc' },
          { name: 'duplicate', value: 'a' },
          { name: 'duplicate', value: 'b' },
        ]),
        'invalid labels in profile: duplicate label name: duplicate',
      ],
      [
        labelsFromObject({ __name__: 'svc', 'invalid-label-name': 'v' }),
        "invalid labels in profile: invalid label name: invalid label name: invalid-label-name: character is not allowed: '-'",
      ],
      [
        sortLabels([
          { name: '__name__', value: 'a' },
          { name: '__name__', value: 'b' },
        ]),
        'invalid labels in profile: duplicate label name: __name__',
      ],
      [labelsFromObject({ __name__: 'svc', bad_value: '\udcff' }), 'invalid labels in profile: invalid label value for bad_value: \udcff'],
    ];
    for (const [labels, message] of invalid) expect((await errorOf(send(labels))).message).toBe(message);
    expect(server.calls).toHaveLength(1);
  },
};

function contentTypes(rawHeaders: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'content-type') out.push(rawHeaders[i + 1]!);
  return out;
}

describe('profiles.write conformance (in-process cases)', () => {
  it('has an implementation for every in-process case of the fixture', () => {
    expect(Object.keys(run).sort()).toEqual(writerCases.map((c) => c.name).sort());
  });

  for (const c of writerCases) {
    it(c.name, async () => {
      await run[c.name]!();
    });
  }
});
