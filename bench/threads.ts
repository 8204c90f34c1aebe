/**
 * Every core: the end-to-end push → k8s process → write bench with logs.process on two worker
 * threads beside the same run with the stages in place, and `rivulet process --workers 2` beside
 * `--workers 1` on the same Kubernetes entries. On a machine with fewer than two cores the ratios
 * say little; the rows say how many cores there were. Rates are per CPU second (user + system,
 * every thread of the process) with wall beside: a ratio above 1 means the threaded run spent less
 * CPU per entry, which threads do not promise; the wall ratio is what they are for, read beside it.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { throughPipeline, workload } from './e2e.js';
import { timedNode } from './child-cpu.js';
import { comparedRuns, peakRssMiB, type Measured } from './harness.js';
import { countingSink } from './pushes.js';
import type { BenchRow } from './types.js';

const ROOT = new URL('../', import.meta.url);
const BIN = fileURLToPath(new URL('dist/bin/rivulet.js', ROOT));
const PROCESS_LINES = Number(process.env.BENCH_THREADS_LINES ?? 300_000);

const K8S = `stage.cri { }
stage.json {
  expressions = { level = "", msg = "" }
}
stage.drop {
  source = "level"
  value  = "debug"
}
stage.labels {
  values = { level = "" }
}
`;

export async function benchThreads(): Promise<BenchRow[]> {
  if (!existsSync(BIN)) throw new Error('the threads bench runs the built package: run npm run build first');
  const cores = availableParallelism();
  const load = workload();
  const sink = await countingSink();
  const threads = 2;
  // One unmeasured run of each, then three turns each, taken alternately.
  await throughPipeline(load, sink);
  await throughPipeline(load, sink, threads);
  const pairs: (readonly [Measured, Measured])[] = [];
  for (let round = 0; round < 3; round++) {
    const inPlace = await throughPipeline(load, sink);
    pairs.push([await throughPipeline(load, sink, threads), inPlace]);
  }
  sink.server.close();
  const rows: BenchRow[] = [
    comparedRuns(
      `push → k8s process → write, logs.process on 2 threads (${cores} cores)`,
      'entries/s',
      'the same, stages in place',
      pairs,
      (seconds) => load.entries / seconds,
    ),
    { name: 'peak RSS after both runs (threads included)', value: peakRssMiB(), unit: 'MiB' },
  ];
  rows.push(processRow(cores));
  return rows;
}

/** `rivulet process --workers 2` against `--workers 1`, three runs each, interleaved. */
function processRow(cores: number): BenchRow {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-threads-'));
  try {
    const config = join(dir, 'k8s.alloy');
    writeFileSync(config, K8S);
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, k8sEntries(PROCESS_LINES));
    const pairs: (readonly [Measured, Measured])[] = [];
    for (let round = 0; round < 3; round++) {
      const one = timeProcess(config, input, 1);
      pairs.push([timeProcess(config, input, 2), one]);
    }
    return comparedRuns(
      `rivulet process --workers 2, k8s entries (${cores} cores)`,
      'lines/s',
      '--workers 1',
      pairs,
      (seconds) => PROCESS_LINES / seconds,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function timeProcess(config: string, input: string, workers: number): Measured {
  return timedNode([BIN, 'process', '--config', config, '--workers', String(workers), '--output', 'entry'], { stdinFile: input });
}

/** JSON-lines entries of CRI container logs from 100 pods, a tenth at debug level. */
function k8sEntries(count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify({ level: i % 10 === 0 ? 'debug' : 'info', msg: `GET /api/v1/items/${i} 200` });
    const line = `2024-05-01T10:00:00.${String(i % 1e9).padStart(9, '0')}Z stdout F ${body}`;
    lines.push(JSON.stringify({ labels: { namespace: 'prod', pod: `web-${i % 100}` }, line, timestamp: '2024-05-01T10:00:00Z' }));
  }
  return `${lines.join('\n')}\n`;
}
