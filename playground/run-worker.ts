/**
 * A playground run worker: runs configs one job at a time on its own thread, so the server stays
 * responsive and can stop a run that takes too long or too much memory by ending the thread.
 * Started by run-pool.ts; loads the built-in stages and the custom stage modules the server has.
 */
import { register } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
// The built-in stages; a run needs no components.
import '../operators/index.js';
import { loadStageModules } from '../core/stage-modules.js';
import { ensureLinearTimeFallback } from '../lib/regex/index.js';
import type { WorkerJob, WorkerMessage, WorkerSetup } from './run-messages.js';
import { checkConfig, runPlayground, RunRequestError } from './run.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;

if (setup.linearTimeRegex) ensureLinearTimeFallback();
// Run from the sources (tests), a stage module's `import … from 'rivulet'` must reach these same
// sources, as the test runner's aliases make it do on the main thread; the package's own name
// would load the built copy, with a stage registry of its own.
if (import.meta.url.endsWith('.ts')) aliasPackageToSources();
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

function aliasPackageToSources(): void {
  const root = new URL('..', import.meta.url).href;
  const targets = { rivulet: `${root}index.ts`, 'rivulet/testing': `${root}testing/index.ts` };
  const hooks = `const targets = ${JSON.stringify(targets)};
export async function resolve(specifier, context, next) {
  return next(Object.hasOwn(targets, specifier) ? targets[specifier] : specifier, context);
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
