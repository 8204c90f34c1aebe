/**
 * One shard of a sharded run, on its own thread: the whole config built again, with a registry of
 * its own, every logs.process and sink running here for the streams this shard owns. Its
 * logs.source.api instances take the bodies the main thread hands off (decoding them here), and
 * its processors hand each entry to the shard that owns its stream over the ports between shards
 * (core/components/logs-processor.ts); the owner puts it into its stages and answers once its
 * receivers took the outputs over, which is when the push is answered.
 */
import { Writable } from 'node:stream';
import type { MessagePort } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { configErrorsOf } from '../../lib/config/errors.js';
import type { Log } from '../../lib/log.js';
import { systemClock } from '../clock.js';
import type { Entry } from '../entry.js';
import { TapHub } from '../inspect/tap.js';
import { gatheredFamilies } from '../metrics.js';
import { RetryLaterError } from '../receiver.js';
import { ComponentGraph } from '../runtime/graph.js';
import type { BodyAnswer, BodyClaim, BodyRequest, ShardPeers } from '../shard-context.js';
import { loadConfigStageModules } from '../stage-modules.js';
import { decodeEntries, encodeEntries, packedBuffers } from '../threads/entry-batch-codec.js';
import type { BetweenShards, FromShard, ShardSetup, ToShard } from './shard-messages.js';

type Deliver = (entries: Entry[]) => Promise<void>;
type TakeBody = (body: Uint8Array, request: BodyRequest, claim: BodyClaim) => Promise<BodyAnswer>;

export async function serveShard(port: MessagePort, setup: ShardSetup): Promise<void> {
  const post = (message: FromShard, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  // Debug records cross only when the run logs them (stages log one per failing entry).
  const { debug } = setup;
  const refuse = (id: number) => (err: unknown) => post({ kind: 'refused', id, error: String(err) });
  const log: Log = (level, message, fields) => {
    if (level === 'debug' && !debug) return;
    post({ kind: 'log', level, message, ...(fields ? { fields: cloneable(fields) } : {}) });
  };
  const stdout = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      post({ kind: 'stdout', text: chunk.toString() });
      done();
    },
  });
  const peers = new ShardPorts(setup);
  const registry = new Registry();
  const clock = systemClock();
  // The entries flowing between components are counted where they flow, on the shards, and relayed
  // from here to the main thread's tap clients.
  const taps = new TapHub(registry);
  const graph = new ComponentGraph(
    (id) => ({
      id,
      clock,
      registry,
      stdout,
      log: (level, message, fields) => log(level, message, { component: id, ...fields }),
      pipelineThreads: 1,
      shard: peers,
    }),
    taps.wrapExport,
  );
  try {
    graph.load(setup.configText, setup.configFile);
    await graph.start();
  } catch (err) {
    post({ kind: 'failed', errors: configErrorsOf(err).map((e) => e.message) });
    return;
  }

  port.on('message', (message: ToShard) => {
    switch (message.kind) {
      case 'body':
        void peers
          .takeBody(message.component, message.body, message.request, message.claim)
          .then((answer) => post({ kind: 'answer', id: message.id, answer }), refuse(message.id));
        return;
      case 'metrics':
        void gatheredFamilies(registry).then((families) => post({ kind: 'metrics', id: message.id, families }), refuse(message.id));
        return;
      case 'reload':
        void reload(message.text).then((errors) => post({ kind: 'reloaded', id: message.id, errors }), refuse(message.id));
        return;
      case 'tap': {
        const { component, direction } = message;
        taps.relay(component, direction, message.clients, message.ratePerSecond, (lines) =>
          post({ kind: 'tap', component, direction, lines }),
        );
        return;
      }
      case 'stop':
        void Promise.resolve(graph.component(message.component)?.stop())
          .catch((err) => log('error', 'stopping a component failed', { component: message.component, error: String(err) }))
          .then(() => post({ kind: 'stopped', id: message.id }));
        return;
    }
  });
  post({ kind: 'ready' });

  async function reload(text: string): Promise<string[]> {
    try {
      await loadConfigStageModules(text, setup.configFile);
      return (await graph.reload(text, setup.configFile)).map((e) => e.message);
    } catch (err) {
      return configErrorsOf(err).map((e) => e.message);
    }
  }
}

/** This shard's peers: the components served here, and the ports to the other shards. */
export class ShardPorts implements ShardPeers {
  readonly index: number;
  readonly count: number;
  private readonly entries = new Map<string, Deliver>();
  private readonly bodies = new Map<string, TakeBody>();
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private nextId = 0;

  constructor(private readonly setup: ShardSetup) {
    this.index = setup.index;
    this.count = setup.count;
    setup.peers.forEach((peer) => peer?.on('message', (message: BetweenShards) => this.receive(peer, message)));
  }

  deliver(shard: number, id: string, entries: Entry[]): Promise<void> {
    if (shard === this.index) return this.served(id)(entries);
    const packed = encodeEntries(entries);
    const deliveryId = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(deliveryId, { resolve, reject });
      const message: BetweenShards = { kind: 'deliver', id: deliveryId, component: id, packed };
      this.setup.peers[shard]!.postMessage(message, packedBuffers(packed));
    });
  }

  serveEntries(id: string, send: Deliver): () => void {
    this.entries.set(id, send);
    return () => {
      if (this.entries.get(id) === send) this.entries.delete(id);
    };
  }

  serveBodies(id: string, take: TakeBody): () => void {
    this.bodies.set(id, take);
    return () => {
      if (this.bodies.get(id) === take) this.bodies.delete(id);
    };
  }

  takeBody(id: string, body: Uint8Array, request: BodyRequest, claim: BodyClaim): Promise<BodyAnswer> {
    const take = this.bodies.get(id);
    if (take) return take(body, request, claim);
    // The source has stopped here, so its main thread's instance, which owns the bound and stops
    // first, admits nothing more against it: what the claim holds need not be given back.
    return Promise.resolve({
      entries: 0,
      error: { status: 503, reason: 'shutting_down', message: 'the server is shutting down' },
    });
  }

  private served(id: string): Deliver {
    return this.entries.get(id) ?? (() => Promise.reject(new Error(`${id} takes no entries on shard ${this.index}`)));
  }

  private receive(peer: MessagePort, message: BetweenShards): void {
    if (message.kind === 'deliver') {
      // Taken in the order the peer sent, so each stream reaches the stages in order.
      this.served(message.component)(decodeEntries(message.packed)).then(
        () => peer.postMessage({ kind: 'delivered', id: message.id } satisfies BetweenShards),
        (err: Error) =>
          peer.postMessage({
            kind: 'delivered',
            id: message.id,
            error: { message: err.message, retryLater: err instanceof RetryLaterError },
          } satisfies BetweenShards),
      );
      return;
    }
    const waiting = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    if (!waiting) return;
    if (!message.error) waiting.resolve();
    else waiting.reject(message.error.retryLater ? new RetryLaterError(message.error.message) : new Error(message.error.message));
  }
}

/** Log fields as they can cross threads: anything else by its text. */
function cloneable(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    out[name] =
      value === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof value) || Array.isArray(value) ? value : String(value);
  }
  return out;
}
