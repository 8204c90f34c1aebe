/**
 * The Pyroscope Node.js SDK profiling a real workload and pushing to profiles.receive_http:
 * 0.6.x sends raw gzipped pprof with `format=pprof`, 0.4.x sends a multipart form. Each SDK runs
 * in its own process (it installs native profilers and process-wide state).
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingReceiver, startReceiveHttp, type RecordingReceiver, type StartedReceiver } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const client = join(here, '../../fixtures/profiles/pyroscope-client.cjs');

const runs: Record<'0.6' | '0.4', { receiver: RecordingReceiver; server?: StartedReceiver }> = {
  '0.6': { receiver: recordingReceiver() },
  '0.4': { receiver: recordingReceiver() },
};

function runSdk(version: string, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [client, version, url, '2200'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`SDK ${version} exited with ${code}: ${stderr}`))));
  });
}

beforeAll(async () => {
  for (const run of Object.values(runs)) run.server = await startReceiveHttp([run.receiver]);
  await Promise.all(Object.entries(runs).map(([version, run]) => runSdk(version, run.server!.url)));
}, 30_000);

afterAll(async () => {
  await Promise.all(Object.values(runs).map((r) => r.server?.stop()));
});

function samplesIn(gzipped: Uint8Array): number {
  return Profile.decode(gunzipSync(gzipped)).sample.length;
}

/** The file part called `name` of a multipart/form-data body. */
function formFile(body: Uint8Array, contentType: string, name: string): Buffer {
  const boundary = /boundary=(.+)$/.exec(contentType)![1]!;
  const text = Buffer.from(body).toString('latin1');
  for (const part of text.split(`--${boundary}`)) {
    const end = part.indexOf('\r\n\r\n');
    if (end < 0 || !part.slice(0, end).includes(`name="${name}"`)) continue;
    return Buffer.from(part.slice(end + 4, part.length - 2), 'latin1');
  }
  throw new Error(`no part ${name}`);
}

describe('Pyroscope Node.js SDK', () => {
  it('0.6.x pushes gzipped pprof with its labels intact', () => {
    const { ingests } = runs['0.6'].receiver;
    expect(ingests.length).toBeGreaterThanOrEqual(2);
    for (const { profile, labels } of ingests) {
      const query = new URLSearchParams(profile.rawQuery);
      expect(query.get('format')).toBe('pprof');
      expect(query.get('spyName')).toBe('nodespy');
      expect(profile.contentType).toEqual(['application/octet-stream']);
      expect(labels).toMatchObject({
        __name__: 'sdk.app',
        service_name: 'sdk.app',
        env: 'test',
        'otel.scope.name': 'com.grafana.pyroscope/nodejs',
        'process.runtime.name': 'nodejs',
      });
      expect([...profile.body.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    }
    expect(ingests.reduce((n, i) => n + samplesIn(i.profile.body), 0)).toBeGreaterThan(0);
  });

  it('0.4.x pushes a multipart form that is forwarded untouched', () => {
    const { ingests } = runs['0.4'].receiver;
    expect(ingests.length).toBeGreaterThanOrEqual(2);
    let samples = 0;
    for (const { profile, labels } of ingests) {
      const query = new URLSearchParams(profile.rawQuery);
      expect(query.get('format')).toBeNull();
      expect(profile.contentType).toHaveLength(1);
      expect(profile.contentType[0]).toMatch(/^multipart\/form-data; boundary=/);
      expect(labels).toEqual({ __name__: 'sdk.app', service_name: 'sdk.app', env: 'test' });
      samples += samplesIn(formFile(profile.body, profile.contentType[0]!, 'profile'));
    }
    expect(samples).toBeGreaterThan(0);
  });
});
