import { availableParallelism } from 'node:os';
import { UsageError } from './args.js';

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
