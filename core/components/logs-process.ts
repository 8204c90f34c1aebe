/**
 * logs.process — applies an ordered list of stages to log entries and forwards the results to
 * every `forward_to` receiver. Reference behaviour kept: the exported receiver is created once and
 * never replaced; a reload with identical stages keeps all stage state and metric series; a
 * rejected stage list keeps the old pipeline running (the component turns unhealthy) while the new
 * `forward_to` still applies; on stop the pipeline's input ends so stateful stages flush.
 */
import { formatConfig } from '../../lib/config/format.js';
import { configErrorsOf } from '../../lib/config/errors.js';
import { LogsProcessor } from './logs-processor.js';
import { LOGS_RECEIVER, logsReceiverCapsule, type LogsReceiver } from '../receiver.js';
import { t, type FieldSpec } from '../../lib/config/schema.js';
import {
  defineComponent,
  healthy,
  unhealthy,
  type ComponentArgs,
  type ComponentContext,
  type ComponentValues,
  type Health,
} from '../runtime/component.js';

/** Structural identity of a stage list: its canonical config text (also what worker threads read). */
function stagesFingerprint(args: ComponentArgs): string {
  const stageBlocks = args.block.body.filter((s) => s.kind === 'block');
  return formatConfig({ file: '', body: stageBlocks });
}

const processFields = {
  forward_to: { kind: t.list(t.capsule<LogsReceiver>(LOGS_RECEIVER)), required: true, doc: 'Receivers the processed entries go to.' },
} satisfies Record<string, FieldSpec>;

export const logsProcessComponent = defineComponent({
  name: 'logs.process',
  doc: 'Applies stages to log entries and forwards the results to the receivers in forward_to.',
  example: `logs.process "default" {
  stage.json {
    expressions = { level = "" }
  }

  stage.labels {
    values = { level = "" }
  }

  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }`,
  exportNames: ['receiver'],
  fields: processFields,
  stages: true,
  build(args, ctx) {
    return new LogsProcess(args, ctx);
  },
});

/** Its receivers and its stages, decoded. */
type LogsProcessArgs = ComponentArgs<ComponentValues<{ readonly fields: typeof processFields; readonly stages: true }>>;

class LogsProcess {
  readonly exports;
  private forwardTo: readonly LogsReceiver[];
  private readonly processor: LogsProcessor;
  private state: Health = healthy();

  constructor(args: LogsProcessArgs, ctx: ComponentContext) {
    this.forwardTo = args.values.forward_to;
    this.processor = new LogsProcessor(
      args.values.stages,
      stagesFingerprint(args),
      ctx,
      () => this.forwardTo,
      (err) => (this.state = unhealthy(`pipeline threads failed: ${err.message}`)),
    );
    const receiver: LogsReceiver = { send: (entries, options) => this.processor.send(entries, options) };
    this.exports = { receiver: logsReceiverCapsule(receiver) };
  }

  health(): Health {
    return this.state;
  }

  update(args: LogsProcessArgs): void {
    // The new forward_to applies even when the new stages are rejected, as in the reference.
    this.forwardTo = args.values.forward_to;
    const fingerprint = stagesFingerprint(args);
    if (fingerprint === this.processor.fingerprint) {
      this.state = healthy();
      return;
    }
    try {
      this.processor.replace(args.values.stages, fingerprint);
    } catch (err) {
      const errors = configErrorsOf(err);
      this.state = unhealthy(errors.map((e) => e.message).join('\n'));
      throw err;
    }
    this.state = healthy();
  }

  stop(): Promise<void> {
    return this.processor.stop();
  }
}
