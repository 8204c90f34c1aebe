/**
 * The engine of logs.process, shared by the config component and the programmatic `processLogs`
 * operator: a stage list run in place (or on worker threads), fed by `send`, whose outputs are
 * handed on in order to the current receivers. `send` resolves only once everything a batch
 * produced has been taken over downstream, so a source's acknowledgement covers the whole way.
 */
import { Observable, type OperatorFunction, type Subscription } from 'rxjs';
import { Inlet } from '../inlet.js';
import { type HandBack, HandedBackError } from '../hand-back.js';
import { InputClock } from '../input-time.js';
import { type Entry, type Labels, seedLabels } from '../entry.js';
import { buildPipeline } from '../pipeline.js';
import { addMetricsSource } from '../metrics.js';
import { LabelSets } from '../threads/entry-batch-codec.js';
import { PartitionedPipeline } from '../threads/partitioned-pipeline.js';
import { partitioner, planPartitions, type PartitionPlan } from '../threads/partitioning.js';
import { loadStageList } from '../process.js';
import { definedInModule } from '../stage-modules.js';
import type { PartitionedStage } from '../stage-partitioning.js';
import { fanOut, type LogsReceiver, type SendOptions } from '../receiver.js';
import type { BuiltPipeline, StageOperator, StageSpec } from '../stage.js';
import type { ComponentContext } from '../runtime/component.js';
import type { DeliverOptions } from '../shard-context.js';
import { standaloneContext, type RunOptions } from '../runtime/standalone.js';
import type { LogBatch } from '../delivery.js';
import { sendOptionsOf } from '../delivery.js';

/** The stages running on this thread. */
interface LocalPipeline {
  readonly kind: 'local';
  readonly built: BuiltPipeline;
  readonly input: Inlet<Entry>;
  readonly subscription: Subscription;
  readonly fingerprint: string;
  /** Settles when the pipeline has completed (every stage flushed) or failed. */
  readonly completed: Promise<void>;
}

/** The stages running on worker threads, split by stream. */
interface ThreadedPipeline {
  readonly kind: 'threads';
  readonly pool: PartitionedPipeline;
  readonly fingerprint: string;
  /** Takes the threads' metric families off the registry's exposition again. */
  readonly removeMetrics: () => void;
}

type RunningPipeline = LocalPipeline | ThreadedPipeline;

/** How long a stopping pipeline may keep flushing (held entries, pending blocks), as the reference allows. */
const SHUTDOWN_GRACE_MS = 2 * 60 * 1000;

/**
 * A stage list with its own input, forwarding what it emits to `forwardTo()` (read for every
 * batch handed on, so a reload's new list applies at once). `fingerprint` is the stage list's
 * canonical config text: equal texts mean equal pipelines, and worker threads build from it; a
 * programmatic stage list has none (and runs in place).
 */
export class LogsProcessor implements LogsReceiver {
  private running: RunningPipeline;
  /** Outputs produced while a send() pushes synchronously; forwarded as one batch. */
  private collecting: Entry[] | undefined;
  /** The hand-back of the batch a send() pushes now (see core/hand-back.ts). */
  private pushing: HandBack | undefined;
  /** Forwarding is serialised so entries reach receivers in the order the pipeline emitted them. */
  private forwarding: Promise<void> = Promise.resolve();
  /** Pipelines replaced by a reload that are still flushing. */
  private stopping = new Set<Promise<void>>();
  /** Entries queued for the receivers and not yet taken over by all of them. */
  private handingOn = 0;
  /**
   * The time the stages measure idle input on: it stands still while a batch is pushed through
   * them and while a source that sends here holds input it has not sent yet (core/input-time.ts).
   * Worker threads read it from shared memory.
   */
  private readonly input: InputClock;
  /** On a shard of a sharded run: the shard that owns an entry's labels under the running stage list. */
  private shardOf: ((labels: Labels) => number) | undefined;
  /** Stops taking the entries other shards deliver here. */
  private readonly unserve: (() => void) | undefined;
  /**
   * Settles once the stage list the last replace() stopped has completed and what it flushed was
   * handed on (a reload on a shard answers only then).
   */
  private replacedHandedOn: Promise<unknown> = Promise.resolve();
  /** Stops holding this shard's answers to reloads. */
  private readonly unholdReloads: (() => void) | undefined;

  constructor(
    stages: readonly StageSpec[],
    fingerprint: string,
    private readonly ctx: ComponentContext,
    private readonly forwardTo: () => readonly LogsReceiver[],
    /** Told when the stages on threads fail (the component turns unhealthy). */
    private readonly onThreadsFailure: (err: Error) => void = () => {},
  ) {
    this.input = (ctx.pipelineThreads ?? 1) > 1 ? InputClock.shared(ctx.clock.scheduler) : new InputClock(ctx.clock.scheduler);
    const shardOf = this.shardRouting(stages);
    this.running = this.startPipeline(stages, fingerprint);
    this.shardOf = shardOf;
    // Other shards deliver here the entries whose streams this shard owns: they are this
    // shard's part already, and go straight into the stages.
    this.unserve = ctx.shard?.serveEntries(ctx.id, (entries, options) => {
      if (options?.backlog) this.input.follow(options.backlog);
      return this.sendBatch(entries, options?.untilSentOn === true, options?.untilSentOn ? options.handBack : undefined);
    });
    // A reload may move a stream to another shard: its next entries must not overtake the blocks
    // the replaced list flushed here, as they cannot in place.
    // Within the shutdown grace: a receiver that cannot take the flushed blocks must not hold a reload.
    this.unholdReloads = ctx.shard?.holdReloadAnswer?.(async () => {
      await this.withinGrace(this.replacedHandedOn);
    });
  }

  /** The fingerprint of the stage list running now. */
  get fingerprint(): string {
    return this.running.fingerprint;
  }

  send(entries: readonly Entry[], options?: SendOptions): Promise<void> {
    if (options?.backlog) this.input.follow(options.backlog);
    if (this.shardOf) return this.sendToOwners(entries, this.shardOf, options);
    const untilSentOn = options?.untilSentOn === true;
    return this.sendBatch(entries, untilSentOn, untilSentOn ? options?.handBack : undefined);
  }

  /**
   * On a shard: hands each entry to the shard that owns its stream (the partition plan's key, as
   * threads split), this one included, and resolves once every owner took its part over.
   */
  private async sendToOwners(entries: readonly Entry[], shardOf: (labels: Labels) => number, options?: SendOptions): Promise<void> {
    const shard = this.ctx.shard!;
    // A sender waiting for held lines (a JetStream reader) waits for the owners' stages, which
    // follow its backlog as this shard's do.
    const deliverOptions: DeliverOptions | undefined =
      options?.untilSentOn || options?.backlog
        ? {
            ...(options.untilSentOn ? { untilSentOn: true, ...(options.handBack ? { handBack: options.handBack } : {}) } : {}),
            ...(options.backlog ? { backlog: options.backlog } : {}),
          }
        : undefined;
    const parts: Entry[][] = Array.from({ length: shard.count }, () => []);
    // The owner is found once per distinct label set (a batch holds few streams, its entries in
    // runs): the partitioner's key filter and hash run once a set, not once an entry.
    const sets = new LabelSets();
    const shardOfSet: number[] = [];
    for (const entry of entries) parts[(shardOfSet[sets.indexOf(entry.labels)] ??= shardOf(entry.labels))]!.push(entry);
    await Promise.all(
      parts.map((part, index) => (part.length === 0 ? undefined : shard.deliver(index, this.ctx.id, part, deliverOptions))),
    );
  }

  /**
   * Starts a new stage list (throwing its config errors, with the old one left running) and lets
   * the old one flush in the background.
   */
  replace(stages: readonly StageSpec[], fingerprint: string): void {
    const shardOf = this.shardRouting(stages);
    const next = this.startPipeline(stages, fingerprint);
    // Routed by the new list's plan only once it runs: a refused list leaves the old one, and its plan.
    this.shardOf = shardOf;
    const stopping = this.stopPipeline(this.running);
    this.stopping.add(stopping);
    void stopping.finally(() => this.stopping.delete(stopping));
    // Taken once the replaced list has completed, so whatever it flushed (at once or later) is in
    // the chain; batches the new list sent meanwhile are waited for too, within the grace.
    // A replaced list that fails to stop holds no reload answer: the reload took effect.
    this.replacedHandedOn = stopping.then(() => this.forwarding).catch(() => undefined);
    this.running = next;
  }

  /** Ends the input so stages flush, then waits for what they emit to be handed on. */
  async stop(): Promise<void> {
    await this.stopPipeline(this.running);
    await Promise.all(this.stopping);
    await this.drainForwarding();
    this.input.unfollowAll();
    this.unserve?.();
    this.unholdReloads?.();
  }

  /**
   * Waits for the batches still being handed on, for at most the shutdown grace: a receiver that
   * cannot take them (an endpoint that stays down) must not hold shutdown forever. A batch still
   * waiting then stays with that receiver, which delivers it or counts it as dropped when it
   * stops in turn; the log says how many entries were still on their way.
   */
  private async drainForwarding(): Promise<void> {
    const drained = await this.withinGrace(this.forwarding.then(() => true));
    if (!drained) this.ctx.log('error', 'stopped while entries were still being handed on', { entries: this.handingOn });
  }

  /**
   * Pushes a batch through the pipeline and resolves once everything it produced has been taken
   * over by the receivers — including entries a waiting limit released later — so the sender's
   * acknowledgement means nothing is left in flight here.
   */
  private async sendBatch(entries: readonly Entry[], untilSentOn: boolean, handBack?: HandBack): Promise<void> {
    const running = this.running;
    if (running.kind === 'threads') {
      // Queued until the threads answered: a thread's stages take the batch in as one.
      const release = this.input.hold();
      const { outputs, settled } = running.pool.process(entries, untilSentOn, handBack);
      outputs.then(release, release);
      const handedOn = this.forward(outputs as Promise<Entry[]>);
      handedOn.catch(() => {});
      await this.unlessHandedBack(settled, handBack);
      await handedOn;
      await this.forwarding;
      return;
    }
    const outputs: Entry[] = [];
    this.collecting = outputs;
    this.pushing = handBack;
    // The whole batch arrived at once: its entries are input queued until the last is pushed.
    const release = this.input.hold();
    try {
      // The receiver owns what it is sent (see LogsReceiver), so entries go in without a copy.
      for (const entry of entries) {
        seedLabels(entry);
        running.input.next(entry);
      }
    } finally {
      release();
      this.collecting = undefined;
      this.pushing = undefined;
    }
    // Asked now: what this batch left in open blocks, not what later batches add.
    const sentOn = untilSentOn ? running.built.held() : undefined;
    const handedOn = this.forward(outputs);
    // Keep a failure of this batch for the sender, but wait for held entries first.
    handedOn.catch(() => {});
    await running.built.pending();
    await this.unlessHandedBack(sentOn, handBack);
    await handedOn;
    await this.forwarding;
  }

  /**
   * Waits for what a stage held of a batch to be sent on; fails with HandedBackError when its
   * sender took it back meanwhile (the stage dropped it, so the sender must not acknowledge it).
   */
  private async unlessHandedBack(sentOn: Promise<void> | undefined, handBack: HandBack | undefined): Promise<void> {
    if (!sentOn || !handBack) return sentOn;
    let sent = false;
    let handedBack = false;
    const settledFirst = sentOn.then(() => (sent = true));
    const stopListening = handBack.onRequest(() => (handedBack ||= !sent));
    try {
      await settledFirst;
    } finally {
      stopListening();
    }
    if (handedBack) throw new HandedBackError();
  }

  /**
   * Queues a batch behind the ones before it. The returned promise fails when this batch could
   * not be handed on, so the sender that is waiting for it learns of the loss; the chain itself
   * never fails, so later batches still go out.
   */
  private forward(batch: Entry[] | Promise<Entry[]>): Promise<void> {
    if (Array.isArray(batch) && batch.length === 0) return this.forwarding;
    const receivers = this.forwardTo();
    let counted = 0;
    const handOn = (entries: Entry[]) => {
      if (entries.length === 0) return;
      for (const entry of entries) entry.extracted = {};
      counted = entries.length;
      this.handingOn += counted;
      return fanOut(receivers, entries);
    };
    // Entries from threads arrive later, but keep the place in line their batch took now.
    const handedOn = (
      Array.isArray(batch) ? this.forwarding.then(() => handOn(batch)) : this.forwarding.then(() => batch).then(handOn)
    ).finally(() => (this.handingOn -= counted));
    this.forwarding = handedOn.catch((err) => {
      this.ctx.log('error', 'forwarding entries failed', { error: String(err), entries: counted });
    });
    return handedOn;
  }

  private startPipeline(stages: readonly StageSpec[], fingerprint: string): RunningPipeline {
    const threads = this.ctx.pipelineThreads ?? 1;
    if (threads > 1) {
      const plan = threadPlan(stages, fingerprint);
      if (plan.kind !== 'single') return this.startThreads(plan, fingerprint, threads);
      this.ctx.log('info', 'stages run on one thread', { reason: plan.reason });
    }
    const built = buildPipeline(stages, {
      clock: this.ctx.clock,
      input: this.input,
      currentHandBack: () => this.pushing,
      registry: this.ctx.registry,
      debug: (message, fields) => this.ctx.log('debug', message, fields),
    });
    const input = new Inlet<Entry>();
    let settle!: () => void;
    const completed = new Promise<void>((resolve) => (settle = resolve));
    const subscription = built.operator(input).subscribe({
      next: (entry) => {
        // Entries emitted during a send() join that send's batch; timer flushes go on their own.
        if (this.collecting) this.collecting.push(entry);
        // Nobody waits on a timer flush; a failure is logged by forward().
        else this.forward([entry]).catch(() => {});
      },
      error: (err) => {
        this.ctx.log('error', 'pipeline failed', { error: String(err) });
        settle();
      },
      complete: () => settle(),
    });
    return { kind: 'local', built, input, subscription, fingerprint, completed };
  }

  /** On a shard of a run with several: which shard owns an entry under `stages`; else undefined. */
  private shardRouting(stages: readonly StageSpec[]): ((labels: Labels) => number) | undefined {
    return this.ctx.shard && this.ctx.shard.count > 1 ? this.shardPlan(stages, this.ctx.shard) : undefined;
  }

  /**
   * Which shard owns an entry: by the partition plan, as threads split. A list without state may
   * run on any shard, so entries stay where they were decoded; one that cannot be split runs on
   * the first shard, and that shard's log says why.
   */
  private shardPlan(
    stages: readonly StageSpec[],
    shard: { readonly index: number; readonly count: number },
  ): ((labels: Labels) => number) | undefined {
    const plan = planPartitions(stages);
    if (plan.kind === 'stateless') return undefined;
    if (plan.kind === 'partitioned') return partitioner(plan.key, shard.count);
    if (shard.index === 0) this.ctx.log('info', 'stages run on one thread', { reason: plan.reason });
    return () => 0;
  }

  private startThreads(plan: PartitionPlan, fingerprint: string, workers: number): ThreadedPipeline {
    const pool = new PartitionedPipeline({
      workers,
      plan,
      setup: {
        stagesText: fingerprint,
        file: `${this.ctx.id} stages`,
        output: 'entries',
        ...(this.input.shared ? { inputTime: this.input.shared } : {}),
      },
      // Nobody waits on a timer flush; a failure is logged by forward().
      onEmit: (items) => void this.forward(items as Entry[]).catch(() => {}),
      onFailure: (err) => {
        this.onThreadsFailure(err);
        this.ctx.log('error', 'pipeline threads failed', { error: err.message });
      },
    });
    pool.ready().catch(() => {});
    const removeMetrics = addMetricsSource(this.ctx.registry, () => pool.metrics());
    return { kind: 'threads', pool, fingerprint, removeMetrics };
  }

  /**
   * Ends the pipeline's input so stages flush downstream (multiline blocks, entries a waiting
   * limit still holds), waits for it to complete for up to the shutdown grace on the component's
   * clock, then releases its resources.
   */
  private async stopPipeline(running: RunningPipeline): Promise<void> {
    if (running.kind === 'threads') return this.stopThreads(running);
    running.input.complete();
    await this.withinGrace(running.completed);
    running.subscription.unsubscribe();
    running.built.dispose();
  }

  /** `work`'s value, or undefined once the shutdown grace has passed on the component's clock. */
  private async withinGrace<T>(work: Promise<T>): Promise<T | undefined> {
    let timer: Subscription | undefined;
    const grace = new Promise<undefined>((resolve) => {
      timer = this.ctx.clock.scheduler.schedule(() => resolve(undefined), SHUTDOWN_GRACE_MS);
    });
    try {
      return await Promise.race([work, grace]);
    } finally {
      timer?.unsubscribe();
    }
  }

  /** The same for threads: their stages flush, what they forward is handed on, then they end. */
  private async stopThreads(running: ThreadedPipeline): Promise<void> {
    const flushed = await this.withinGrace(running.pool.end().catch(() => undefined));
    if (flushed) await this.forward(flushed as Entry[]).catch(() => {});
    running.removeMetrics();
    await running.pool.terminate();
  }
}

/**
 * How a stage list spreads over threads: by its partition plan, provided worker threads can read
 * it on their own (arguments that refer to other components cannot cross, and a thread knows only
 * the stages that modules define).
 */
function threadPlan(stages: readonly StageSpec[], stagesText: string): PartitionPlan {
  const plan = planPartitions(stages);
  if (plan.kind === 'single') return plan;
  const ownStage = stageOutsideModules(stages);
  if (ownStage !== undefined)
    return { kind: 'single', reason: `stage.${ownStage} is defined outside a stage module, which a thread would import` };
  try {
    loadStageList(stagesText, 'stages');
  } catch {
    return { kind: 'single', reason: 'stage arguments refer to other components' };
  }
  return plan;
}

/** The name of the first stage, nested ones included, that the program defined itself rather than a module. */
function stageOutsideModules(stages: readonly PartitionedStage[]): string | undefined {
  for (const stage of stages) {
    if (!definedInModule(stage.def)) return stage.def.name;
    const nested = stage.def.partitioning?.(stage.config).nested;
    const inner = nested && stageOutsideModules(nested);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/**
 * Runs stages over a source's batches, as a logs.process component does: each batch goes into
 * the stages and is acknowledged once everything it produced has been acknowledged downstream;
 * what the stages emit comes out as batches of its own, whose `ack` the subscriber calls once it
 * has taken them over. A multiline block completed by a timer comes out on its own. When the
 * source completes, the stages flush (open blocks, entries a limit holds) and the output
 * completes once those are answered too.
 *
 * @example
 * tailFiles({ path_targets: [{ __path__: '/var/log/pods/*.log' }] })
 *   .pipe(processLogs([cri({}), json({ expressions: { level: '' } })]))
 *   .subscribe(loki);
 */
export function processLogs(
  stages: readonly (StageOperator | StageSpec)[],
  options: RunOptions = {},
): OperatorFunction<LogBatch, LogBatch> {
  const specs = stages.map((s) => (typeof s === 'function' ? s.spec : s));
  return (source) =>
    new Observable<LogBatch>((subscriber) => {
      const downstream: LogsReceiver = {
        send: (entries, sendOptions) =>
          new Promise<void>((ack, nack) => {
            const batch: LogBatch = sendOptions?.untilSentOn
              ? { entries: entries as Entry[], untilSentOn: true, ack, nack }
              : { entries: entries as Entry[], ack, nack };
            subscriber.next(batch);
          }),
      };
      const processor = new LogsProcessor(specs, '', standaloneContext('logs.process', options), () => [downstream]);
      let stopped = false;
      const subscription = source.subscribe({
        next: (batch) => {
          processor.send(batch.entries, sendOptionsOf(batch)).then(batch.ack, batch.nack);
        },
        error: (err) => subscriber.error(err),
        complete: () => {
          stopped = true;
          processor.stop().then(
            () => subscriber.complete(),
            (err: unknown) => subscriber.error(err),
          );
        },
      });
      return () => {
        subscription.unsubscribe();
        if (!stopped) void processor.stop().catch(() => {});
      };
    });
}
