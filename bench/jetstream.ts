/**
 * Scale-out over JetStream, on loopback with real processes: pre-encoded pushes go to an ingest
 * instance (logs.source.api → logs.write.jetstream), through a nats-server, to 1 or 2 processing
 * instances (logs.source.jetstream → logs.process → logs.write) and on to a sink that decodes and
 * counts what arrives. Beside it, in the same run, one instance runs the same pipeline without
 * JetStream (logs.source.api → logs.process → logs.write): the baseline. Rates are per CPU second
 * of the Rivulet processes together (user + system, read from /proc while the load runs; the
 * nats-server and this process's load generator and sink are not counted), with wall beside.
 *
 * Needs `nats-server` on the PATH and a built CLI (`npm run build`); skipped with a message
 * otherwise. BENCH_JETSTREAM_ENTRIES sets the entry count (default 100,000).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsServerInstalled, startNatsServer } from '../test/support/nats-server.js';
import { PROJECT_ROOT, spawnRun, type ChildRun } from '../test/e2e/support.js';
import { cpuSecondsOfPid } from './child-cpu.js';
import { compared, perSecond, scaled, type Measured } from './harness.js';
import { countingSink, pushWorkload, type PushWorkload } from './pushes.js';
import type { BenchRow } from './types.js';

const ENTRIES = Number(process.env.BENCH_JETSTREAM_ENTRIES ?? 100_000);
const PODS = 100;
const PER_PUSH = 1000;
const CLIENTS = 4;
const PARTITIONS = 12;

/** Pushes of PER_PUSH entries spread over the pods, each line a JSON access log record. */
function workload(): PushWorkload {
  return pushWorkload({
    entries: ENTRIES,
    pods: PODS,
    perPush: PER_PUSH,
    labels: (p) => `{namespace="prod", pod="web-${p}"}`,
    line: (seq, p) =>
      JSON.stringify({ level: seq % 10 === 0 ? 'warn' : 'info', msg: `GET /api/v1/items/${seq} 200`, duration_ms: seq % 250, pod: p }),
  });
}

/** Sends every body with CLIENTS concurrent clients (retrying 429), then waits for the sink. */
async function drive(url: string, load: PushWorkload, delivered: () => number): Promise<number> {
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
  while (delivered() < ENTRIES) await new Promise((r) => setTimeout(r, 5));
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const PROCESS_STAGES = `
  stage.json {
    expressions = { level = "level", msg = "msg" }
  }
  stage.labels {
    values = { level = "" }
  }`;

const WRITE = (sinkUrl: string) => `logs.write "out" {
  endpoint {
    url = "${sinkUrl}"
    batch_wait = "20ms"
  }
}`;

const API = (forwardTo: string) => `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  forward_to = [${forwardTo}]
}`;

async function runUntilStopped<T>(runs: ChildRun[], body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    for (const run of runs) {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
      await run.exited;
    }
  }
}

/** `drive` through `runs`, with the CPU seconds the Rivulet processes spent meanwhile. */
async function driveMeasured(runs: readonly ChildRun[], drive: () => Promise<number>): Promise<Measured> {
  const cpu = () => runs.reduce((sum, run) => sum + cpuSecondsOfPid(run.child.pid!), 0);
  const before = cpu();
  const wallSeconds = await drive();
  return { wallSeconds, cpuSeconds: cpu() - before };
}

async function ownedPartitions(run: ChildRun): Promise<number> {
  const text = await (await fetch(`${run.runUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('logs_source_jetstream_owned_partitions{'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

export async function benchJetstream(): Promise<BenchRow[]> {
  if (!natsServerInstalled()) {
    console.log('bench/jetstream: skipped, nats-server is not installed (apt-get install nats-server)');
    return [];
  }
  if (!existsSync(join(PROJECT_ROOT, 'dist/bin/rivulet.js'))) {
    console.log('bench/jetstream: skipped, the CLI is not built (npm run build)');
    return [];
  }
  const load = workload();
  const mib = load.lineBytes / (1 << 20);
  const sink = await countingSink();
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-js-'));
  try {
    const directFile = join(dir, 'direct.alloy');
    writeFileSync(
      directFile,
      `${API('logs.process.main.receiver')}\n\nlogs.process "main" {${PROCESS_STAGES}\n  forward_to = [logs.write.out.receiver]\n}\n\n${WRITE(sink.url)}\n`,
    );
    const direct = await spawnRun(directFile, ['logs.source.api.in']);
    const directRun = await runUntilStopped([direct], () =>
      driveMeasured([direct], () => drive(direct.apiUrls.get('logs.source.api.in')!, load, sink.entries)),
    );

    const viaJetStream = async (processors: number): Promise<Measured> => {
      sink.reset();
      const nats = await startNatsServer();
      try {
        const ingestFile = join(dir, `ingest-${processors}.alloy`);
        writeFileSync(
          ingestFile,
          `${API('logs.write.jetstream.out.receiver')}\n\nlogs.write.jetstream "out" {\n  url = "${nats.url}"\n  stream = "LOGS"\n  partitions = ${PARTITIONS}\n}\n`,
        );
        const processFile = join(dir, `process-${processors}.alloy`);
        writeFileSync(
          processFile,
          `logs.source.jetstream "in" {\n  url = "${nats.url}"\n  stream = "LOGS"\n  group = "bench"\n  partitions = ${PARTITIONS}\n  forward_to = [logs.process.main.receiver]\n}\n\nlogs.process "main" {${PROCESS_STAGES}\n  forward_to = [logs.write.out.receiver]\n}\n\n${WRITE(sink.url)}\n`,
        );
        const ingest = await spawnRun(ingestFile, ['logs.source.api.in']);
        const runs = [ingest];
        return await runUntilStopped(runs, async () => {
          // The stream exists once the writer is up; the readers wait for it.
          for (let i = 0; i < processors; i++) runs.push(await spawnRun(processFile, []));
          const share = Math.floor(PARTITIONS / processors);
          for (;;) {
            const owned = await Promise.all(runs.slice(1).map(ownedPartitions));
            if (owned.every((n) => n >= share) && owned.reduce((a, b) => a + b, 0) === PARTITIONS) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          return driveMeasured(runs, () => drive(ingest.apiUrls.get('logs.source.api.in')!, load, sink.entries));
        });
      } finally {
        await nats.close();
      }
    };
    const one = await viaJetStream(1);
    const two = await viaJetStream(2);

    const rows: BenchRow[] = [];
    const directRate = perSecond(ENTRIES, directRun);
    for (const [label, run] of [
      ['1 processing instance', one],
      ['2 processing instances', two],
    ] as const) {
      const entries = perSecond(ENTRIES, run);
      rows.push(
        compared(`push → JetStream → ${label} → write`, entries, 'entries/s', 'same pipeline without JetStream', directRate),
        compared(
          `push → JetStream → ${label} → write (line bytes)`,
          scaled(entries, mib / ENTRIES),
          'MiB/s',
          'same pipeline without JetStream',
          scaled(directRate, mib / ENTRIES),
        ),
      );
    }
    return rows;
  } finally {
    sink.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
