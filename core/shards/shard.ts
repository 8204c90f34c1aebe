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
import { HandBack, HandedBackError } from '../hand-back.js';
import { InputBacklog } from '../input-time.js';
import { RetryLaterError } from '../receiver.js';
import { ComponentGraph } from '../runtime/graph.js';
import type { BodyAnswer, BodyClaim, BodyRequest, DeliverOptions, ShardPeers } from '../shard-context.js';
import { loadConfigStageModules } from '../stage-modules.js';
import { decodeEntries, encodeEntries, packedBuffers } from '../threads/entry-batch-codec.js';
import type { BetweenShards, FromShard, ShardSetup, ToShard } from './shard-messages.js';

type Deliver = (entries: Entry[], options?: DeliverOptions) => Promise<void>;
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
      case 'health':
        post({ kind: 'health', id: message.id, components: graph.health().map(({ id, health }) => ({ id, health })) });
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
      const errors = await graph.reload(text, setup.configFile);
      await peers.reloadsSettled();
      return errors.map((e) => e.message);
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
  /** What a reload's answer waits for (holdReloadAnswer). */
  private readonly reloadHolds = new Set<() => Promise<void>>();
  /** The hand-backs and backlogs of this shard's senders, numbered for the other shards. */
  private readonly handBacksSent = new Relayed<HandBack>();
  private readonly backlogsSent = new Relayed<InputBacklog>();
  /** Other shards' senders' hand-backs, by `<shard>/<number>`: one here for each, until requested or ended. */
  private readonly handBacksTaken = new Map<string, HandBack>();
  /** Other shards' sources' backlogs, by `<shard>/<number>`: one here for each, waiting while it waits, until it closes. */
  private readonly backlogsTaken = new Map<string, { readonly backlog: InputBacklog; release: (() => void) | undefined }>();

  constructor(private readonly setup: ShardSetup) {
    this.index = setup.index;
    this.count = setup.count;
    setup.peers.forEach((peer, from) => peer?.on('message', (message: BetweenShards) => this.receive(peer, from, message)));
  }

  holdReloadAnswer(settled: () => Promise<void>): () => void {
    this.reloadHolds.add(settled);
    return () => this.reloadHolds.delete(settled);
  }

  /** Settles once everything holding a reload's answer settled. */
  async reloadsSettled(): Promise<void> {
    await Promise.all([...this.reloadHolds].map((settled) => settled()));
  }

  deliver(shard: number, id: string, entries: Entry[], options?: DeliverOptions): Promise<void> {
    if (shard === this.index) return this.served(id)(entries, options);
    const packed = encodeEntries(entries);
    const deliveryId = this.nextId++;
    const untilSentOn = options?.untilSentOn === true;
    const handBack = untilSentOn ? options?.handBack : undefined;
    const backlog = options?.backlog;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(deliveryId, { resolve, reject });
      const message: BetweenShards = {
        kind: 'deliver',
        id: deliveryId,
        component: id,
        packed,
        ...(untilSentOn ? { untilSentOn } : {}),
        ...(handBack ? { handBack: this.handBacksSent.number(handBack) } : {}),
        ...(backlog ? { backlog: this.backlogsSent.number(backlog) } : {}),
      };
      const port = this.setup.peers[shard]!;
      port.postMessage(message, packedBuffers(packed));
      // Told after the delivery, on the same port: the other shard hears of them after the entries.
      if (handBack && this.handBacksSent.firstTo(handBack, shard)) {
        const tell = (taken: boolean) => () =>
          port.postMessage({ kind: 'handBack', handBack: message.handBack!, taken } satisfies BetweenShards);
        handBack.onRequest(tell(true));
        handBack.onEnd(tell(false));
      }
      if (backlog && this.backlogsSent.firstTo(backlog, shard)) {
        const tell = (waiting: boolean) =>
          port.postMessage({ kind: 'backlog', backlog: message.backlog!, waiting, closed: backlog.isClosed } satisfies BetweenShards);
        tell(backlog.waiting);
        backlog.watch(tell);
      }
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

  private receive(peer: MessagePort, from: number, message: BetweenShards): void {
    if (message.kind === 'deliver') {
      const options: DeliverOptions | undefined =
        message.untilSentOn || message.backlog !== undefined
          ? {
              ...(message.untilSentOn ? { untilSentOn: true } : {}),
              ...(message.handBack !== undefined ? { handBack: this.handBackOf(from, message.handBack) } : {}),
              ...(message.backlog !== undefined ? { backlog: this.backlogOf(from, message.backlog) } : {}),
            }
          : undefined;
      // Taken in the order the peer sent, so each stream reaches the stages in order.
      this.served(message.component)(decodeEntries(message.packed), options).then(
        () => peer.postMessage({ kind: 'delivered', id: message.id } satisfies BetweenShards),
        (err: Error) =>
          peer.postMessage({
            kind: 'delivered',
            id: message.id,
            error: { message: err.message, retryLater: err instanceof RetryLaterError, handedBack: err instanceof HandedBackError },
          } satisfies BetweenShards),
      );
      return;
    }
    if (message.kind === 'handBack') {
      const key = `${from}/${message.handBack}`;
      const handBack = this.handBacksTaken.get(key);
      this.handBacksTaken.delete(key);
      if (message.taken) handBack?.request();
      else handBack?.end();
      return;
    }
    if (message.kind === 'backlog') {
      const key = `${from}/${message.backlog}`;
      const taken = this.backlogsTaken.get(key);
      if (!taken) return;
      if (message.waiting) taken.release ??= taken.backlog.hold();
      else {
        taken.release?.();
        taken.release = undefined;
      }
      if (message.closed) {
        taken.backlog.close();
        this.backlogsTaken.delete(key);
      }
      return;
    }
    const waiting = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    if (!waiting) return;
    const { error } = message;
    if (!error) waiting.resolve();
    else
      waiting.reject(
        error.handedBack ? new HandedBackError() : error.retryLater ? new RetryLaterError(error.message) : new Error(error.message),
      );
  }

  /** The backlog here that stands for shard `from`'s backlog `id` (it waits once told so). */
  private backlogOf(from: number, id: number): InputBacklog {
    const key = `${from}/${id}`;
    let taken = this.backlogsTaken.get(key);
    if (!taken) {
      taken = { backlog: new InputBacklog(), release: undefined };
      this.backlogsTaken.set(key, taken);
    }
    return taken.backlog;
  }

  /** The hand-back here that stands for shard `from`'s hand-back `id`. */
  private handBackOf(from: number, id: number): HandBack {
    const key = `${from}/${id}`;
    let handBack = this.handBacksTaken.get(key);
    if (!handBack) {
      handBack = new HandBack();
      this.handBacksTaken.set(key, handBack);
    }
    return handBack;
  }
}

/** A sender's objects (hand-backs, backlogs) by the number the other shards know each by, and the shards told of each. */
class Relayed<T extends object> {
  private readonly sent = new WeakMap<T, { readonly id: number; readonly shards: Set<number> }>();
  private next = 0;

  number(value: T): number {
    let sent = this.sent.get(value);
    if (!sent) {
      sent = { id: this.next++, shards: new Set() };
      this.sent.set(value, sent);
    }
    return sent.id;
  }

  /** Whether `value` (numbered) goes to `shard` for the first time. */
  firstTo(value: T, shard: number): boolean {
    const { shards } = this.sent.get(value)!;
    if (shards.has(shard)) return false;
    shards.add(shard);
    return true;
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
