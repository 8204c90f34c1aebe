/**
 * logs.source.stdin — forwards the lines of the process's standard input as log entries, with
 * the configured `labels`. When standard input ends, the last lines are delivered and the
 * component stays healthy (there is simply nothing more to read); stopping sends what was already
 * read before it resolves. Counts `logs_source_stdin_read_lines_total` and
 * `logs_source_stdin_read_bytes_total` (by `component_id`) for the lines taken over.
 *
 * From code, `stdinLines(options)` is the same source as a `LogSource` (of any Readable given as
 * `run.stdin`): the component is that source with its batches forwarded to `forward_to`.
 */
import type { Readable } from 'node:stream';
import { Counter } from 'prom-client';
import { forwardBatches, logSource, type LogSource } from '../core/delivery.js';
import type { Labels } from '../core/entry.js';
import { perRegistry } from '../core/metrics.js';
import { LOGS_RECEIVER, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, unhealthy, type ComponentContext, type Health } from '../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { decodeOptions, t, type FieldSpec } from '../lib/config/schema.js';
import { pumpLines } from './line-source.js';

const NAME = 'logs.source.stdin';

const stdinMetrics = perRegistry((registry) => ({
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
}));

/** The component's attributes but `forward_to`: the options of `stdinLines` too. */
const stdinFields = {
  labels: { kind: t.map(t.string), default: {}, doc: 'Labels added to every entry.' },
} satisfies Record<string, FieldSpec>;

export const logsSourceStdinComponent = defineComponent({
  name: NAME,
  doc: 'Reads standard input line by line and forwards each line as a log entry.',
  exportNames: [],
  fields: {
    ...stdinFields,
    forward_to: { kind: t.list(t.capsule<LogsReceiver>(LOGS_RECEIVER)), required: true, doc: 'Receivers the entries go to.' },
  },
  build(args, ctx) {
    let forwardTo = args.values.forward_to;
    const source = lineSource(process.stdin, args.values.labels, ctx);
    let unforward: (() => void) | undefined;
    return {
      exports: {},
      health: () => source.health(),
      update(next) {
        // Labels are fixed once reading has begun; a new forward_to applies to the next lines.
        forwardTo = next.values.forward_to;
      },
      async start() {
        unforward = forwardBatches(source, () => forwardTo);
      },
      async stop() {
        await source.stop();
        unforward?.();
        unforward = undefined;
      },
    };
  },
});

/** The options of `stdinLines`: logs.source.stdin's attributes without `forward_to`. */
export interface StdinLinesOptions {
  /** Labels added to every entry. */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * What `stdinLines` runs with besides its options. The stream is not an attribute of the
 * component (a config always reads the process's standard input), so it is given here, as the
 * printing sinks take their `stdout`.
 */
export interface StdinRunOptions extends RunOptions {
  /** The stream read instead of `process.stdin`: a file stream, a socket, a test's PassThrough. */
  readonly stdin?: Readable;
}

/** Lines of a stream as a `LogSource`: what `stdinLines` returns. */
export interface LineSource extends LogSource {
  /** Healthy, or why not: the stream failed, or a batch was refused (reading then ends). */
  health(): Health;
}

/**
 * The lines of standard input (or of `run.stdin`) as a `LogSource`, as logs.source.stdin reads
 * them: the complete lines of each chunk as soon as it arrives (batches of at most 256 lines), the
 * next chunk only once the batch before is acknowledged, and at the end of the stream the last line
 * even without a newline, after which the source completes. `stop()` stops reading, sends what was
 * already read, and completes once it is answered. Counts `logs_source_stdin_read_lines_total` and
 * `_read_bytes_total` in `run.registry` for acknowledged lines.
 *
 * ```ts
 * stdinLines({ labels: { job: 'cat' } }).pipe(sendTo(echo)).subscribe();
 * ```
 */
export function stdinLines(options: StdinLinesOptions = {}, run: StdinRunOptions = {}): LineSource {
  const values = decodeOptions({ fields: stdinFields }, options, [NAME]);
  return lineSource(run.stdin ?? process.stdin, values.labels, standaloneContext(NAME, run));
}

/** The one source both `stdinLines` and the component run. */
function lineSource(input: Readable, labels: Labels, ctx: ComponentContext): LineSource {
  const metrics = stdinMetrics(ctx.registry);
  const series = { component_id: ctx.id };
  let state: Health = healthy();
  const source: LogSource = logSource((receiver) => {
    const abort = new AbortController();
    const done = pumpLines(
      input,
      labels,
      ctx.clock,
      () => [receiver],
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
    // Reading ended without a stop (the stream ended or failed): nothing more will come.
    void done.then(() => {
      if (!abort.signal.aborted) void source.stop();
    });
    return {
      stop: async () => {
        abort.abort();
        await done;
        input.pause();
      },
    };
  });
  return Object.assign(source, { health: () => state });
}
