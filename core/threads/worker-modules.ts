/**
 * Where a pipeline thread starts and what it imports to know the stages: the library starts its
 * threads itself, so a program only says how many it wants.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stageRegistrars } from '../stage-modules.js';

/** The modules a pipeline thread loads: its entry, and the modules that register the built-in stages. */
export interface PipelineWorkerModules {
  readonly entry: URL;
  /** Module URLs the thread imports before it reads the stage list. */
  readonly stageRegistrars: readonly string[];
}

/** This build's own: its worker entry, and the stage modules this thread has imported. */
export function pipelineWorkerModules(): PipelineWorkerModules {
  return { entry: pipelineWorkerEntry(), stageRegistrars: stageRegistrars() };
}

/**
 * The worker entry. From the sources it is TypeScript, started through a small module that
 * registers tsx first. Built, it is `pipeline-worker.js` beside the file this code runs from:
 * dist/core/threads/ in the library's modules, and dist/cli-bundle/ in the CLI's bundle, whose
 * shared chunks (where this code lands, since the bin and the library face both reach it) sit
 * beside the bundle's `pipeline-worker` entry.
 */
function pipelineWorkerEntry(): URL {
  if (import.meta.url.endsWith('.ts')) return new URL('./pipeline-worker-source.mjs', import.meta.url);
  const entry = new URL('./pipeline-worker.js', import.meta.url);
  if (!existsSync(fileURLToPath(entry))) throw new Error(`the pipeline worker is missing from the package: ${fileURLToPath(entry)}`);
  return entry;
}
