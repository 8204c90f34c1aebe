/**
 * logs.source.stdin — forwards the lines of the process's standard input as log entries, with
 * the configured `labels`. When standard input ends, the last lines are delivered and the
 * component stays healthy (there is simply nothing more to read); stopping sends what was already
 * read before it resolves. Counts `logs_source_stdin_read_lines_total` and
 * `logs_source_stdin_read_bytes_total` (by `component_id`) for the lines taken over.
 */
import type { Readable } from 'node:stream';
import { Counter, type Registry } from 'prom-client';
import { LOGS_RECEIVER, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, unhealthy, type Health } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { pumpLines } from './line_source.js';

const metricsByRegistry = new WeakMap<Registry, { lines: Counter<'component_id'>; bytes: Counter<'component_id'> }>();

function stdinMetrics(registry: Registry) {
  let metrics = metricsByRegistry.get(registry);
  if (!metrics) {
    metrics = {
      lines: new Counter({
        name: 'logs_source_stdin_read_lines_total',
        help: 'Lines read from standard input and taken over by the receivers.',
        labelNames: ['component_id'],
        registers: [registry],
      }),
      bytes: new Counter({
        name: 'logs_source_stdin_read_bytes_total',
        help: 'Bytes of the lines read from standard input and taken over by the receivers.',
        labelNames: ['component_id'],
        registers: [registry],
      }),
    };
    metricsByRegistry.set(registry, metrics);
  }
  return metrics;
}

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
    let state: Health = healthy();
    let done: Promise<unknown> = Promise.resolve();
    const stdin: Readable = process.stdin;
    const metrics = stdinMetrics(ctx.registry);
    const series = { component_id: ctx.id };
    return {
      exports: {},
      health: () => state,
      update(next) {
        // Labels are fixed once reading has begun; a new forward_to applies to the next lines.
        forwardTo = next.values.forward_to as LogsReceiver[];
      },
      async start() {
        done = pumpLines(
          stdin,
          labels,
          ctx.clock,
          () => forwardTo,
          abort.signal,
          (lines, bytes) => {
            metrics.lines.inc(series, lines);
            metrics.bytes.inc(series, bytes);
          },
        ).then(
          (lines) => {
            if (!abort.signal.aborted) ctx.log('info', 'finished reading stdin', { lines });
          },
          (err: Error) => {
            state = unhealthy(`reading stdin: ${err.message}`);
            ctx.log('error', 'reading stdin failed', { error: err.message });
          },
        );
      },
      async stop() {
        abort.abort();
        await done;
        stdin.pause();
      },
    };
  },
});
