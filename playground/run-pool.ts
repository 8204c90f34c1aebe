/**
 * Runs playground jobs on worker threads, so a config that loops or hoards memory never blocks the
 * server: each job gets a wall-time limit and each worker a heap limit, and a worker past either
 * is ended and the job answered with what stopped it. Idle workers are kept for the next job,
 * because loading the stages takes longer than most runs.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { loadedStageModuleFiles } from '../core/stage-modules.js';
import { linearTimeFallbackEnabled } from '../lib/regex/index.js';
import type { ConfigProblem, RunRequest, RunResult } from './api.js';
import type { WorkerJob, WorkerMessage, WorkerSetup } from './run-messages.js';
import { type HostAccess, RunRequestError, stoppedRun } from './run.js';

/** How long one job may take and how much memory its worker may hold. */
export interface RunLimits {
  readonly timeoutMs: number;
  /** V8's old-generation heap limit of each worker. */
  readonly maxHeapMb: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { timeoutMs: 10_000, maxHeapMb: 512 };

export interface RunPoolOptions {
  readonly access?: HostAccess;
  readonly limits?: Partial<RunLimits>;
  /** Jobs running at once; later ones wait. Each may hold up to `maxHeapMb`. */
  readonly maxWorkers?: number;
}

/** What ended a job: its worker's reply, or the reason the worker was stopped. */
type Outcome = { readonly message: Extract<WorkerMessage, { kind: 'reply' }> } | { readonly stopped: string };

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * The worker's module. From the sources (tests) it is TypeScript, started through a small
 * JavaScript module that registers tsx first; in the package it is the bundle's
 * `playground/run-worker.js`, beside the running chunk (in dist/ or one folder below it).
 */
function workerEntry(): URL {
  if (import.meta.url.endsWith('.ts')) return new URL('./run-worker-source.mjs', import.meta.url);
  for (const base of [HERE, dirname(HERE)]) {
    const file = join(base, 'playground', 'run-worker.js');
    if (existsSync(file)) return pathToFileURL(file);
  }
  throw new Error(`the playground's run worker is missing from the package (looked beside ${HERE})`);
}

/** One worker thread and the job it is running. */
class RunWorker {
  readonly worker: Worker;
  /** Settles once the worker has loaded its modules (rejects if it never does). */
  readonly ready: Promise<void>;
  /** The custom stage modules it loaded, to tell whether it still matches the server's. */
  readonly modulesKey: string;
  alive = true;
  private pending: { id: number; settle: (outcome: Outcome) => void } | undefined;

  constructor(setup: WorkerSetup, limits: RunLimits) {
    this.modulesKey = setup.stageModules.join('\n');
    this.worker = new Worker(workerEntry(), {
      workerData: setup,
      // The server's own flags (a debugger port, say) are not the worker's business.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb },
      // A sandboxed run has no environment to read, whatever path it might find to process.env.
      ...(setup.access.allowHostAccess ? {} : { env: {} }),
    });
    this.worker.unref();
    let started: () => void = () => {};
    let failed: (err: Error) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    // Awaited by the first job; never an unhandled rejection when no job comes.
    this.ready.catch(() => {});
    this.worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'ready') started();
      else if (this.pending?.id === message.id) this.settle({ message });
    });
    this.worker.on('error', (err: Error & { code?: string }) => {
      this.alive = false;
      const reason =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `used more than ${limits.maxHeapMb} MiB` : `failed: ${err.message ?? String(err)}`;
      failed(new Error(`the run worker ${reason}`));
      this.settle({ stopped: reason });
    });
    this.worker.on('exit', (code) => {
      this.alive = false;
      failed(new Error(`the run worker exited with code ${code} before it was ready`));
      this.settle({ stopped: `its worker exited with code ${code}` });
    });
  }

  /** Runs one job; past `timeoutMs` the worker is ended. */
  execute(job: WorkerJob, timeoutMs: number): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => {
        this.settle({ stopped: `took longer than ${formatSeconds(timeoutMs)}` });
        void this.stop();
      }, timeoutMs);
      this.pending = {
        id: job.id,
        settle: (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        },
      };
      this.worker.postMessage(job);
    });
  }

  /** Ends the thread, and with it whatever it is running. */
  stop(): Promise<number> {
    this.alive = false;
    return this.worker.terminate();
  }

  private settle(outcome: Outcome): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.settle(outcome);
  }
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** A job that ended without a reply: the client went away. */
export class RunAbortedError extends Error {}

/**
 * The playground's workers. `run` and `check` answer as `runPlayground` and `checkConfig` do, or
 * with a config problem `run stopped: …` when a limit ended the job.
 */
export class RunPool {
  private readonly limits: RunLimits;
  private readonly access: HostAccess;
  private readonly maxWorkers: number;
  private readonly idle: RunWorker[] = [];
  private readonly busy = new Set<RunWorker>();
  private readonly waiting: Array<() => void> = [];
  private nextId = 1;
  private closed = false;

  constructor(options: RunPoolOptions = {}) {
    this.limits = { ...DEFAULT_RUN_LIMITS, ...options.limits };
    this.access = options.access ?? {};
    this.maxWorkers = options.maxWorkers ?? 2;
  }

  async run(request: RunRequest, signal?: AbortSignal): Promise<RunResult> {
    const outcome = await this.execute({ id: this.nextId++, kind: 'run', request }, signal);
    if ('stopped' in outcome) return stoppedRun(request, `run stopped: ${outcome.stopped}`);
    const { message } = outcome;
    if ('error' in message) throw message.badRequest ? new RunRequestError(message.error) : new Error(message.error);
    return message.value as RunResult;
  }

  async check(config: string, signal?: AbortSignal): Promise<ConfigProblem[]> {
    const outcome = await this.execute({ id: this.nextId++, kind: 'check', config }, signal);
    if ('stopped' in outcome) return [{ line: 0, col: 0, message: `check stopped: ${outcome.stopped}` }];
    const { message } = outcome;
    if ('error' in message) throw new Error(message.error);
    return message.value as ConfigProblem[];
  }

  /** Starts a worker ahead of the first job, so that one does not wait for the stages to load. */
  warm(): void {
    if (this.closed || this.idle.length > 0 || this.busy.size > 0) return;
    this.idle.push(new RunWorker(this.setup(), this.limits));
  }

  /** Ends every worker; jobs still running are answered as stopped. */
  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.idle, ...this.busy];
    this.idle.length = 0;
    for (const wake of this.waiting.splice(0)) wake();
    await Promise.all(workers.map((w) => w.stop()));
  }

  private async execute(job: WorkerJob, signal: AbortSignal | undefined): Promise<Outcome> {
    const worker = await this.acquire(signal);
    const onAbort = () => void worker.stop();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await worker.ready;
      if (signal?.aborted) throw new RunAbortedError('the client went away');
      const outcome = await worker.execute(job, this.limits.timeoutMs);
      // Ending the worker for a client that went away settles the job as stopped: it was not.
      if (signal?.aborted) throw new RunAbortedError('the client went away');
      return outcome;
    } catch (err) {
      if (err instanceof RunAbortedError || signal?.aborted) throw new RunAbortedError('the client went away');
      return { stopped: (err as Error).message };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.release(worker);
    }
  }

  /** An idle worker that loaded the current stage modules, a new one, or the next free one. */
  private async acquire(signal: AbortSignal | undefined): Promise<RunWorker> {
    for (;;) {
      if (this.closed) throw new RunAbortedError('the playground is closing');
      if (signal?.aborted) throw new RunAbortedError('the client went away');
      const setup = this.setup();
      const key = setup.stageModules.join('\n');
      let worker = this.idle.pop();
      while (worker && (!worker.alive || worker.modulesKey !== key)) {
        void worker.stop();
        worker = this.idle.pop();
      }
      if (!worker && this.busy.size < this.maxWorkers) worker = new RunWorker(setup, this.limits);
      if (worker) {
        this.busy.add(worker);
        return worker;
      }
      await this.nextFree(signal);
    }
  }

  /** Waits until a worker is released (or the client goes away). */
  private nextFree(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(wake), 1);
        resolve();
      };
      this.waiting.push(wake);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  private release(worker: RunWorker): void {
    this.busy.delete(worker);
    // One idle worker is enough to start the next job at once; more would only hold memory.
    if (worker.alive && !this.closed && this.idle.length === 0) this.idle.push(worker);
    else void worker.stop();
    this.waiting.shift()?.();
  }

  private setup(): WorkerSetup {
    return { access: this.access, stageModules: loadedStageModuleFiles(), linearTimeRegex: linearTimeFallbackEnabled() };
  }
}
