/**
 * logs.echo — the simple sink: writes every entry it receives as one JSON line to stdout, or
 * appended to the file named by `path`. Exports `receiver`. Counts `logs_echo_entries_total`,
 * `logs_echo_bytes_total` and `logs_echo_write_errors_total` by `component_id`. The file is opened
 * when the component starts, never while a config is only built (`rivulet validate`).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { Counter, type Registry } from 'prom-client';
import { entryToJson } from '../core/entry-json.js';
import { logsReceiverCapsule, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, type ComponentContext } from '../core/runtime/component.js';
import { t } from '../core/schema.js';
import { outputPath } from './output-path.js';

interface EchoMetrics {
  readonly entries: Counter<'component_id'>;
  readonly bytes: Counter<'component_id'>;
  readonly errors: Counter<'component_id'>;
}

const metricsByRegistry = new WeakMap<Registry, EchoMetrics>();

function echoMetrics(registry: Registry): EchoMetrics {
  let metrics = metricsByRegistry.get(registry);
  if (!metrics) {
    const counter = (name: string, help: string) => new Counter({ name, help, labelNames: ['component_id'], registers: [registry] });
    metrics = {
      entries: counter('logs_echo_entries_total', 'Entries written.'),
      bytes: counter('logs_echo_bytes_total', 'Bytes of JSON lines written.'),
      errors: counter('logs_echo_write_errors_total', 'Writes that failed.'),
    };
    metricsByRegistry.set(registry, metrics);
  }
  return metrics;
}

export const logsEchoComponent = defineComponent({
  name: 'logs.echo',
  doc: 'Writes received log entries as JSON lines to stdout or to a file.',
  exportNames: ['receiver'],
  fields: {
    path: { kind: t.string, default: '', doc: 'File to append JSON lines to; empty means stdout.' },
  },
  build(args, ctx) {
    return new LogsEcho(outputPath(args, 'path'), ctx);
  },
});

class LogsEcho {
  readonly exports;
  private file: WriteStream | undefined;

  constructor(
    private readonly path: string,
    private readonly ctx: ComponentContext,
  ) {
    const metrics = echoMetrics(ctx.registry);
    const series = { component_id: ctx.id };
    const receiver: LogsReceiver = {
      send: async (entries) => {
        const text = entries.map((e) => entryToJson(e, false) + '\n').join('');
        try {
          await this.write(text);
        } catch (err) {
          metrics.errors.inc(series);
          throw err;
        }
        metrics.entries.inc(series, entries.length);
        metrics.bytes.inc(series, Buffer.byteLength(text));
      },
    };
    this.exports = { receiver: logsReceiverCapsule(receiver) };
  }

  health() {
    return healthy();
  }

  async start(): Promise<void> {
    this.output();
  }

  /** Stdout, or the file, opened on first use: at start, or by a send that comes before it. */
  private output(): NodeJS.WritableStream {
    if (!this.path) return this.ctx.stdout;
    if (this.file === undefined) {
      this.file = createWriteStream(this.path, { flags: 'a' });
      // A file that cannot be opened fails every write (counted), instead of crashing the process.
      this.file.on('error', () => {});
    }
    return this.file;
  }

  update(): void {
    // The path is fixed for the component's life; a changed path takes effect on restart.
  }

  /** Resolves once the stream has taken the text, so a slow disk slows the pipeline. */
  private write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.output().write(text, (err) => (err ? reject(err) : resolve()));
    });
  }

  async stop(): Promise<void> {
    const file = this.file;
    if (file) await new Promise<void>((resolve) => file.end(resolve));
  }
}
