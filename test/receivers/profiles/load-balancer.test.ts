/**
 * Two receiver instances behind nginx: the proxy spreads a bounded load over both and every
 * profile arrives exactly once. nginx runs in the foreground on loopback with its config, pid,
 * logs and temp files in a temporary directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PusherService } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { needs, requireBinary } from '../../support/system-binaries.js';
import { freePort, rawRequest, recordingReceiver, startReceiveHttp, type RecordingReceiver, type StartedReceiver } from './harness.js';

let dir: string;
let nginx: ChildProcess | undefined;
let proxyUrl: string;
const receivers: RecordingReceiver[] = [recordingReceiver(), recordingReceiver()];
const instances: StartedReceiver[] = [];

const nginxProgram = needs('nginx');

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  if (nginxProgram.skip) return;
  const binary = requireBinary('nginx');
  dir = mkdtempSync(join(tmpdir(), 'rivulet-nginx-'));
  for (let i = 0; i < 2; i++) instances.push(await startReceiveHttp([receivers[i]!], { id: `profiles.receive_http.lb${i}` }));
  const port = await freePort();
  proxyUrl = `http://127.0.0.1:${port}`;
  const upstreams = instances.map((r) => `    server ${new URL(r.url).host};`).join('\n');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_max_body_size 0;
  upstream receivers {
${upstreams}
    keepalive 8;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://receivers;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream off;
    }
  }
}
`,
  );
  nginx = spawn(binary, ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'ignore' });
  await waitForPort(port, 5_000);
});

afterAll(async () => {
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((r) => nginx!.once('exit', r));
    nginx.kill('SIGTERM');
    await exited;
  }
  await Promise.all(instances.map((r) => r.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `jobs` with at most `limit` in flight. */
async function bounded(jobs: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}

describe.skipIf(nginxProgram.skip)(nginxProgram.title('two receivers behind nginx'), () => {
  it('share the load and receive every profile exactly once', async () => {
    const ingests = Array.from({ length: 60 }, (_, i) => async () => {
      const res = await rawRequest(`${proxyUrl}/ingest?name=lb.app%7Bseq%3D${i}%7D`, {
        headers: { 'content-type': 'application/octet-stream' },
        body: `profile ${i}`,
      });
      expect(res.status).toBe(200);
    });
    const client = createClient(PusherService, createConnectTransport({ baseUrl: proxyUrl, httpVersion: '1.1' }));
    const pushes = Array.from({ length: 20 }, (_, i) => async () => {
      await client.push({
        series: [
          {
            labels: [
              { name: 'service_name', value: 'lb.push' },
              { name: 'seq', value: String(i) },
            ],
            samples: [{ ID: `id-${i}`, rawProfile: Buffer.from(`push ${i}`) }],
          },
        ],
      });
    });
    await bounded([...ingests, ...pushes], 8);

    const ingestSeqs = receivers.flatMap((r) => r.ingests.map((i) => Number(i.labels.seq)));
    expect(ingestSeqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    const pushSeqs = receivers.flatMap((r) => r.appends.map((a) => Number(a.labels.seq)));
    expect(pushSeqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const r of receivers) expect(r.ingests.length + r.appends.length).toBeGreaterThan(10);
    for (const r of receivers) for (const i of r.ingests) expect(Buffer.from(i.profile.body).toString()).toBe(`profile ${i.labels.seq}`);
  });
});
