/**
 * logs.source.file — reads a file's lines into `forward_to`, each entry labelled with `filename`
 * plus the configured `labels`. This first form reads the file once from the start; tailing,
 * rotation and remembered positions come with the full file source.
 */
import { createReadStream } from 'node:fs';
import { LOGS_RECEIVER, type LogsReceiver } from '../core/receiver';
import { defineComponent, healthy, unhealthy, type Health } from '../core/runtime/component';
import { t } from '../core/schema';
import { pumpLines } from './line_source';

export const logsSourceFileComponent = defineComponent({
  name: 'logs.source.file',
  doc: 'Reads the lines of a file and forwards them as log entries.',
  exportNames: [],
  fields: {
    path: { kind: t.string, required: true, doc: 'File to read.' },
    labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every entry.' },
    forward_to: { kind: t.list(t.capsule(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
  },
  build(args, ctx) {
    let forwardTo = args.values.forward_to as LogsReceiver[];
    const path = args.values.path as string;
    const labels = { filename: path, ...(args.values.labels as Record<string, string>) };
    const abort = new AbortController();
    let state: Health = healthy();
    let done: Promise<void> = Promise.resolve();
    return {
      exports: {},
      health: () => state,
      update(next) {
        forwardTo = next.values.forward_to as LogsReceiver[];
      },
      async start() {
        done = pumpLines(createReadStream(path), labels, ctx.clock, () => forwardTo, abort.signal).then(
          (count) => ctx.log('info', 'finished reading file', { path, lines: count }),
          (err: Error) => {
            state = unhealthy(`reading ${path}: ${err.message}`);
            ctx.log('error', 'reading file failed', { path, error: err.message });
          },
        );
      },
      async stop() {
        abort.abort();
        await done;
      },
    };
  },
});
