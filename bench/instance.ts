/**
 * A Rivulet instance measured from inside, and its load from outside: `rivulet run` of the built
 * CLI as a child process, with a probe preloaded that, between a `start` and a `stop` message on
 * its IPC channel, measures the process's CPU time (user + system, every thread), the main
 * thread's event-loop busy time (performance.eventLoopUtilization, active time), each worker
 * thread's (worker.performance.eventLoopUtilization, the workers found through process's 'worker'
 * event), the main thread's own CPU time (/proc/self/task/PID/stat on Linux) and the peak RSS.
 * Shard threads are worker threads too, found the same way. The load generator and the fake Loki
 * are another child (load-child.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DriveRequest } from './load-child.js';

const BIN = fileURLToPath(new URL('../dist/bin/rivulet.js', import.meta.url));

/**
 * The probe, as plain JavaScript preloaded with --import. The main thread's CPU time comes from
 * /proc (utime and stime, fields 14 and 15, in 1/100 s); elsewhere it is left out.
 */
const PROBE = `import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
if (isMainThread && process.send) {
  const workers = [];
  process.on('worker', (worker) => workers.push(worker));
  const mainCpu = () => {
    try {
      const stat = readFileSync('/proc/self/task/' + process.pid + '/stat', 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return undefined;
    }
  };
  const now = () => ({
    cpu: process.cpuUsage(),
    mainCpu: mainCpu(),
    elu: performance.eventLoopUtilization(),
    at: process.hrtime.bigint(),
    workers: workers.map((w) => w.performance.eventLoopUtilization()),
  });
  let from;
  process.on('message', (message) => {
    if (message === 'rivulet-bench:start') {
      from = now();
      process.send('rivulet-bench:started');
    } else if (message === 'rivulet-bench:stop') {
      const to = now();
      const cpu = process.cpuUsage(from.cpu);
      process.send({
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        wallSeconds: Number(to.at - from.at) / 1e9,
        mainBusySeconds: performance.eventLoopUtilization(to.elu, from.elu).active / 1000,
        ...(to.mainCpu === undefined ? {} : { mainCpuSeconds: to.mainCpu - from.mainCpu }),
        threadBusySeconds: to.workers.map((elu, i) => (from.workers[i] ? workers[i].performance.eventLoopUtilization(elu, from.workers[i]) : elu).active / 1000),
        peakRssMiB: process.resourceUsage().maxRSS / 1024,
      });
    }
  });
  process.channel.unref();
}`;

/** What the probe measured between `start` and `stop`. */
export interface InstanceFigures {
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly mainBusySeconds: number;
  readonly mainCpuSeconds?: number;
  readonly threadBusySeconds: readonly number[];
  readonly peakRssMiB: number;
}

/** The next message `child` sends. */
function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`the child exited with ${code} before answering`));
    child.once('exit', exited);
    child.once('message', (message) => {
      child.off('exit', exited);
      resolve(message as T);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(force);
}

/** The load generator and fake Loki in their own process. */
export interface LoadProcess {
  /** Where the fake Loki takes pushes. */
  readonly sinkUrl: string;
  /** Entries in one pass of the load. */
  readonly entries: number;
  /**
   * Pushes every body to `apiUrl` and resolves with the wall seconds, once every push was answered
   * and, when `delivered`, the fake Loki counted every entry.
   */
  pass(apiUrl: string, delivered: boolean): Promise<number>;
  close(): Promise<void>;
}

/** Starts load-child.ts with the loader this process runs under (tsx from `npm run bench`). */
export async function startLoad(): Promise<LoadProcess> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(new URL('./load-child.ts', import.meta.url))], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await nextMessage<{ sinkUrl: string; entries: number }>(child);
  return {
    ...ready,
    async pass(apiUrl, delivered) {
      const answer = nextMessage<{ wallSeconds: number }>(child);
      child.send({ drive: apiUrl, delivered } satisfies DriveRequest);
      return (await answer).wallSeconds;
    },
    close: () => stopChild(child),
  };
}

export interface Instance {
  /** Base URL of the config's `logs.source.api "in"`. */
  readonly apiUrl: string;
  /** What the process spent while `run` ran. */
  measure(run: () => Promise<void>): Promise<InstanceFigures>;
  stop(): Promise<void>;
}

/** How the instance runs its pipeline: on N pipeline threads (1: in place), or on N shards. */
export type InstanceMode = { readonly workers: number } | { readonly shards: number };

/** `rivulet run CONFIG --workers N` (or `--shards N`) of the built CLI, with the probe, once its push API listens. */
export async function startInstance(config: string, mode: InstanceMode): Promise<Instance> {
  if (!existsSync(BIN)) throw new Error('this bench runs the built CLI: run `npm run build` first');
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-instance-'));
  const file = join(dir, 'bench.alloy');
  writeFileSync(file, config);
  const child = spawn(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(PROBE)}`,
      BIN,
      'run',
      file,
      '--server.http.listen-addr',
      '127.0.0.1:0',
      ...('shards' in mode ? ['--shards', String(mode.shards)] : ['--workers', String(mode.workers)]),
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] },
  );
  let stderr = '';
  try {
    const apiUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`rivulet run did not start in time:\n${stderr}`)), 30_000);
      child.once('exit', (code) => reject(new Error(`rivulet run exited with ${code}:\n${stderr}`)));
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const listening = stderr
          .split('\n')
          .find((l) => l.includes('msg="now listening for http traffic"') && l.includes('component="logs.source.api.in"'));
        const addr = listening && /addr="([^"]+)"/.exec(listening)?.[1];
        if (addr) {
          clearTimeout(timer);
          resolve(addr);
        }
      });
    });
    return {
      apiUrl,
      async measure(run) {
        const started = nextMessage<string>(child);
        child.send('rivulet-bench:start');
        await started;
        await run();
        const figures = nextMessage<InstanceFigures>(child);
        child.send('rivulet-bench:stop');
        return await figures;
      },
      async stop() {
        await stopChild(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
