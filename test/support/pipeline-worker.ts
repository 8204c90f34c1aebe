import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PipelineWorkerModules } from '../../core/threads/worker-modules.js';

/**
 * The built pipeline worker and the built stages it imports (`npm test` builds before it tests). A
 * worker started from the sources compiles the whole stage tree through tsx first, seconds per
 * thread; tests that start threads many times use the build, which starts in a fraction of that.
 */
export function builtPipelineWorker(): PipelineWorkerModules {
  const entry = new URL('../../dist/core/threads/pipeline-worker.js', import.meta.url);
  if (!existsSync(fileURLToPath(entry))) throw new Error('dist/core/threads/pipeline-worker.js is missing: run npm run build first');
  return { entry, stageRegistrars: [new URL('../../dist/operators/index.js', import.meta.url).href] };
}
