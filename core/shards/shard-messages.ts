/**
 * What the main thread and a shard thread say to each other, and what shards say to each other
 * over the ports between them. Bodies and packed entries cross transferred, not copied.
 */
import type { MessagePort } from 'node:worker_threads';
import type { LogLevel } from '../../lib/log.js';
import type { TapDirection } from '../inspect/tap.js';
import type { MetricFamilies } from '../metrics.js';
import type { Health } from '../runtime/component.js';
import type { BodyAnswer, BodyClaim, BodyRequest } from '../shard-context.js';
import type { PackedEntries } from '../threads/entry-batch-codec.js';

/** What a shard thread starts with. */
export interface ShardSetup {
  readonly index: number;
  readonly count: number;
  /** The config every shard builds, as the main thread read it. */
  readonly configText: string;
  readonly configFile: string;
  /** Modules (URLs) whose import registers the built-in stages and components. */
  readonly stageRegistrars: readonly string[];
  readonly componentRegistrars: readonly string[];
  /** Custom stage (and component) modules loaded on the main thread, as absolute files. */
  readonly stageModules: readonly string[];
  readonly linearTimeRegex: boolean;
  /** Whether the run logs debug records: only then do they cross to the main thread. */
  readonly debug: boolean;
  /** A port to each other shard, by its index; none at this shard's own. */
  readonly peers: readonly (MessagePort | undefined)[];
}

export type ToShard =
  | {
      readonly kind: 'body';
      readonly id: number;
      readonly component: string;
      readonly body: Uint8Array;
      readonly request: BodyRequest;
      /** The body's claim on its source's bound, whose memory the main thread and every shard share. */
      readonly claim: BodyClaim;
    }
  | { readonly kind: 'metrics'; readonly id: number }
  /** The health of every component built here. */
  | { readonly kind: 'health'; readonly id: number }
  | { readonly kind: 'reload'; readonly id: number; readonly text: string }
  /**
   * `clients` clients on the main thread tap `component` in `direction`, the fastest at
   * `ratePerSecond`: the shard relays what passes there (0 clients: it stops).
   */
  | {
      readonly kind: 'tap';
      readonly component: string;
      readonly direction: TapDirection;
      readonly clients: number;
      readonly ratePerSecond: number;
    }
  /** Stops one component: the main thread stops each on every shard before the next (see ShardedRun.stop). */
  | { readonly kind: 'stop'; readonly id: number; readonly component: string };

export type FromShard =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly errors: readonly string[] }
  | { readonly kind: 'answer'; readonly id: number; readonly answer: BodyAnswer }
  | { readonly kind: 'metrics'; readonly id: number; readonly families: MetricFamilies }
  | { readonly kind: 'health'; readonly id: number; readonly components: readonly ShardComponentHealth[] }
  | { readonly kind: 'reloaded'; readonly id: number; readonly errors: readonly string[] }
  | { readonly kind: 'stopped'; readonly id: number }
  /** A question the shard could not answer (gathering its metrics, taking a body, reloading failed unexpectedly). */
  | { readonly kind: 'refused'; readonly id: number; readonly error: string }
  | { readonly kind: 'log'; readonly level: LogLevel; readonly message: string; readonly fields?: Record<string, unknown> }
  | { readonly kind: 'stdout'; readonly text: string }
  /** Lines of what passed a tapped component here (JSON, each ending in a newline), for the main thread's clients. */
  | { readonly kind: 'tap'; readonly component: string; readonly direction: TapDirection; readonly lines: readonly string[] };

/** One component's health on a shard, as the shard's graph reports it (a rejected reload's failure included). */
export interface ShardComponentHealth {
  readonly id: string;
  readonly health: Health;
}

/** Between shards: entries for the component `component` on the receiving shard, and its answer. */
export type BetweenShards =
  | {
      readonly kind: 'deliver';
      readonly id: number;
      readonly component: string;
      readonly packed: PackedEntries;
      /** Answer only once the stages sent on what they held of these entries (`SendOptions.untilSentOn`). */
      readonly untilSentOn?: boolean;
      /** The sender's hand-back (`SendOptions.handBack`), by its number on the sending shard. */
      readonly handBack?: number;
      /** The sender's backlog (`SendOptions.backlog`), by its number on the sending shard. */
      readonly backlog?: number;
    }
  | {
      readonly kind: 'delivered';
      readonly id: number;
      readonly error?: { readonly message: string; readonly retryLater: boolean; readonly handedBack?: boolean };
    }
  /** The sending shard's hand-back `handBack` was requested (`taken`) or ended. */
  | { readonly kind: 'handBack'; readonly handBack: number; readonly taken: boolean }
  /** The sending shard's backlog `backlog` waits now, or not; `closed` once its source closed it. */
  | { readonly kind: 'backlog'; readonly backlog: number; readonly waiting: boolean; readonly closed: boolean };
