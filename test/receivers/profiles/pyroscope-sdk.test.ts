/**
 * The Pyroscope Node.js SDK profiling a real workload and pushing to profiles.receive_http:
 * 0.6.x sends raw gzipped pprof with `format=pprof`, 0.4.x sends a multipart form. Each SDK runs
 * in its own process (it installs native profilers and process-wide state).
 *
 * On a loaded machine an SDK may take seconds to start and to flush, so nothing here waits a
 * fixed time: each SDK runs until its server has its first profiles, then is told to stop (its
 * stdin ends) and flushes. Every wait is bounded, and every SDK process is killed when the tests
 * end, whatever happened before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingReceiver, startReceiveHttp, type RecordingReceiver, type StartedReceiver } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const client = join(here, '../../fixtures/profiles/pyroscope-client.cjs');

/** Longest an SDK may take to start and send its first two profiles. */
const FIRST_PROFILES_MS = 60_000;
/** Longest an SDK may take to flush and exit once told to stop (it gives up itself after 10 s). */
const STOP_MS = 20_000;
/** The SDK's own bound on its run, in case this process cannot tell it to stop. */
const LONGEST_RUN_MS = FIRST_PROFILES_MS + 10_000;

const runs: Record<'0.6' | '0.4', { receiver: RecordingReceiver; server?: StartedReceiver }> = {
  '0.6': { receiver: recordingReceiver() },
  '0.4': { receiver: recordingReceiver() },
};
const children = new Set<ChildProcess>();

/** Starts an SDK process; `exited` resolves when it ends well, rejects when it cannot run or fails. */
function startSdk(version: string, url: string): { child: ChildProcess; exited: Promise<void> } {
  const child = spawn(process.execPath, [client, version, url, String(LONGEST_RUN_MS)], { stdio: ['pipe', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (code === 0) resolve();
      else reject(new Error(`SDK ${version} exited with ${code ?? signal}: ${stderr}`));
    });
  });
  // Handled where it is awaited; this keeps an early failure from going unhandled meanwhile.
  exited.catch(() => {});
  return { child, exited };
}

/** Resolves once `check` holds; rejects after `ms`, or as soon as `failed` rejects. */
async function until(check: () => boolean, ms: number, what: string, failed: Promise<unknown>): Promise<void> {
  const deadline = Date.now() + ms;
  let failure: unknown;
  failed.catch((err: unknown) => (failure = err ?? new Error(`${what}: the SDK stopped`)));
  while (!check()) {
    if (failure !== undefined) throw failure;
    if (Date.now() > deadline) throw new Error(`${what} took longer than ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function runSdk(version: '0.6' | '0.4'): Promise<void> {
  const run = runs[version];
  const sdk = startSdk(version, run.server!.url);
  const stopped = sdk.exited.then(() => {
    throw new Error(`SDK ${version} stopped before sending two profiles`);
  });
  await until(() => run.receiver.ingests.length >= 2, FIRST_PROFILES_MS, `SDK ${version} sending two profiles`, stopped);
  sdk.child.stdin!.end();
  await withTimeout(sdk.exited, STOP_MS, `SDK ${version} stopping`);
}

beforeAll(
  async () => {
    for (const run of Object.values(runs)) run.server = await startReceiveHttp([run.receiver]);
    await Promise.all((['0.6', '0.4'] as const).map(runSdk));
  },
  FIRST_PROFILES_MS + STOP_MS + 10_000,
);

afterAll(async () => {
  // Whatever failed above (a hook timeout included), no SDK process outlives the tests.
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  await Promise.all(Object.values(runs).map((r) => r.server?.stop()));
}, 30_000);

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
