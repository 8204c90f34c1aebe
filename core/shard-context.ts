/**
 * What components see of a sharded run (core/shards): the main thread reads HTTP bodies and hands
 * them off to shard threads; each shard runs the sources' decoding, every logs.process and every
 * sink, and hands entries to the shard that owns their stream. The kernel holds only these
 * contracts, so sources and processors can take part without knowing the threads.
 */
import type { Entry } from './entry.js';
import type { SendOptions } from './receiver.js';

/** A body's request as the shard's decoder needs it: a few header values and the route's kind. */
export type BodyRequest = Readonly<Record<string, string>>;

/**
 * What a shard answers for a body: how many entries it handed on, and the error the request is
 * answered with, if any (entries may have been handed on before a partial refusal, such as a
 * stream with invalid labels).
 */
export interface BodyAnswer {
  readonly entries: number;
  readonly error?: { readonly status: number; readonly reason: string; readonly message: string };
}

/**
 * What a body holds of its source's bound on pending bytes (`max_pending_size`), which the main
 * thread and every shard share: the bound's memory (a `SharedArrayBuffer`, shared rather than
 * copied when posted) and the bytes the main thread admitted for the body while reading it. The
 * shard that takes the body holds on to them, as its decoding grows and shrinks, and gives them
 * back once it answered; the main thread does not give them back again.
 */
export interface BodyClaim {
  readonly bound: SharedArrayBuffer;
  readonly held: number;
}

/** A component built on a shard thread gets this in its context. */
export interface ShardPeers {
  /** This shard, 0 … count−1. */
  readonly index: number;
  readonly count: number;
  /**
   * Hands entries to the component `id` on shard `shard` (this one included); resolves once that
   * component took them over (with `untilSentOn`, once its stages sent on what they held of them),
   * rejects as its `send` did (a `RetryLaterError` or `HandedBackError` stays one). A `handBack`
   * is requested or ended on the other shard too, and a `backlog` waits and closes there too,
   * each after the entries delivered before.
   */
  deliver(shard: number, id: string, entries: Entry[], options?: DeliverOptions): Promise<void>;
  /** Takes what other shards deliver to component `id` on this shard; returns the undo. */
  serveEntries(id: string, send: (entries: Entry[], options?: DeliverOptions) => Promise<void>): () => void;
  /** Takes the bodies the main thread hands off to the source `id`, each with its claim; returns the undo. */
  serveBodies(id: string, take: (body: Uint8Array, request: BodyRequest, claim: BodyClaim) => Promise<BodyAnswer>): () => void;
  /**
   * Holds this shard's answer to a reload until `settled()` resolves (asked once the reload's
   * components are updated); returns the undo. A processor whose stage list was replaced hands on
   * what the old list flushed first: in place that goes out before anything sent after the
   * reload, and here a stream's next entries may be another shard's to process.
   */
  holdReloadAnswer?(settled: () => Promise<void>): () => void;
}

/**
 * What of a send's options crosses to the shard owning the entries: a source acknowledging its
 * input upstream only once held lines were sent on (a JetStream reader) waits for the owner's
 * stages, and can take back what they hold; the owner's stages measure idle input while the
 * source's backlog waits as a stage in place does.
 */
export type DeliverOptions = Pick<SendOptions, 'untilSentOn' | 'handBack' | 'backlog'>;

/** A source on the main thread of a sharded run gets this: where its bodies go to be decoded. */
export interface ShardFront {
  /**
   * Hands `body` (transferred, not copied) and its claim to a shard's source `id`, and resolves
   * with its answer.
   */
  handOff(id: string, body: Uint8Array, request: BodyRequest, claim: BodyClaim): Promise<BodyAnswer>;
}
