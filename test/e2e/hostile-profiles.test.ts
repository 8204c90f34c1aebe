/**
 * `rivulet run` as a child process with profiles.receive_http and a logs.source.api beside it:
 * Push floods of empty series at the largest body accepted (16 MiB of protobuf or JSON, sent as
 * is or in a few KiB of gzip) are answered 413 `resource_exhausted` within 3 s, the process stays
 * under 512 MiB of resident memory, and the logs source answers pushes meanwhile. A 16 MiB
 * `/ingest` body, which the receiver forwards without parsing, is taken in the same way.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pushJson, rawRequest, type RawResponse } from '../receivers/loki/harness.js';
import { spawnRun, type ChildRun } from './support.js';

const MiB = 1 << 20;
const LIMIT_MESSAGE = 'message has more than 100000 objects (series, samples, labels and annotations)';

function config(dir: string): string {
  const listen = 'http {\n    listen_address = "127.0.0.1"\n    listen_port = 0\n  }';
  return `profiles.receive_http "victim" {
  ${listen}
  forward_to = [profiles.echo.out.receiver]
}
profiles.echo "out" {
  path = ${JSON.stringify(join(dir, 'profiles.jsonl'))}
}
logs.source.api "bystander" {
  ${listen}
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" {
  path = ${JSON.stringify(join(dir, 'logs.jsonl'))}
}
`;
}

/** The child's peak resident set so far (Linux), in bytes. */
function peakRss(pid: number): number {
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kib) throw new Error('no VmHWM in /proc/<pid>/status');
  return Number(kib) * 1024;
}

/** The child's CPU seconds so far, user and system (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, fields 14 and 15 of the line, in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The longest the child's event loop was held since the last call (its own measure, which each
 * scrape of the metrics page starts again), in milliseconds.
 */
async function eventLoopMaxLagMs(runUrl: string): Promise<number> {
  const text = await (await fetch(`${runUrl}/metrics`)).text();
  const value = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1];
  return value === undefined ? Number.NaN : Number(value) * 1000;
}

/** As many empty series as fit 16 MiB of protobuf (8.4 million): two bytes each. */
const protoFlood = () => Buffer.alloc(16 * MiB, Buffer.from([0x0a, 0x00]));
/** As many empty series as fit 16 MiB of JSON: `{}` and a comma each. */
function jsonFlood(): Buffer {
  const more = Math.floor((16 * MiB - 15) / 3);
  return Buffer.concat([Buffer.from('{"series":[{}'), Buffer.alloc(more * 3, ',{}'), Buffer.from(']}')]);
}

/** One series of one label and one small sample, in either encoding. */
const ORDINARY_PUSH = {
  proto: Buffer.from([0x0a, 0x0e, 0x0a, 0x07, 0x0a, 0x03, 0x61, 0x70, 0x70, 0x12, 0x00, 0x12, 0x03, 0x0a, 0x01, 0x07]),
  json: Buffer.from('{"series":[{"labels":[{"name":"app","value":""}],"samples":[{"rawProfile":"Bw=="}]}]}'),
};

const connect = (type: string, gzip: boolean) => ({
  'content-type': type,
  'connect-protocol-version': '1',
  ...(gzip ? { 'content-encoding': 'gzip' } : {}),
});

const floods = [
  { name: 'Connect proto', path: '/push.v1.PusherService/Push', headers: connect('application/proto', false), body: protoFlood },
  {
    name: 'Connect proto gzipped',
    path: '/push.v1.PusherService/Push',
    headers: connect('application/proto', true),
    body: () => gzipSync(protoFlood(), { level: 9 }),
  },
  { name: 'Connect JSON', path: '/push.v1.PusherService/Push', headers: connect('application/json', false), body: jsonFlood },
  {
    name: 'Connect JSON gzipped',
    path: '/push.v1.PusherService/Push',
    headers: connect('application/json', true),
    body: () => gzipSync(jsonFlood(), { level: 9 }),
  },
];

describe.skipIf(process.platform !== 'linux')('rivulet run under hostile profile pushes', () => {
  let run: ChildRun;

  beforeEach(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-hostile-profiles-'));
    const file = join(dir, 'run.alloy');
    writeFileSync(file, config(dir));
    run = await spawnRun(file, ['profiles.receive_http.victim', 'logs.source.api.bystander']);
  }, 60_000);

  afterEach(() => {
    if (run?.child.exitCode === null) run.child.kill('SIGKILL');
  });

  /** Sends `body` to the victim and pushes to the bystander until it is answered. */
  async function flood(path: string, headers: Record<string, string>, body: Buffer) {
    const victim = run.apiUrls.get('profiles.receive_http.victim')!;
    const bystander = run.apiUrls.get('logs.source.api.bystander')!;
    const pid = run.child.pid!;
    const pushBystander = async () => {
      const at = performance.now();
      const res = await pushJson(bystander, { streams: [{ stream: { job: 'bystander' }, values: [['1', 'hello']] }] });
      expect(res.status).toBe(204);
      return performance.now() - at;
    };
    // A running receiver: one ordinary request of the same kind first (and the first time its
    // code runs) is not what is measured.
    const ordinary =
      path === '/ingest' ? Buffer.from('main;work 1\n') : ORDINARY_PUSH[headers['content-type']!.endsWith('json') ? 'json' : 'proto'];
    const warm = await rawRequest(`${victim}${path}`, { headers: { ...headers, 'content-encoding': 'identity' }, body: ordinary });
    expect(warm.status).toBe(200);
    // The same pushes with no flood, for comparison: what the machine's load alone costs them.
    await eventLoopMaxLagMs(run.runUrl);
    const idle: number[] = [];
    for (let i = 0; i < 5; i++) {
      idle.push(await pushBystander());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const idleLoopMaxMs = await eventLoopMaxLagMs(run.runUrl);
    const cpuBefore = cpuSeconds(pid);
    const sentAt = performance.now();
    let answeredAt = 0;
    const answered = rawRequest(`${victim}${path}`, { headers, body }).then((res: RawResponse) => {
      answeredAt = performance.now();
      return res;
    });
    const latencies: number[] = [];
    do {
      latencies.push(await pushBystander());
      // Paced, so the process's CPU time is mostly the flood's.
      if (answeredAt === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    } while (answeredAt === 0);
    const answer = await answered;
    const floodLoopMaxMs = await eventLoopMaxLagMs(run.runUrl);
    return {
      idleLoopMaxMs,
      floodLoopMaxMs,
      answer,
      answeredMs: answeredAt - sentAt,
      bystanderMaxMs: Math.max(...latencies),
      bystanderIdleMaxMs: Math.max(...idle),
      bystanderPushes: latencies.length,
      peakRss: peakRss(pid),
      cpuSeconds: cpuSeconds(pid) - cpuBefore,
    };
  }

  function show(name: string, bytes: number, outcome: Awaited<ReturnType<typeof flood>>): void {
    if (!process.env.SHOW_FIGURES) return;
    console.log({
      flood: name,
      bodyBytes: bytes,
      status: outcome.answer.status,
      answeredMs: Math.round(outcome.answeredMs),
      cpuSeconds: outcome.cpuSeconds,
      bystanderMaxMs: Math.round(outcome.bystanderMaxMs),
      bystanderIdleMaxMs: Math.round(outcome.bystanderIdleMaxMs),
      bystanderPushes: outcome.bystanderPushes,
      eventLoopMaxMs: Math.round(outcome.floodLoopMaxMs),
      eventLoopIdleMaxMs: Math.round(outcome.idleLoopMaxMs),
      peakRssMiB: Math.round(outcome.peakRss / MiB),
    });
  }

  for (const { name, path, headers, body: make } of floods) {
    it(`answers a ${name} flood of empty series 413 within 5 s under 512 MiB, the logs source answering meanwhile`, {
      timeout: 30_000,
    }, async () => {
      const body = make();
      const outcome = await flood(path, headers, body);
      show(name, body.length, outcome);
      expect({ status: outcome.answer.status, body: outcome.answer.body.toString() }).toEqual({
        status: 413,
        body: JSON.stringify({ code: 'resource_exhausted', message: LIMIT_MESSAGE }),
      });
      expect(outcome.answeredMs).toBeLessThan(5000);
      expect(outcome.bystanderMaxMs).toBeLessThan(1000);
      expect(outcome.peakRss).toBeLessThan(512 * MiB);
    });
  }

  it('takes a 16 MiB /ingest body (forwarded unparsed) under 512 MiB, the logs source answering meanwhile', {
    timeout: 30_000,
  }, async () => {
    const body = Buffer.alloc(16 * MiB - 1, 'main;work 1\n');
    const outcome = await flood('/ingest?name=flood&format=folded', { 'content-type': 'text/plain' }, body);
    show('/ingest', body.length, outcome);
    expect(outcome.answer.status).toBe(200);
    expect(outcome.answeredMs).toBeLessThan(3000);
    expect(outcome.bystanderMaxMs).toBeLessThan(1000);
    expect(outcome.peakRss).toBeLessThan(512 * MiB);
  });
});
