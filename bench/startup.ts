import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compared } from './harness.js';
import type { BenchRow } from './types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);

/**
 * Preloaded into each measured process: at exit it writes the process's own CPU time (user +
 * system, microseconds, everything since Node started) to the file named by the environment.
 * A parent cannot read a child's CPU time from Node; the child can.
 */
const REPORT_CPU = `import { writeFileSync } from 'node:fs';
process.on('exit', () => { const u = process.cpuUsage(); writeFileSync(process.env.RIVULET_BENCH_CPU_FILE, String(u.user + u.system)); });`;

interface Startup {
  /** Median CPU seconds (user + system) of one start. */
  readonly cpu: number;
  /** Median wall seconds of one start. */
  readonly wall: number;
}

const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Medians of RUNS starts of each command, the commands interleaved run by run so all see the same
 * machine load. Each command is the arguments of a plain `node`.
 */
function startups(commands: readonly (readonly string[])[]): Startup[] {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-startup-'));
  const cpuFile = join(dir, 'cpu');
  const samples = commands.map(() => ({ cpu: [] as number[], wall: [] as number[] }));
  try {
    for (let i = 0; i < RUNS; i++) {
      commands.forEach((args, c) => {
        const started = process.hrtime.bigint();
        execFileSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(REPORT_CPU)}`, ...args], {
          cwd: ROOT,
          stdio: 'ignore',
          env: { ...process.env, RIVULET_BENCH_CPU_FILE: cpuFile },
        });
        samples[c]!.wall.push(Number(process.hrtime.bigint() - started) / 1e9);
        samples[c]!.cpu.push(Number(readFileSync(cpuFile, 'utf8')) / 1e6);
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return samples.map((s) => ({ cpu: median(s.cpu), wall: median(s.wall) }));
}

/**
 * Start-up of the built CLI as the installed package runs it: the bin (dist/bin/rivulet.js) starts
 * the CLI's bundle (dist/cli-bundle, one copy of our modules and the pure-JavaScript dependencies
 * in a few chunks). Measured: `rivulet validate` on the default config and `rivulet --version`,
 * beside `node -e 0` (Node's own start-up) and beside `validate` run through the library's
 * unbundled modules (dist/cli/main.js, which load rxjs and the other dependencies from
 * node_modules: what the bin would cost without the bundle), all in the same run; medians of
 * BENCH_STARTUP_RUNS starts, CPU (user + system) and wall. BENCH_STARTUP_BIN measures another copy
 * instead, e.g. the bin of a project that installed the packed tarball
 * (`…/node_modules/rivulet/dist/bin/rivulet.js`).
 */
export async function benchStartup(): Promise<BenchRow[]> {
  const bin = process.env.BENCH_STARTUP_BIN ?? join(ROOT, 'dist/bin/rivulet.js');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run build\` first`);
  const unbundledMain = pathToFileURL(join(dirname(bin), '../cli/main.js')).href;
  const unbundled = `const { main } = await import(${JSON.stringify(unbundledMain)}); process.exitCode = await main(process.argv.slice(1));`;
  const [node, validate, version, validateUnbundled] = startups([
    ['-e', '0'],
    [bin, 'validate', 'examples/default.alloy'],
    [bin, '--version'],
    ['--input-type=module', '-e', unbundled, 'validate', 'examples/default.alloy'],
  ]);
  return [
    compared('rivulet validate examples/default.alloy (median CPU)', validate!.cpu, 's', 'node -e 0', node!.cpu),
    compared('rivulet validate examples/default.alloy (median wall)', validate!.wall, 's', 'node -e 0', node!.wall),
    compared('rivulet --version (median CPU)', version!.cpu, 's', 'node -e 0', node!.cpu),
    compared('rivulet --version (median wall)', version!.wall, 's', 'node -e 0', node!.wall),
    compared('rivulet validate, bundled CLI (median CPU)', validate!.cpu, 's', 'unbundled modules', validateUnbundled!.cpu),
    compared('rivulet validate, bundled CLI (median wall)', validate!.wall, 's', 'unbundled modules', validateUnbundled!.wall),
  ];
}
