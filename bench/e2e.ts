/**
 * End to end on loopback: pre-encoded protobuf pushes of Kubernetes-like container logs go
 * through logs.source.api → logs.process (CRI, JSON, labels, structured metadata, static and
 * dropped labels) → logs.write → a sink that decodes what arrives. Beside it, in the same run, a
 * raw forwarder relays the same bodies to the same sink without decoding them: the cost of the
 * transport alone. Rates count the bytes of log lines and the entries that reached the sink.
 *
 * The load generator and the sink run in this process too, so the CPU seconds (the row's figures
 * and ratio) are of the whole exchange, the same load on both sides; `npm run bench -- cores`
 * measures the instance alone, in a process of its own.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { systemClock } from '../core/clock.js';
import type { ComponentContext } from '../core/runtime/component.js';
import { ComponentGraph } from '../core/runtime/graph.js';
import type { LogsSourceApi } from '../receivers/logs-source-api.js';
import '../index.js';
import { comparedRuns, measured, peakRssMiB, type Measured } from './harness.js';
import { countingSink, pushWorkload, type CountingSink, type PushWorkload } from './pushes.js';
import type { BenchRow } from './types.js';
import { forwarderConfig } from '../test/e2e/configs.js';

const ENTRIES = Number(process.env.BENCH_E2E_ENTRIES ?? 200_000);
const PODS = 10;
const PER_PUSH = 1000;
const CLIENTS = 4;

/** Pushes of PER_PUSH entries spread over the pods, each line a CRI record with a JSON body. */
export function workload(): PushWorkload {
  return pushWorkload({
    entries: ENTRIES,
    pods: PODS,
    perPush: PER_PUSH,
    labels: (p) => `{namespace="prod", pod="web-${p}", container="app"}`,
    line: (seq) => {
      const body = JSON.stringify({
        level: seq % 10 === 0 ? 'warn' : 'info',
        msg: `GET /api/v1/items/${seq} 200`,
        duration_ms: seq % 250,
        trace_id: `t${seq % 97}`,
        user: `u${seq % 13}`,
      });
      return `2024-05-01T10:00:00.${String(seq).padStart(9, '0')}Z stdout F ${body}`;
    },
  });
}

/** Relays each body unchanged to `target` and answers once the target answered. */
async function rawForwarder(target: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = request(target, { method: 'POST', headers: { 'Content-Type': 'application/x-protobuf' } }, (answer) => {
        answer.resume();
        answer.on('end', () => res.writeHead(answer.statusCode ?? 500).end());
      });
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Sends every body with CLIENTS concurrent clients (retrying 429), then waits for the sink. */
export async function drive(url: string, load: PushWorkload, delivered: () => number): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  const client = async () => {
    for (let i = next++; i < load.bodies.length; i = next++) {
      for (;;) {
        const res = await fetch(`${url}/loki/api/v1/push`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-protobuf' },
          body: load.bodies[i] as Uint8Array<ArrayBuffer>,
        });
        await res.arrayBuffer();
        if (res.status === 204) break;
        if (res.status !== 429) throw new Error(`push answered ${res.status}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  while (delivered() < load.entries) await new Promise((r) => setTimeout(r, 5));
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/**
 * CPU and wall seconds for `load` through logs.source.api → logs.process → logs.write into `sink`: the same
 * Kubernetes-logs instance the end-to-end tests run, its stages in place or on `threads`.
 */
export async function throughPipeline(
  load: PushWorkload,
  sink: CountingSink,
  threads?: ComponentContext['pipelineThreads'],
): Promise<Measured> {
  sink.reset();
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({
    id,
    clock: systemClock(),
    registry,
    stdout: new PassThrough(),
    log: () => {},
    ...(threads ? { pipelineThreads: threads } : {}),
  }));
  graph.load(forwarderConfig(sink.url, { write: { batch_wait: '"20ms"' } }), 'bench.alloy');
  await graph.start();
  const apiUrl = (graph.component('logs.source.api.in') as unknown as LogsSourceApi).url()!;
  const seconds = await measured(async () => {
    await drive(apiUrl, load, sink.entries);
  });
  await graph.stop();
  return seconds;
}

/** Measured rounds of each path; the median is reported. */
const ROUNDS = Number(process.env.BENCH_E2E_ROUNDS ?? 3);

/**
 * Push → process → write on loopback, beside a raw forward of the same bodies. Each path first
 * runs once unmeasured, so the figures are of compiled code rather than of the JIT warming up;
 * then the two take turns for ROUNDS rounds, so a busy spell of the machine falls on both; the
 * ratio is the median of the rounds' ratios of CPU seconds.
 */
export async function benchE2e(): Promise<BenchRow[]> {
  const load = workload();
  const sink = await countingSink();
  const mib = load.lineBytes / (1 << 20);
  const forwarder = await rawForwarder(sink.url);
  const raw = () => {
    sink.reset();
    return measured(async () => {
      await drive(forwarder.url, load, sink.entries);
    });
  };

  await raw();
  await throughPipeline(load, sink);
  const pairs: (readonly [Measured, Measured])[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const rawRun = await raw();
    pairs.push([await throughPipeline(load, sink), rawRun]);
  }
  forwarder.server.close();
  sink.server.close();

  return [
    comparedRuns(
      'push → k8s process → write, loopback (log line bytes)',
      'MiB/s',
      'raw forward of the same bodies',
      pairs,
      (seconds) => mib / seconds,
    ),
    comparedRuns(
      'push → k8s process → write, loopback',
      'entries/s',
      'raw forward of the same bodies',
      pairs,
      (seconds) => load.entries / seconds,
    ),
    { name: 'peak RSS after e2e bench', value: peakRssMiB(), unit: 'MiB' },
  ];
}
