/**
 * CPU and wall seconds of a Node child process. A parent cannot read a child's CPU time from Node,
 * so the child reports its own: a module preloaded into it writes, at exit, the process's CPU time
 * (user + system of every thread, microseconds since Node started) to the file the environment
 * names.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Measured } from './harness.js';

const CPU_FILE = 'RIVULET_BENCH_CPU_FILE';
const REPORT_CPU = `import { writeFileSync } from 'node:fs';
process.on('exit', () => { const u = process.cpuUsage(); writeFileSync(process.env.${CPU_FILE}, String(u.user + u.system)); });`;

/** The `node` arguments that preload the report. */
export const REPORT_CPU_ARGS = ['--import', `data:text/javascript,${encodeURIComponent(REPORT_CPU)}`];

/**
 * Runs `node ARGS` to its end with the report preloaded, stdin from `stdinFile` (or none) and
 * stdout discarded; throws with its stderr when it fails.
 */
export function timedNode(args: readonly string[], options: { cwd?: string; stdinFile?: string } = {}): Measured {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-cpu-'));
  const cpuFile = join(dir, 'cpu');
  const stdin = options.stdinFile === undefined ? 'ignore' : openSync(options.stdinFile, 'r');
  try {
    const started = process.hrtime.bigint();
    const run = spawnSync(process.execPath, [...REPORT_CPU_ARGS, ...args], {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: [stdin, 'ignore', 'pipe'],
      env: { ...process.env, [CPU_FILE]: cpuFile },
      maxBuffer: 64 << 20,
    });
    const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${run.status ?? run.signal}: ${run.stderr}`);
    return { wallSeconds, cpuSeconds: Number(readFileSync(cpuFile, 'utf8')) / 1e6 };
  } finally {
    if (typeof stdin === 'number') closeSync(stdin);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Clock ticks a second in /proc/PID/stat (USER_HZ, 100 on Linux whatever the kernel's own rate). */
const USER_HZ = 100;

/**
 * CPU seconds (user + system, every thread) a running process `pid` has used so far, from
 * /proc/PID/stat (Linux): for children this process did not start with the report preloaded.
 */
export function cpuSecondsOfPid(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, so split after its closing bracket):
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}
