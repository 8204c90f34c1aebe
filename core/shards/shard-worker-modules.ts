/**
 * Where a shard thread starts. From the sources it is TypeScript, started through a module that
 * registers tsx first; built, it is `shard-worker.js` beside the file this code runs from:
 * dist/core/shards/ in the library's modules, and dist/cli-bundle/ in the CLI's bundle, whose
 * shared chunks (where the commands' code lands) sit beside the bundle's `shard-worker` entry.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function shardWorkerEntry(): URL {
  if (import.meta.url.endsWith('.ts')) return new URL('./shard-worker-source.mjs', import.meta.url);
  const entry = new URL('./shard-worker.js', import.meta.url);
  if (!existsSync(fileURLToPath(entry))) throw new Error(`the shard worker is missing from the package: ${fileURLToPath(entry)}`);
  return entry;
}
