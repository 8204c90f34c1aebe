/**
 * A pipeline worker thread: one instance of a stage list, fed batches by the main thread (see
 * core/threads/partitioned-pipeline.ts). Loads the built-in stages and the custom stage modules the main
 * thread has loaded, then serves.
 */
import { parentPort, workerData } from 'node:worker_threads';
import '../operators/index.js';
import type { PartitionWorkerSetup } from '../core/threads/partition-messages.js';
import { servePartition } from '../core/threads/partition-worker.js';
import { aliasPackageToSources } from '../core/source-aliases.js';
import { loadStageModules } from '../core/stage-modules.js';
import { ensureLinearTimeFallback } from '../lib/regex/index.js';

const setup = workerData as PartitionWorkerSetup;
if (setup.linearTimeRegex) ensureLinearTimeFallback();
if (import.meta.url.endsWith('.ts')) aliasPackageToSources(new URL('..', import.meta.url));
await loadStageModules(setup.stageModules, process.cwd());
servePartition(parentPort!, setup);
