/**
 * logs.process — applies an ordered list of stages to log entries and forwards the results to
 * every `forward_to` receiver. Reference behaviour kept: the exported receiver is created once and
 * never replaced; a reload with identical stages keeps all stage state and metric series; a
 * rejected stage list keeps the old pipeline running (the component turns unhealthy) while the new
 * `forward_to` still applies; on stop the pipeline's input ends so stateful stages flush.
 */
import { Subject, type Subscription } from 'rxjs';
import { formatConfig } from '../config/format';
import type { Entry } from '../entry';
import { configErrorsOf } from '../errors';
import { buildPipeline, ingress } from '../pipeline';
import { fanOut, LOGS_RECEIVER, logsReceiverCapsule, type LogsReceiver } from '../receiver';
import { t } from '../schema';
import type { BuiltPipeline, StageSpec } from '../stage';
import { defineComponent, healthy, unhealthy, type ComponentArgs, type ComponentContext, type Health } from '../runtime/component';

export interface LogsProcessArgs {
  readonly forward_to: readonly LogsReceiver[];
  readonly stages: readonly StageSpec[];
}

interface RunningPipeline {
  readonly built: BuiltPipeline;
  readonly input: Subject<Entry>;
  readonly subscription: Subscription;
  readonly fingerprint: string;
}

/** Structural identity of a stage list: its canonical config text. */
function stagesFingerprint(args: ComponentArgs): string {
  const stageBlocks = args.block.body.filter((s) => s.kind === 'block');
  return formatConfig({ file: '', body: stageBlocks });
}

export const logsProcessComponent = defineComponent({
  name: 'logs.process',
  doc: 'Applies stages to log entries and forwards the results to the receivers in forward_to.',
  exportNames: ['receiver'],
  fields: {
    forward_to: { kind: t.list(t.capsule(LOGS_RECEIVER)), required: true, doc: 'Receivers the processed entries go to.' },
  },
  stages: true,
  build(args, ctx) {
    return new LogsProcess(args, ctx);
  },
});

class LogsProcess {
  readonly exports;
  private forwardTo: readonly LogsReceiver[];
  private running: RunningPipeline;
  private state: Health = healthy();
  /** Outputs produced while a send() pushes synchronously; forwarded as one batch. */
  private collecting: Entry[] | undefined;
  /** Forwarding is serialised so entries reach receivers in the order the pipeline emitted them. */
  private forwarding: Promise<void> = Promise.resolve();

  constructor(
    args: ComponentArgs,
    private readonly ctx: ComponentContext,
  ) {
    this.forwardTo = args.values.forward_to as LogsReceiver[];
    this.running = this.startPipeline(args.values.stages as StageSpec[], stagesFingerprint(args));
    const receiver: LogsReceiver = { send: (entries) => this.send(entries) };
    this.exports = { receiver: logsReceiverCapsule(receiver) };
  }

  health(): Health {
    return this.state;
  }

  update(args: ComponentArgs): void {
    // The new forward_to applies even when the new stages are rejected, as in the reference.
    this.forwardTo = args.values.forward_to as LogsReceiver[];
    const fingerprint = stagesFingerprint(args);
    if (fingerprint === this.running.fingerprint) {
      this.state = healthy();
      return;
    }
    let next: RunningPipeline;
    try {
      next = this.startPipeline(args.values.stages as StageSpec[], fingerprint);
    } catch (err) {
      const errors = configErrorsOf(err);
      this.state = unhealthy(errors.map((e) => e.message).join('\n'));
      throw err;
    }
    this.stopPipeline(this.running);
    this.running = next;
    this.state = healthy();
  }

  async stop(): Promise<void> {
    this.stopPipeline(this.running);
    await this.forwarding;
  }

  private send(entries: readonly Entry[]): Promise<void> {
    const outputs: Entry[] = [];
    this.collecting = outputs;
    try {
      for (const entry of entries) this.running.input.next(ingress(entry));
    } finally {
      this.collecting = undefined;
    }
    return this.forward(outputs);
  }

  private forward(entries: Entry[]): Promise<void> {
    if (entries.length === 0) return this.forwarding;
    for (const entry of entries) entry.extracted = {};
    const receivers = this.forwardTo;
    this.forwarding = this.forwarding.then(() => fanOut(receivers, entries)).catch((err) => {
      this.ctx.log('error', 'forwarding entries failed', { error: String(err) });
    });
    return this.forwarding;
  }

  private startPipeline(stages: readonly StageSpec[], fingerprint: string): RunningPipeline {
    const built = buildPipeline(stages, {
      clock: this.ctx.clock,
      registry: this.ctx.registry,
      debug: (message, fields) => this.ctx.log('debug', message, fields),
    });
    const input = new Subject<Entry>();
    const subscription = built.operator(input).subscribe({
      next: (entry) => {
        // Entries emitted during a send() join that send's batch; timer flushes go on their own.
        if (this.collecting) this.collecting.push(entry);
        else void this.forward([entry]);
      },
      error: (err) => this.ctx.log('error', 'pipeline failed', { error: String(err) }),
    });
    return { built, input, subscription, fingerprint };
  }

  /** Ends the pipeline's input so stages flush downstream, then releases their resources. */
  private stopPipeline(running: RunningPipeline): void {
    running.input.complete();
    running.subscription.unsubscribe();
    running.built.dispose();
  }
}
