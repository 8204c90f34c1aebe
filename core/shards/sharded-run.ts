/**
 * A sharded run, the main thread's side. The main thread accepts connections, parses HTTP and
 * reads bodies; each body goes, transferred, to the shard with the fewest bodies pending, whose
 * logs.source.api decodes it. Every shard builds the same config (shard.ts): its processors hand
 * each entry to the shard that owns its stream, over ports between the shards, without the main
 * thread in between, and every shard runs its own sinks (a logs.write queue of its own, its
 * write-ahead log in `<dir>/shard-<i>`). The client is answered with what the shard answered,
 * once the entries were taken over.
 *
 * On the main thread, the config's processors and sinks are stand-ins (`shardedDefinitions`):
 * checked exactly as they are in place, so a config is refused with the same errors, but running
 * nothing; their health is what the shards last reported of them (`ShardedRun.componentHealth`).
 * Sources other than those named below are refused (`shardedDefinitions`).
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { ConfigError } from '../../lib/config/errors.js';
import { linearTimeFallbackEnabled } from '../../lib/regex/linear-time.js';
import type { Log } from '../../lib/log.js';
import type { TapDirection, TapFeeds, TapHub } from '../inspect/tap.js';
import type { MetricFamilies } from '../metrics.js';
import { logsReceiverCapsule } from '../receiver.js';
import { healthy, unhealthy, validatedArgs, type Component, type ComponentDefinition, type Health } from '../runtime/component.js';
import { componentRegistrars } from '../runtime/component-registrars.js';
import type { BodyAnswer, BodyClaim, BodyRequest, ShardFront } from '../shard-context.js';
import { loadedStageModuleFiles, stageRegistrars } from '../stage-modules.js';
import type { FromShard, ShardComponentHealth, ShardSetup, ToShard } from './shard-messages.js';
import { shardWorkerEntry } from './shard-worker-modules.js';

/** The sources a sharded run's main thread serves and hands bodies off from. */
const FRONT_SOURCES = new Set(['logs.source.api']);

/**
 * The sources that run on the shards themselves, each shard reading its own part (on the main
 * thread they are stand-ins, checked and running nothing).
 */
const SOURCES_ON_SHARDS = new Set<string>(['logs.source.jetstream', 'logs.source.file']);

/** Whether a component runs on the shards: every logs component that is not a source, and the sources that divide their input among the shards. */
function runsOnShards(name: string): boolean {
  return (name.startsWith('logs.') && !name.startsWith('logs.source.')) || SOURCES_ON_SHARDS.has(name);
}

/** How often the main thread asks the shards for their components' health. */
const HEALTH_INTERVAL_MS = 1000;

/** Where a stand-in finds the health of the component it stands for: what the shards last reported of it, if they did. */
export interface ShardHealth {
  componentHealth(id: string): Health | undefined;
}

/**
 * The definitions the main thread builds components with: its own for the sources it serves, a
 * stand-in for those the shards run. A stand-in checks its arguments as the component does (on
 * load and on every reload), exports receivers that nothing on the main thread sends to, and
 * reports the health `shards` gives (until the shards first answer, healthy: "runs on the
 * shards"). Any other component is refused as a config error at its block, on load as on reload.
 * Each definition maps to the same stand-in every time, so a reload updates the running one.
 */
export function shardedDefinitions(shards: ShardHealth): (def: ComponentDefinition) => ComponentDefinition {
  const standIns = new WeakMap<ComponentDefinition, ComponentDefinition>();
  return (def) => {
    if (FRONT_SOURCES.has(def.name)) return def;
    let standIn = standIns.get(def);
    if (!standIn) {
      standIn = runsOnShards(def.name) ? standInOnShards(def, shards) : refusedSharded(def);
      standIns.set(def, standIn);
    }
    return standIn;
  };
}

function standInOnShards(def: ComponentDefinition, shards: ShardHealth): ComponentDefinition {
  return {
    ...def,
    build(args, ctx): Component {
      validatedArgs(def, args, ctx);
      const receiver = logsReceiverCapsule({
        send: () => Promise.reject(new Error(`${ctx.id} runs on the shards, not on the main thread`)),
      });
      return {
        exports: Object.fromEntries(def.exportNames.map((name) => [name, receiver])),
        health: () => shards.componentHealth(ctx.id) ?? healthy('runs on the shards'),
        update: (next) => void validatedArgs(def, next, ctx),
        stop: async () => {},
      };
    },
  };
}

function refusedSharded(def: ComponentDefinition): ComponentDefinition {
  return {
    ...def,
    build(args): Component {
      throw new ConfigError(
        `${def.name} does not run sharded yet; --shards takes ${[...FRONT_SOURCES, ...SOURCES_ON_SHARDS].join(', ')} sources and the logs components they forward to`,
        args.block.pos,
        args.path,
      );
    },
  };
}

/**
 * One component's health over the shards that report it: healthy when every one does (with the
 * first one's message, the text the component gives in place); otherwise unhealthy, with each
 * unhealthy shard's message after its index. Its time is the latest of the shards' times.
 */
export function combinedHealth(byShard: readonly (Health | undefined)[]): Health | undefined {
  const reported = byShard.flatMap((health, shard) => (health ? [{ shard, health }] : []));
  if (reported.length === 0) return undefined;
  const failing = reported.filter(({ health }) => health.state !== 'healthy');
  const counted = failing.length > 0 ? failing : reported;
  const updatedAt = new Date(Math.max(...counted.map(({ health }) => health.updatedAt.getTime())));
  const health =
    failing.length > 0
      ? unhealthy(failing.map(({ shard, health }) => `shard ${shard}: ${health.message}`).join('; '))
      : healthy(reported[0]!.health.message);
  return { ...health, updatedAt };
}

export interface ShardedRunOptions {
  readonly shards: number;
  readonly configText: string;
  readonly configFile: string;
  /** Where the shards' log records go (each names its component). */
  readonly log: Log;
  /** Where the shards' components print (logs.echo). */
  readonly stdout: NodeJS.WritableStream;
  /** Whether the run logs debug records (the shards then send theirs). */
  readonly debug?: boolean;
  /** The run server's taps: once the shards run, what its clients tap the shards relay to it. */
  readonly taps?: TapHub;
}

interface Pending<T> {
  resolve(value: T): void;
  reject(error: Error): void;
}

class ShardThread {
  readonly worker: Worker;
  /** What this shard last reported of its components' health, by id; undefined until it answered. */
  health: ReadonlyMap<string, Health> | undefined;
  /** Bodies handed here and not answered yet. */
  bodies = 0;
  readonly waiting = new Map<number, Pending<unknown>>();
  ready!: Pending<void>;

  constructor(
    readonly index: number,
    entry: URL,
    setup: ShardSetup,
    transfer: MessagePort[],
  ) {
    this.worker = new Worker(entry, { workerData: setup, transferList: transfer, execArgv: [] });
  }

  post(message: ToShard, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }
}

export class ShardedRun implements ShardFront, ShardHealth, TapFeeds {
  private threads: ShardThread[] = [];
  /** Every shard, by its index (`threads` takes turns in its order). */
  private byIndex: ShardThread[] = [];
  private healthTimer: NodeJS.Timeout | undefined;
  /** The round of health questions not all answered yet: the timer skips its turn while one is. */
  private healthRound: Promise<void> | undefined;
  private nextId = 0;
  private failure: Error | undefined;
  private settleFailed!: (error: Error) => void;
  /**
   * Settles with the error once a shard fails while running (a thread that ended or threw): the
   * run then stops, as a process whose pipeline died would, rather than answer every push 500.
   */
  readonly failed = new Promise<Error>((resolve) => (this.settleFailed = resolve));

  constructor(private readonly options: ShardedRunOptions) {}

  /** Starts every shard; rejects with the config errors a shard found (one line each, as the first shard found them). */
  async start(): Promise<void> {
    const { shards: count } = this.options;
    // One channel for each pair of shards.
    const ports: (MessagePort | undefined)[][] = Array.from({ length: count }, () => new Array<MessagePort | undefined>(count));
    for (let a = 0; a < count; a++) {
      for (let b = a + 1; b < count; b++) {
        const { port1, port2 } = new MessageChannel();
        ports[a]![b] = port1;
        ports[b]![a] = port2;
      }
    }
    const entry = shardWorkerEntry();
    const ready: Promise<void>[] = [];
    for (let index = 0; index < count; index++) {
      const peers = ports[index]!;
      const setup: ShardSetup = {
        index,
        count,
        configText: this.options.configText,
        configFile: this.options.configFile,
        stageRegistrars: stageRegistrars(),
        componentRegistrars: componentRegistrars(),
        stageModules: loadedStageModuleFiles(),
        linearTimeRegex: linearTimeFallbackEnabled(),
        debug: this.options.debug ?? false,
        peers: Array.from({ length: count }, (_, i) => peers[i]),
      };
      const thread = new ShardThread(
        index,
        entry,
        setup,
        peers.filter((port): port is MessagePort => port !== undefined),
      );
      ready.push(new Promise<void>((resolve, reject) => (thread.ready = { resolve, reject })));
      thread.worker.on('message', (message: FromShard) => this.receive(thread, message));
      thread.worker.on('error', (err) => this.fail(err));
      thread.worker.on('exit', (code) => this.fail(new Error(`shard ${index} exited with code ${code}`)));
      this.threads.push(thread);
    }
    this.byIndex = [...this.threads];
    try {
      await Promise.all(ready);
    } catch (err) {
      await this.terminate();
      throw err;
    }
    this.options.taps?.feedFrom(this);
    await this.askHealth();
    // The timer does not keep the process alive: a run ends by its signals, not by its shards.
    this.healthTimer = setInterval(() => void (this.healthRound ?? this.askHealth()), HEALTH_INTERVAL_MS).unref();
  }

  /**
   * The health of the component `id` over the shards, as they last reported it (at most
   * HEALTH_INTERVAL_MS old; fresh right after start and after each reload); undefined until a
   * shard reported it.
   */
  componentHealth(id: string): Health | undefined {
    return combinedHealth(this.byIndex.map((thread) => thread.health?.get(id)));
  }

  /** Asks every shard for its components' health, keeping each shard's answer as it comes. */
  private askHealth(): Promise<void> {
    const round = Promise.all(
      this.threads.map((thread) =>
        this.ask<readonly ShardComponentHealth[]>(thread, (id) => ({ kind: 'health', id })).then(
          (components) => void (thread.health = new Map(components.map(({ id, health }) => [id, health]))),
        ),
      ),
    ).then(
      () => {},
      // A shard that failed stops the run (`failed`); the last answers stand until then.
      () => {},
    );
    const settled = round.finally(() => {
      if (this.healthRound === settled) this.healthRound = undefined;
    });
    this.healthRound = settled;
    return settled;
  }

  /** Tells every shard what the main thread's clients tap of `id`, so that each relays its lines (or stops). */
  tapped(id: string, direction: TapDirection, clients: number, ratePerSecond: number): void {
    if (this.failure) return;
    for (const thread of this.threads) thread.post({ kind: 'tap', component: id, direction, clients, ratePerSecond });
  }

  handOff(id: string, body: Uint8Array, request: BodyRequest, claim: BodyClaim): Promise<BodyAnswer> {
    const thread = this.leastPending();
    thread.bodies++;
    // The claim's memory is shared, not transferred: every shard admits against the same bound.
    const answer = this.ask<BodyAnswer>(thread, (reply) => ({ kind: 'body', id: reply, component: id, body, request, claim }), [
      body.buffer as ArrayBuffer,
    ]);
    return answer.finally(() => thread.bodies--);
  }

  /** Every shard's metric families, each component's labelled as it is on the main thread. */
  metrics(): Promise<MetricFamilies[]> {
    if (this.failure) return Promise.resolve([]);
    return Promise.all(this.threads.map((thread) => this.ask<MetricFamilies>(thread, (id) => ({ kind: 'metrics', id }))));
  }

  /** Reloads every shard; the errors the shards found that `known` (the main thread's) does not hold. */
  async reload(text: string, known: readonly string[]): Promise<string[]> {
    if (this.failure) return [`the shards have stopped: ${this.failure.message}`];
    const answers = await Promise.all(this.threads.map((thread) => this.ask<string[]>(thread, (id) => ({ kind: 'reload', id, text }))));
    const seen = new Set(known);
    const errors: string[] = [];
    for (const error of answers.flat()) {
      if (seen.has(error)) continue;
      seen.add(error);
      errors.push(error);
    }
    // A round asked while the shards reloaded may hold what they had before: ask again.
    await this.askHealth();
    return errors;
  }

  /**
   * Stops the shards' components, dependents before their dependencies (`order` lists
   * dependencies first, as the graph does): each component on every shard before the next, so
   * what a processor flushes to another shard still reaches a live one. Then the threads end.
   */
  async stop(order: readonly string[]): Promise<void> {
    this.stopAskingHealth();
    if (!this.failure) {
      for (const component of [...order].reverse()) {
        await Promise.all(this.threads.map((thread) => this.ask<void>(thread, (id) => ({ kind: 'stop', id, component }))));
      }
    }
    await this.terminate();
  }

  private async terminate(): Promise<void> {
    this.stopAskingHealth();
    this.options.taps?.feedFrom(undefined);
    const threads = this.threads;
    this.threads = [];
    const failure = (this.failure ??= new Error('the shards were stopped'));
    // A question still out (a health round, a body) is answered by the stop: no thread will.
    for (const thread of threads) {
      for (const waiting of thread.waiting.values()) waiting.reject(failure);
      thread.waiting.clear();
    }
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }

  private stopAskingHealth(): void {
    clearInterval(this.healthTimer);
    this.healthTimer = undefined;
  }

  private leastPending(): ShardThread {
    if (this.threads.length === 0) throw new Error('the shards are not running');
    let best = this.threads[0]!;
    for (const thread of this.threads) if (thread.bodies < best.bodies) best = thread;
    // Equal loads take turns: the chosen one goes to the back.
    this.threads.push(...this.threads.splice(this.threads.indexOf(best), 1));
    return best;
  }

  private ask<T>(thread: ShardThread, message: (id: number) => ToShard, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      thread.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      thread.post(message(id), transfer);
    });
  }

  private receive(thread: ShardThread, message: FromShard): void {
    switch (message.kind) {
      case 'ready':
        thread.ready.resolve();
        return;
      case 'failed':
        thread.ready.reject(new ShardConfigError(message.errors));
        return;
      case 'log':
        this.options.log(message.level, message.message, message.fields);
        return;
      case 'stdout':
        this.options.stdout.write(message.text);
        return;
      case 'tap':
        this.options.taps?.offerLines(message.component, message.direction, message.lines);
        return;
      default: {
        const waiting = thread.waiting.get(message.id);
        thread.waiting.delete(message.id);
        if (message.kind === 'answer') waiting?.resolve(message.answer);
        else if (message.kind === 'metrics') waiting?.resolve(message.families);
        else if (message.kind === 'reloaded') waiting?.resolve(message.errors);
        else if (message.kind === 'health') waiting?.resolve(message.components);
        else if (message.kind === 'refused') waiting?.reject(new Error(message.error));
        else waiting?.resolve(undefined);
      }
    }
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    this.settleFailed(error);
    this.stopAskingHealth();
    this.options.log('error', 'a shard failed', { error: error.message });
    for (const thread of this.threads) {
      thread.ready?.reject(error);
      for (const waiting of thread.waiting.values()) waiting.reject(error);
      thread.waiting.clear();
    }
  }
}

/** The config errors a shard found building its part, one message each. */
export class ShardConfigError extends Error {
  constructor(readonly errors: readonly string[]) {
    super(errors.join('\n'));
    this.name = 'ShardConfigError';
  }
}
