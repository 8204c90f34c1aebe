import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { timedNode } from './child-cpu.js';
import { comparedRuns, type Measured } from './harness.js';
import type { BenchRow } from './types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);

/**
 * RUNS starts of each command, the commands interleaved run by run so all see the same machine
 * load: `runs[c][i]` is command c's i-th start. Each command is the arguments of a plain `node`.
 */
function startups(commands: readonly (readonly string[])[]): Measured[][] {
  const runs = commands.map((): Measured[] => []);
  for (let i = 0; i < RUNS; i++) commands.forEach((args, c) => runs[c]!.push(timedNode(args, { cwd: ROOT })));
  return runs;
}

/** Round i of `subject` beside round i of `baseline`. */
const zip = (subject: readonly Measured[], baseline: readonly Measured[]) => subject.map((s, i) => [s, baseline[i]!] as const);

/**
 * Start-up of the built CLI as the installed package runs it: the bin (dist/bin/rivulet.js) starts
 * the CLI's bundle (dist/cli-bundle, one copy of our modules and the pure-JavaScript dependencies
 * in a few chunks). Measured: `rivulet validate` on the default config and `rivulet --version`,
 * beside `node -e 0` (Node's own start-up) and beside `validate` run through the library's
 * unbundled modules (dist/cli/main.js, which load rxjs and the other dependencies from
 * node_modules: what the bin would cost without the bundle), all in the same run; medians of
 * BENCH_STARTUP_RUNS starts in CPU seconds (user + system) with wall beside, and the median of
 * the per-start ratios. BENCH_STARTUP_BIN measures another copy
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
  const seconds = (s: number) => s;
  return [
    comparedRuns('rivulet validate examples/default.alloy (median)', 's', 'node -e 0', zip(validate!, node!), seconds),
    comparedRuns('rivulet --version (median)', 's', 'node -e 0', zip(version!, node!), seconds),
    comparedRuns('rivulet validate, bundled CLI (median)', 's', 'unbundled modules', zip(validate!, validateUnbundled!), seconds),
  ];
}
