/**
 * Live taps against the end-to-end pipeline: push → k8s process → write on loopback, once with
 * 200 tap clients on logs.process (each at the default 100 entries a second, reading everything
 * from another process) and once with none, taking turns. The figure is the CPU time (user +
 * system) of the instance per entry with clients over without, wall time beside: the taps must
 * cost the pipeline little, whatever the number of clients. The ratio is the median of the rounds'
 * ratios.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { systemClock } from '../core/clock.js';
import { ComponentGraph } from '../core/runtime/graph.js';
import { startRunServer } from '../cli/run-server.js';
import { TapHub } from '../core/inspect/tap.js';
import type { LogsSourceApi } from '../receivers/logs-source-api.js';
import '../index.js';
import { forwarderConfig } from '../test/e2e/configs.js';
import { drive, workload } from './e2e.js';
import { comparedRuns, measured, type Measured } from './harness.js';
import { countingSink, type CountingSink, type PushWorkload } from './pushes.js';
import type { BenchRow } from './types.js';

const CLIENTS = Number(process.env.BENCH_TAP_CLIENTS ?? 200);
const ROUNDS = Number(process.env.BENCH_TAP_ROUNDS ?? 2);

/**
 * Tap clients in a process of their own (so their reading is not counted as the instance's
 * time): each sends its request and reads and discards what comes. Resolves once all are streaming.
 */
async function tapClients(port: number, path: string, count: number): Promise<ChildProcess> {
  const script = `
const net = require('node:net');
let streaming = 0;
for (let i = 0; i < ${count}; i++) {
  const socket = net.connect(${port}, '127.0.0.1', () => socket.write('GET ${path} HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'));
  let head = '';
  socket.on('data', (chunk) => {
    if (head === null) return;
    head += chunk.toString('latin1');
    if (!head.includes('\\r\\n\\r\\n')) return;
    if (!head.startsWith('HTTP/1.1 200')) { console.error(head.split('\\r\\n')[0]); process.exit(1); }
    head = null;
    if (++streaming === ${count}) console.log('streaming');
  });
}`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('streaming')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`tap clients exited with ${code}`)));
  });
  return child;
}

/** The push → k8s process → write instance behind a run server, with `clients` taps on logs.process. */
async function throughTappedPipeline(load: PushWorkload, sink: CountingSink, clients: number): Promise<Measured> {
  sink.reset();
  const registry = new Registry();
  const taps = new TapHub(registry, { maxClients: Math.max(clients, 1) });
  const graph = new ComponentGraph(
    (id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }),
    taps.wrapExport,
  );
  graph.load(forwarderConfig(sink.url, { write: { batch_wait: '"20ms"' } }), 'bench.alloy');
  const server = await startRunServer({ host: '127.0.0.1', port: 0, registry, graph, reload: async () => [], taps });
  await graph.start();
  const child = clients > 0 ? await tapClients(Number(new URL(server.url).port), '/api/v0/tap/logs.process.k8s', clients) : undefined;
  const apiUrl = (graph.component('logs.source.api.in') as unknown as LogsSourceApi).url()!;
  const result = await measured(async () => {
    await drive(apiUrl, load, sink.entries);
  });
  child?.kill();
  await graph.stop();
  await server.close();
  return result;
}

export async function benchTaps(): Promise<BenchRow[]> {
  const load = workload();
  const sink = await countingSink();
  // One unmeasured turn each, then turns taken alternately.
  await throughTappedPipeline(load, sink, 0);
  await throughTappedPipeline(load, sink, CLIENTS);
  const pairs: (readonly [Measured, Measured])[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const none = await throughTappedPipeline(load, sink, 0);
    pairs.push([await throughTappedPipeline(load, sink, CLIENTS), none]);
  }
  sink.server.close();
  return [
    comparedRuns(
      `tap: ${CLIENTS} clients vs none, µs per entry`,
      'µs',
      'no tap client',
      pairs,
      (seconds) => (seconds * 1e6) / load.entries,
    ),
  ];
}
