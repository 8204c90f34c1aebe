/**
 * A playground run worker: runs configs one job at a time on its own thread, so the server stays
 * responsive and can stop a run that takes too long or too much memory by ending the thread.
 * Started by run-pool.ts; loads the built-in stages and the custom stage modules the server has.
 */
import { parentPort, workerData } from 'node:worker_threads';
// The built-in stages; a run needs no components.
import '../operators/index.js';
import { loadStageModules } from '../core/stage-modules.js';
import { aliasPackageToSources } from '../core/source-aliases.js';
import { ensureLinearTimeFallback } from '../lib/regex/index.js';
import type { WorkerJob, WorkerMessage, WorkerSetup } from './run-messages.js';
import { checkConfig, runPlayground, RunRequestError } from './run.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;

if (setup.linearTimeRegex) ensureLinearTimeFallback();
if (import.meta.url.endsWith('.ts')) aliasPackageToSources(new URL('..', import.meta.url));
await loadStageModules(setup.stageModules, process.cwd());

port.on('message', (job: WorkerJob) => void answer(job));
port.postMessage({ kind: 'ready' } satisfies WorkerMessage);

async function answer(job: WorkerJob): Promise<void> {
  let message: WorkerMessage;
  try {
    const value = job.kind === 'run' ? await runPlayground(job.request, setup.access) : checkConfig(job.config, setup.access);
    message = { kind: 'reply', id: job.id, value };
  } catch (err) {
    message = { kind: 'reply', id: job.id, error: (err as Error).message ?? String(err), badRequest: err instanceof RunRequestError };
  }
  port.postMessage(message);
}
