import { UsageError } from './args.js';
import { workerCount } from './pipeline-workers.js';

/**
 * `--shards N`: a whole number from 1 to 256, 1 without the flag (a run as before). Each shard
 * runs its stages in place, so `--workers` above 1 beside it is refused.
 */
export function shardCount(value: string | boolean | undefined, workers: string | boolean | undefined): number {
  if (value === undefined) return 1;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new UsageError(`--shards must be a whole number from 1 to 256, got ${JSON.stringify(value)}`);
  if (workers !== undefined && workerCount(workers, 1) > 1)
    throw new UsageError('--shards cannot be combined with --workers above 1: each shard runs its stages on its own thread');
  return n;
}
