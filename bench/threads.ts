/**
 * Every core: the end-to-end push → k8s process → write bench with logs.process on two worker
 * threads beside the same run with the stages in place, and `rivulet process --workers 2` beside
 * `--workers 1` on the same Kubernetes entries. On a machine with fewer than two cores the ratios
 * say little; the rows say how many cores there were.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { throughPipeline, workload } from './e2e.js';
import { compared, peakRssMiB } from './harness.js';
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
  // One unmeasured run of each, then the better of two turns each, taken alternately.
  await throughPipeline(load, sink);
  await throughPipeline(load, sink, threads);
  let inPlace = Number.POSITIVE_INFINITY;
  let threaded = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 2; round++) {
    inPlace = Math.min(inPlace, await throughPipeline(load, sink));
    threaded = Math.min(threaded, await throughPipeline(load, sink, threads));
  }
  sink.server.close();
  const rows: BenchRow[] = [
    compared(
      `push → k8s process → write, logs.process on 2 threads (${cores} cores)`,
      load.entries / threaded,
      'entries/s',
      'the same, stages in place',
      load.entries / inPlace,
    ),
    { name: 'peak RSS after both runs (threads included)', value: peakRssMiB(), unit: 'MiB' },
  ];
  rows.push(processRow(cores));
  return rows;
}

/** `rivulet process --workers 2` against `--workers 1`, best of three each, interleaved. */
function processRow(cores: number): BenchRow {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-threads-'));
  try {
    const config = join(dir, 'k8s.alloy');
    writeFileSync(config, K8S);
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, k8sEntries(PROCESS_LINES));
    const best = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
    for (let round = 0; round < 3; round++)
      [1, 2].forEach((workers, i) => {
        best[i] = Math.min(best[i]!, timeProcess(config, input, workers));
      });
    return compared(
      `rivulet process --workers 2, k8s entries (${cores} cores)`,
      PROCESS_LINES / best[1]!,
      'lines/s',
      '--workers 1',
      PROCESS_LINES / best[0]!,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function timeProcess(config: string, input: string, workers: number): number {
  const started = process.hrtime.bigint();
  const result = spawnSync('sh', [
    '-c',
    `"${process.execPath}" "${BIN}" process --config "${config}" --workers ${workers} --output entry < "${input}" > /dev/null`,
  ]);
  if (result.status !== 0) throw new Error(`rivulet process failed: ${result.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
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
