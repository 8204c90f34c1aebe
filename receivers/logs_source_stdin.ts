/**
 * logs.source.stdin — forwards the lines of the process's standard input as log entries, with
 * the configured `labels`.
 */
import { LOGS_RECEIVER, type LogsReceiver } from '../core/receiver';
import { defineComponent, healthy } from '../core/runtime/component';
import { t } from '../core/schema';
import { pumpLines } from './line_source';

export const logsSourceStdinComponent = defineComponent({
  name: 'logs.source.stdin',
  doc: 'Reads standard input line by line and forwards each line as a log entry.',
  exportNames: [],
  fields: {
    labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every entry.' },
    forward_to: { kind: t.list(t.capsule(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
  },
  build(args, ctx) {
    let forwardTo = args.values.forward_to as LogsReceiver[];
    const labels = args.values.labels as Record<string, string>;
    const abort = new AbortController();
    let done: Promise<unknown> = Promise.resolve();
    return {
      exports: {},
      health: () => healthy(),
      update(next) {
        forwardTo = next.values.forward_to as LogsReceiver[];
      },
      async start() {
        done = pumpLines(process.stdin, labels, ctx.clock, () => forwardTo, abort.signal).catch((err: Error) =>
          ctx.log('error', 'reading stdin failed', { error: err.message }),
        );
      },
      async stop() {
        abort.abort();
        process.stdin.pause();
      },
    };
  },
});
