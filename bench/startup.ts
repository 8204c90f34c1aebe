import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compared } from './harness.js';
import type { BenchRow } from './types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);

/** Median wall time of `args` run with plain Node, in seconds. */
function medianWall(args: readonly string[]): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    execFileSync(process.execPath, args, { cwd: ROOT, stdio: 'ignore' });
    times.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/**
 * Start-up of the built CLI, the code the installed package runs: `rivulet validate` on the
 * default config, beside `node -e 0` (Node's own start-up) measured in the same run; medians of
 * BENCH_STARTUP_RUNS runs each, interleaved so both see the same machine load.
 */
export async function benchStartup(): Promise<BenchRow[]> {
  const bin = join(ROOT, 'dist/bin/rivulet.js');
  if (!existsSync(bin)) throw new Error('dist/ is missing: run `npm run build` first');
  const node = medianWall(['-e', '0']);
  const validate = medianWall([bin, 'validate', 'examples/default.alloy']);
  const version = medianWall([bin, '--version']);
  return [
    compared('rivulet validate examples/default.alloy (median wall)', validate, 's', 'node -e 0', node),
    compared('rivulet --version (median wall)', version, 's', 'node -e 0', node),
  ];
}
