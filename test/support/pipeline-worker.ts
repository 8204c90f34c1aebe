import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The built pipeline worker (`npm test` builds before it tests). A worker started from the sources
 * compiles the whole stage tree through tsx first, seconds per thread; tests that start threads
 * many times use the bundle, which starts in a fraction of that.
 */
export function builtPipelineWorker(): URL {
  const url = new URL('../../dist/cli/pipeline-worker.js', import.meta.url);
  if (!existsSync(fileURLToPath(url))) throw new Error('dist/cli/pipeline-worker.js is missing: run npm run build first');
  return url;
}
