/**
 * A whole relay: client → profiles.receive_http "a" → profiles.write → profiles.receive_http "b"
 * → profiles.echo, built from one config. Labels and bytes arrive intact and the client's
 * deadline travels through both hops.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PusherService } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import type { ProfilesReceiveHttp } from '../../../receivers/profiles-receive-http.js';
import '../../../index.js';
import { freePort, pprofBytes, rawRequest, testContext } from './harness.js';

let graph: ComponentGraph;
let entryUrl: string;
let output: () => string;
let rawDir: string;

beforeAll(async () => {
  rawDir = mkdtempSync(join(tmpdir(), 'rivulet-echo-'));
  const relayPort = await freePort();
  const ctx = testContext('chain');
  output = ctx.output;
  graph = new ComponentGraph((id) => ({ ...ctx, id }));
  graph.load(
    `profiles.receive_http "a" {
  http {
    listen_address = "127.0.0.1"
    listen_port    = 0
  }
  forward_to = [profiles.write.relay.receiver]
}

profiles.write "relay" {
  external_labels = { hop = "a" }
  endpoint {
    url            = "http://127.0.0.1:${relayPort}"
    remote_timeout = "5s"
  }
}

profiles.receive_http "b" {
  http {
    listen_address = "127.0.0.1"
    listen_port    = "${relayPort}"
  }
  forward_to = [profiles.echo.out.receiver]
}

profiles.echo "out" {
  raw_dir = ${JSON.stringify(rawDir)}
}
`,
    'chain.alloy',
  );
  await graph.start();
  entryUrl = (graph.component('profiles.receive_http.a') as unknown as ProfilesReceiveHttp).url()!;
});

afterAll(async () => {
  await graph.stop();
  rmSync(rawDir, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const records = () =>
  output()
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('a relay of two receivers and a writer', () => {
  it('delivers a Push with its labels, bytes and deadline', async () => {
    const profile = pprofBytes(4);
    const client = createClient(PusherService, createConnectTransport({ baseUrl: entryUrl, httpVersion: '1.1' }));
    const sentAt = Date.now();
    await client.push(
      {
        series: [
          {
            labels: [
              { name: '__name__', value: 'process_cpu' },
              { name: 'service_name', value: 'chain' },
              { name: '__private', value: 'x' },
            ],
            samples: [{ ID: 'u-1', rawProfile: profile }],
          },
        ],
      },
      { timeoutMs: 4_000 },
    );
    const answeredAt = Date.now();
    const record = records().find((r) => r.api === 'push')!;
    expect(record.labels).toEqual({ __name__: 'process_cpu', app_name: 'process_cpu', hop: 'a', service_name: 'chain' });
    const [sample] = record.samples as Array<{ id: string; size: number; sha256: string; raw_file: string }>;
    expect([sample!.id, sample!.size, sample!.sha256]).toEqual(['u-1', profile.length, sha256(profile)]);
    expect(readFileSync(sample!.raw_file).equals(profile)).toBe(true);
    const deadline = Date.parse(record.deadline as string);
    // Each hop counts the time left from when the request reached it, so the deadline lands
    // within the call's own span, shifted by 4s (never later, never much earlier).
    expect(deadline).toBeGreaterThanOrEqual(sentAt + 4_000 - 50);
    expect(deadline).toBeLessThanOrEqual(answeredAt + 4_000);
  });

  it('refuses a Push label with an empty name as a duplicate, as the reference\'s check starting from "" does', async () => {
    const client = createClient(PusherService, createConnectTransport({ baseUrl: entryUrl, httpVersion: '1.1' }));
    const push = client.push({
      series: [
        {
          labels: [
            { name: '', value: 'x' },
            { name: 'app', value: 'a' },
          ],
          samples: [{ ID: 'e', rawProfile: pprofBytes(1) }],
        },
      ],
    });
    await expect(push).rejects.toMatchObject({
      code: Code.Internal,
      rawMessage: 'unable to append series {""="x", app="a"} to appendable 0: invalid labels in profile: duplicate label name: ',
    });
  });

  it('delivers an ingest profile with its body, content type and rewritten name', async () => {
    const body = pprofBytes(2);
    const res = await rawRequest(`${entryUrl}/ingest?name=${encodeURIComponent('chain.app{env=prod}')}&from=10&until=20&format=pprof`, {
      headers: { 'content-type': 'application/octet-stream' },
      body,
    });
    expect(res.status).toBe(200);
    const record = records().find((r) => r.api === 'ingest')!;
    expect(record.labels).toEqual({ __name__: 'chain.app', app_name: 'chain.app', env: 'prod', hop: 'a', service_name: 'chain.app' });
    expect(record.content_type).toEqual(['application/octet-stream']);
    expect(record.query).toBe('format=pprof&from=10&name=chain.app%7Benv%3Dprod%2Chop%3Da%2Cservice_name%3Dchain.app%7D&until=20');
    expect([record.size, record.sha256]).toEqual([body.length, sha256(body)]);
    expect(record.deadline).toBeNull();
  });

  it('passes a downstream refusal back to the ingest client as its status', async () => {
    const res = await rawRequest(`${entryUrl}/ingest?name=${encodeURIComponent('bad name')}`, { body: 'x' });
    // "bad name" parses to no labels, so the writer refuses the profile before sending it.
    expect(res.status).toBe(500);
    expect(res.body.toString()).toBe('Failed to process request\n');
  });

  it('refuses a label value whose escapes are not valid UTF-8, sending nothing on', async () => {
    const before = records().length;
    const res = await rawRequest(`${entryUrl}/ingest?name=app%7Benv%3D%FF%7D&from=1`, { body: 'x' });
    // The writer's UTF-8 check refuses the value, as the reference's does with the raw byte.
    expect(res.status).toBe(500);
    expect(res.body.toString()).toBe('Failed to process request\n');
    expect(records()).toHaveLength(before);
  });
});
