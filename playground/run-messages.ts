/** What the playground server and its run workers say to each other (see run-pool.ts). */
import type { ConfigProblem, RunRequest, RunResult } from './api.js';
import type { HostAccess } from './run.js';

/** Given to each worker when it starts. */
export interface WorkerSetup {
  readonly access: HostAccess;
  /** Custom stage modules (absolute files) to load, so runs see the stages the server offers. */
  readonly stageModules: readonly string[];
  /** Whether the server runs patterns with V8's linear-time fallback, so runs match it. */
  readonly linearTimeRegex: boolean;
}

/** One job for a worker. */
export type WorkerJob =
  | { readonly id: number; readonly kind: 'run'; readonly request: RunRequest }
  | { readonly id: number; readonly kind: 'check'; readonly config: string };

/** A worker's messages: ready for jobs once its modules are loaded, then one reply per job. */
export type WorkerMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'reply'; readonly id: number; readonly value: RunResult | ConfigProblem[] }
  | { readonly kind: 'reply'; readonly id: number; readonly error: string; readonly badRequest: boolean };
