/**
 * A pipeline worker thread: one instance of a stage list, fed batches by the main thread (see
 * partitioned-pipeline.ts). Imports the modules that registered the main thread's stages (the
 * built-in stages' module, custom stage modules), then serves.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PartitionWorkerSetup } from './partition-messages.js';
import { servePartition } from './partition-worker.js';
import { aliasPackageToSources } from '../source-aliases.js';
import { loadStageModules } from '../stage-modules.js';
import { ensureLinearTimeFallback } from '../../lib/regex/index.js';

const setup = workerData as PartitionWorkerSetup;
if (setup.linearTimeRegex) ensureLinearTimeFallback();
if (import.meta.url.endsWith('.ts')) aliasPackageToSources(new URL('../..', import.meta.url));
for (const module of setup.stageRegistrars) await import(module);
await loadStageModules(setup.stageModules, process.cwd());
servePartition(parentPort!, setup);
