/**
 * profiles.receive_http under load: 10 KiB gzipped pprof bodies POSTed to `/ingest` (and as a
 * Connect Push), each fanned out to two receivers, beside a bare `node:http` server that only
 * reads the body and answers 200. Both are measured in the same run with the same load generator
 * (autocannon's programmatic API, in a worker thread) and the same connection count. Requests per
 * CPU second of this process (user + system, the load generator's thread included, as on both
 * sides) make the ratio; requests per wall second are printed beside.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { create, toBinary } from '@bufbuild/protobuf';
import { Registry } from 'prom-client';
import { systemClock } from '../core/clock.js';
import type { Block } from '../lib/config/ast.js';
import { parseConfig } from '../lib/config/parser.js';
import { profilesReceiverCapsule, type ProfilesReceiver } from '../core/profiles.js';
import { PushRequestSchema } from '../lib/pyroscope/gen/push/v1/push_pb.js';
import { decodeBlock } from '../lib/config/schema.js';
import { profilesReceiveHttpComponent, type ProfilesReceiveHttp } from '../receivers/profiles-receive-http.js';
import { compared, scaled } from './harness.js';
import type { BenchRow } from './types.js';

/** The part of autocannon's programmatic API used here (the package ships no types). */
interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number };
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const BODY_BYTES = 10 * 1024;
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 1);
/** Paired subject/baseline rounds; the median round is reported. */
const ROUNDS = Number(process.env.BENCH_PROFILE_ROUNDS ?? 5);
const WARM_UP_SECONDS = 0.5;
const CONNECTIONS = 16;
const MIB = 1024 * 1024;

/**
 * A pprof-shaped body of exactly BODY_BYTES: a gzip stream of incompressible bytes (xorshift32, so
 * the stream comes out a little longer than its input), cut to size.
 */
function body(): Buffer {
  let x = 12345;
  const raw = Buffer.alloc(BODY_BYTES);
  for (let i = 0; i < raw.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    raw[i] = x & 0xff;
  }
  const gzipped = gzipSync(raw);
  if (gzipped.length < BODY_BYTES) throw new Error(`the bench body compressed to ${gzipped.length} bytes`);
  return gzipped.subarray(0, BODY_BYTES);
}

/** A receiver that takes every profile, as a fast downstream would. */
function acceptingReceiver(): ProfilesReceiver & { count: number } {
  const receiver = {
    count: 0,
    async append() {
      receiver.count++;
    },
    async appendIngest() {
      receiver.count++;
    },
  };
  return receiver;
}

async function startReceiver(receivers: ProfilesReceiver[]): Promise<ProfilesReceiveHttp> {
  const text = `profiles.receive_http "bench" {\n  http {\n    listen_address = "127.0.0.1"\n    listen_port = 0\n  }\n  forward_to = [r0, r1]\n}\n`;
  const block = parseConfig(text, 'bench.alloy').body[0] as Block;
  const scope = {
    env: () => undefined,
    resolve: (path: string[]) =>
      path[0] === 'r0' || path[0] === 'r1' ? profilesReceiverCapsule(receivers[Number(path[0][1])]!) : undefined,
  };
  const decoded = decodeBlock(block, profilesReceiveHttpComponent, scope, []);
  const ctx = {
    id: 'profiles.receive_http.bench',
    clock: systemClock(),
    registry: new Registry(),
    stdout: new PassThrough(),
    log: () => {},
  };
  const component = profilesReceiveHttpComponent.build(
    { values: decoded.values, block, decoded, scope, path: [] },
    ctx,
  ) as unknown as ProfilesReceiveHttp;
  await component.start();
  return component;
}

async function startBare(): Promise<Server> {
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return server;
}

interface Load {
  /** Requests per wall second. */
  readonly requestsPerSecond: number;
  /** Requests per CPU second (user + system) of this process. */
  readonly requestsPerCpuSecond: number;
  readonly errors: number;
}

/**
 * The load generator runs in a worker thread so it does not share the servers' thread. A worker
 * cannot be handed a Buffer body, so each connection loads it from a file through a small setup
 * module written next to it.
 */
function clientSetup(dir: string, name: string, payload: Buffer): string {
  writeFileSync(join(dir, `${name}.bin`), payload);
  const setup = join(dir, `${name}.cjs`);
  writeFileSync(
    setup,
    `const body = require('node:fs').readFileSync(${JSON.stringify(join(dir, `${name}.bin`))});\nmodule.exports = (client) => client.setBody(body);\n`,
  );
  return setup;
}

async function load(url: string, setupClient: string, headers: Record<string, string>, seconds = SECONDS): Promise<Load> {
  const cpu = process.cpuUsage();
  const result = await autocannon({ url, method: 'POST', headers, setupClient, connections: CONNECTIONS, duration: seconds, workers: 1 });
  const used = process.cpuUsage(cpu);
  return {
    requestsPerSecond: result.requests.average,
    requestsPerCpuSecond: result.requests.total / ((used.user + used.system) / 1e6),
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/**
 * Runs subject and baseline back to back, ROUNDS times after a warm-up of each, alternating which
 * goes first, and keeps the round whose ratio of requests per CPU second is the median. Pairing the two runs of a round keeps
 * both under the same conditions (this machine's speed drifts by tens of percent over seconds),
 * and the median ignores the odd round where one of them was disturbed.
 */
async function versus(subject: (seconds: number) => Promise<Load>, baseline: (seconds: number) => Promise<Load>): Promise<[Load, Load]> {
  await subject(WARM_UP_SECONDS);
  await baseline(WARM_UP_SECONDS);
  const rounds: Array<[Load, Load]> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const subjectFirst = round % 2 === 0;
    const first = await (subjectFirst ? subject : baseline)(SECONDS);
    const second = await (subjectFirst ? baseline : subject)(SECONDS);
    const pair: [Load, Load] = subjectFirst ? [first, second] : [second, first];
    if (pair[0].errors > 0 || pair[1].errors > 0)
      throw new Error(`failed requests: ${pair[0].errors} (subject), ${pair[1].errors} (baseline)`);
    rounds.push(pair);
  }
  const cpuRatio = ([subject, base]: [Load, Load]) => subject.requestsPerCpuSecond / base.requestsPerCpuSecond;
  rounds.sort((x, y) => cpuRatio(x) - cpuRatio(y));
  return rounds[Math.floor(rounds.length / 2)]!;
}

export async function benchProfiles(): Promise<BenchRow[]> {
  const payload = body();
  const push = Buffer.from(
    toBinary(
      PushRequestSchema,
      create(PushRequestSchema, { series: [{ labels: [{ name: 'service_name', value: 'bench' }], samples: [{ rawProfile: payload }] }] }),
    ),
  );
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-'));
  const ingestBody = clientSetup(dir, 'ingest', payload);
  const pushBody = clientSetup(dir, 'push', push);
  const receivers = [acceptingReceiver(), acceptingReceiver()];
  const component = await startReceiver(receivers);
  const bare = await startBare();
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
  try {
    const ingestHeaders = { 'content-type': 'application/octet-stream' };
    const query = '?name=bench.app%7Benv%3Dbench%7D&format=pprof';
    const [ingest, baseline] = await versus(
      (seconds) => load(`${component.url()}/ingest${query}`, ingestBody, ingestHeaders, seconds),
      (seconds) => load(`${bareUrl}/ingest${query}`, ingestBody, ingestHeaders, seconds),
    );
    const pushHeaders = { 'content-type': 'application/proto', 'connect-protocol-version': '1' };
    const [pushed, pushBaseline] = await versus(
      (seconds) => load(`${component.url()}/push.v1.PusherService/Push`, pushBody, pushHeaders, seconds),
      (seconds) => load(`${bareUrl}/push.v1.PusherService/Push`, pushBody, pushHeaders, seconds),
    );
    if (receivers.some((r) => r.count === 0)) throw new Error('the receivers got nothing');
    const rate = (l: Load) => ({ cpu: l.requestsPerCpuSecond, wall: l.requestsPerSecond });
    const mib = (l: Load, bytes: number) => scaled(rate(l), bytes / MIB);
    return [
      compared('receive_http /ingest, 10 KiB pprof → 2 receivers', rate(ingest), 'req/s', 'bare node:http', rate(baseline)),
      compared(
        'receive_http /ingest, 10 KiB pprof → 2 receivers',
        mib(ingest, payload.length),
        'MiB/s',
        'bare node:http',
        mib(baseline, payload.length),
      ),
      compared('receive_http Connect Push, 10 KiB pprof → 2 receivers', rate(pushed), 'req/s', 'bare node:http', rate(pushBaseline)),
      compared(
        'receive_http Connect Push, 10 KiB pprof → 2 receivers',
        mib(pushed, push.length),
        'MiB/s',
        'bare node:http',
        mib(pushBaseline, push.length),
      ),
    ];
  } finally {
    await component.stop();
    await new Promise<void>((resolve) => bare.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
}
