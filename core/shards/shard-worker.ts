/**
 * A shard thread of a sharded run (see sharded-run.ts): imports what registers the main thread's
 * stages and components (logs.process among them, and the custom modules loaded there), then
 * builds its part of the config and serves.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ensureLinearTimeFallback } from '../../lib/regex/index.js';
import '../components/logs-process.js';
import { aliasPackageToSources } from '../source-aliases.js';
import { loadStageModules } from '../stage-modules.js';
import type { ShardSetup } from './shard-messages.js';
import { serveShard } from './shard.js';

const setup = workerData as ShardSetup;
if (setup.linearTimeRegex) ensureLinearTimeFallback();
if (import.meta.url.endsWith('.ts')) aliasPackageToSources(new URL('../..', import.meta.url));
for (const module of [...setup.stageRegistrars, ...setup.componentRegistrars]) await import(module);
await loadStageModules(setup.stageModules, process.cwd());
await serveShard(parentPort!, setup);
