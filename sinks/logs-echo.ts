/**
 * logs.echo — the simple sink: writes every entry it receives as one JSON line to stdout, or
 * appended to the file named by `path`. Exports `receiver`. Counts `logs_echo_entries_total`,
 * `logs_echo_bytes_total` and `logs_echo_write_errors_total` by `component_id`. The file is opened
 * when the component starts, never while a config is only built (`rivulet validate`).
 *
 * From code, `echo(options)` is the same sink; the component is that sink made from its block.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { Counter } from 'prom-client';
import { logSink, type LogSink } from '../core/delivery.js';
import type { Entry } from '../core/entry.js';
import { entryToJson } from '../core/entry-json.js';
import { perRegistry } from '../core/metrics.js';
import { logsReceiverCapsule } from '../core/receiver.js';
import { componentOptions, defineComponent, healthy, type ComponentContext } from '../core/runtime/component.js';
import { standaloneContext, type RunOptions } from '../core/runtime/standalone.js';
import { t } from '../lib/config/schema.js';
import { outputPath } from './output-path.js';

interface EchoMetrics {
  readonly entries: Counter<'component_id'>;
  readonly bytes: Counter<'component_id'>;
  readonly errors: Counter<'component_id'>;
}

const echoMetrics = perRegistry((registry): EchoMetrics => {
  const counter = (name: string, help: string) => new Counter({ name, help, labelNames: ['component_id'], registers: [registry] });
  return {
    entries: counter('logs_echo_entries_total', 'Entries written.'),
    bytes: counter('logs_echo_bytes_total', 'Bytes of JSON lines written.'),
    errors: counter('logs_echo_write_errors_total', 'Writes that failed.'),
  };
});

export const logsEchoComponent = defineComponent({
  name: 'logs.echo',
  doc: 'Writes received log entries as JSON lines to stdout or to a file.',
  exportNames: ['receiver'],
  fields: {
    path: { kind: t.string, default: '', doc: 'File to append JSON lines to; empty means stdout.' },
  },
  validate: (values, checks) => outputPath(values.path, 'path', checks),
  build(args, ctx) {
    const echo = new EchoWriter(args.values, ctx);
    const sink = sinkOf(echo);
    return {
      exports: { receiver: logsReceiverCapsule(sink) },
      health: () => healthy(),
      start: async () => {
        echo.open();
      },
      update: () => {
        // The path is fixed for the component's life; a changed path takes effect on restart.
      },
      stop: () => sink.stop(),
    };
  },
});

/** The options of `echo`: logs.echo's attributes. */
export interface EchoOptions {
  /** File to append JSON lines to; empty or absent means `RunOptions.stdout` (default: stdout). */
  readonly path?: string;
}

/**
 * Writes every entry it is sent as one JSON line (the format of `rivulet process --output json`),
 * as the logs.echo component does, to `RunOptions.stdout` or appended to `options.path` (opened
 * now). A send is acknowledged once the stream has taken the text, so a slow disk slows the
 * source; a failed write refuses it. `stop()` closes the file.
 *
 * @example
 * source.subscribe(echo({ path: '/tmp/entries.jsonl' }));
 */
export function echo(options: EchoOptions = {}, run?: RunOptions): LogSink {
  const path = componentOptions(logsEchoComponent, options, [logsEchoComponent.name]);
  const writer = new EchoWriter(path, standaloneContext(logsEchoComponent.name, run));
  writer.open();
  return sinkOf(writer);
}

function sinkOf(writer: EchoWriter): LogSink {
  return logSink({ send: (entries) => writer.write(entries) }, () => writer.close());
}

/** Entries as JSON lines to stdout or a file, counted. */
class EchoWriter {
  private file: WriteStream | undefined;
  private readonly metrics: EchoMetrics;
  private readonly series: { component_id: string };

  constructor(
    private readonly path: string,
    private readonly ctx: ComponentContext,
  ) {
    this.metrics = echoMetrics(ctx.registry);
    this.series = { component_id: ctx.id };
  }

  /** Stdout, or the file, opened on first use: at start, or by a send that comes before it. */
  open(): NodeJS.WritableStream {
    if (!this.path) return this.ctx.stdout;
    if (this.file === undefined) {
      this.file = createWriteStream(this.path, { flags: 'a' });
      // A file that cannot be opened fails every write (counted), instead of crashing the process.
      this.file.on('error', () => {});
    }
    return this.file;
  }

  /** Resolves once the stream has taken the text, so a slow disk slows the pipeline. */
  async write(entries: readonly Entry[]): Promise<void> {
    const text = entries.map((e) => entryToJson(e, false) + '\n').join('');
    try {
      await new Promise<void>((resolve, reject) => {
        this.open().write(text, (err) => (err ? reject(err) : resolve()));
      });
    } catch (err) {
      this.metrics.errors.inc(this.series);
      throw err;
    }
    this.metrics.entries.inc(this.series, entries.length);
    this.metrics.bytes.inc(this.series, Buffer.byteLength(text));
  }

  async close(): Promise<void> {
    const file = this.file;
    if (file) await new Promise<void>((resolve) => file.end(resolve));
  }
}
