import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { profileSource } from '../../core/profile-delivery.js';
import { labelsFromObject } from '../../lib/pyroscope/labels.js';
import type { IngestProfile, ProfilesReceiver } from '../../core/profiles.js';
import { PusherService } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { profilesReceiver, type ReconfigurableProfilesSource } from '../../receivers/index.js';
import { profilesWrite, type ProfilesWriteSink } from '../../sinks/index.js';
import { pprofBytes } from '../receivers/profiles/harness.js';
import { startIngestServer, startPushServer, USER_AGENT } from './profiles/harness.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function track<T extends { close?: () => Promise<void>; stop?: () => Promise<void> }>(thing: T): T {
  cleanups.push(() => (thing.stop ?? thing.close)!.call(thing));
  return thing;
}

async function mounted(source: ReconfigurableProfilesSource): Promise<string> {
  const server: Server = createServer(new Koa().use(source.middleware()).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const never = new AbortController().signal;

describe('profilesWrite', () => {
  it('sends what a profilesReceiver delivers on to a Push server, the client answered once the server has it', async () => {
    const downstream = track(await startPushServer());
    const registry = new Registry();
    const sink = track(
      profilesWrite(
        { endpoint: [{ url: downstream.url, headers: { 'X-Scope-OrgID': 'team-a' } }], external_labels: { cluster: 'dev' } },
        { registry, id: 'to_pyroscope', log: () => {} },
      ),
    );
    const source = track(profilesReceiver({}, { registry: new Registry(), log: () => {} }));
    source.subscribe(sink);
    const client = createClient(PusherService, createConnectTransport({ baseUrl: await mounted(source), httpVersion: '1.1' }));
    const profile = pprofBytes(4);
    await client.push({
      series: [{ labels: [{ name: 'service_name', value: 'checkout' }], samples: [{ ID: 'uuid-1', rawProfile: profile }] }],
    });

    expect(downstream.calls).toHaveLength(1);
    const call = downstream.calls[0]!;
    expect(
      call.request.series.map((s) => ({ labels: s.labels.map((l) => [l.name, l.value]), samples: s.samples.map((x) => x.ID) })),
    ).toEqual([
      {
        labels: [
          ['cluster', 'dev'],
          ['service_name', 'checkout'],
        ],
        samples: ['uuid-1'],
      },
    ]);
    expect(Buffer.from(call.request.series[0]!.samples[0]!.rawProfile).equals(profile)).toBe(true);
    expect(call.headers.get('user-agent')).toContain(USER_AGENT);
    expect(call.headers.get('x-scope-orgid')).toBe('team-a');
    const metrics = await registry.metrics();
    expect(metrics).toContain(
      `profiles_write_sent_bytes_total{component_path="/",component_id="to_pyroscope",endpoint="${downstream.url}"} ${profile.byteLength}`,
    );
    expect(metrics).toContain(
      `profiles_write_sent_profiles_total{component_path="/",component_id="to_pyroscope",endpoint="${downstream.url}"} 1`,
    );
  });

  it('acknowledges an ingest delivery once the endpoint took it, and refuses it with the endpoint status otherwise', async () => {
    let status = 200;
    const downstream = track(await startIngestServer(() => ({ status })));
    const sink = track(
      profilesWrite({ endpoint: [{ url: downstream.url, max_backoff_retries: 1 }] }, { registry: new Registry(), log: () => {} }),
    );
    const answers: string[] = [];
    // A source whose sends the test makes: each settles with the sink's ack or nack.
    let upstream: ProfilesReceiver | undefined;
    const source = profileSource((receiver) => {
      upstream = receiver;
      return { stop: async () => {} };
    });
    const send = (profile: IngestProfile) =>
      upstream!.appendIngest(profile, never).then(
        () => answers.push('ack'),
        (err: Error) => answers.push(`nack ${err.message}`),
      );
    source.subscribe(sink);
    const profile = {
      body: Buffer.from('pprof'),
      contentType: ['binary/octet-stream'],
      path: '/ingest',
      rawQuery: 'name=app&from=1',
      labels: labelsFromObject({ service_name: 'app' }),
    };
    void send(profile);
    await expect.poll(() => answers).toEqual(['ack']);
    expect(downstream.calls.map((c) => [c.url, c.body.toString()])).toEqual([['/ingest?from=1&name=app%7Bservice_name%3Dapp%7D', 'pprof']]);
    status = 503;
    void send(profile);
    await expect
      .poll(() => answers)
      .toEqual([
        'ack',
        `nack failed to ingest to endpoint ${downstream.url} (1 retries): remote error: pyroscope write error: status=503 msg=`,
      ]);
  });

  it('is a receiver too, and takes new endpoints with update', async () => {
    const first = track(await startPushServer());
    const second = track(await startPushServer());
    const sink: ProfilesWriteSink = track(profilesWrite({ endpoint: [{ url: first.url }] }, { registry: new Registry(), log: () => {} }));
    const series = { labels: labelsFromObject({ service_name: 'svc' }), samples: [{ id: '', rawProfile: Buffer.from('x') }] };
    await sink.append(series, never);
    sink.update({ endpoint: [{ url: second.url }] });
    await sink.append(series, never);
    expect([first.calls.length, second.calls.length]).toEqual([1, 1]);
  });

  it('rejects invalid options with the texts profiles.write gives', () => {
    expect(() => profilesWrite({ endpoint: [{ url: 'ftp://x' }] })).toThrow(
      'profiles.write > endpoint: unsupported scheme in url "ftp://x": expected http or https',
    );
    expect(() => profilesWrite({ endpoint: [{}] } as never)).toThrow('profiles.write > endpoint: missing required attribute "url"');
    expect(() => profilesWrite({ forward_to: [] } as never)).toThrow('profiles.write: unrecognized attribute name "forward_to"');
  });
});
