import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UsageError } from './args.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * The pipeline worker's module. From the sources it is TypeScript, started through a small module
 * that registers tsx first; in the package it is the bundle's `pipeline-worker.js`, beside the
 * running chunk (in dist/ or one folder below it).
 */
export function pipelineWorkerUrl(): URL {
  if (import.meta.url.endsWith('.ts')) return new URL('./pipeline-worker-source.mjs', import.meta.url);
  for (const base of [HERE, dirname(HERE)]) {
    const file = join(base, 'pipeline-worker.js');
    if (existsSync(file)) return pathToFileURL(file);
  }
  throw new Error(`the pipeline worker is missing from the package (looked beside ${HERE})`);
}

/** `--workers N`: a whole number from 1 to 256; without the flag, `fallback`. */
export function workerCount(value: string | boolean | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new UsageError(`--workers must be a whole number from 1 to 256, got ${JSON.stringify(value)}`);
  return n;
}

/** The default for `rivulet run`: one pipeline thread per core. */
export function coreCount(): number {
  return availableParallelism();
}
