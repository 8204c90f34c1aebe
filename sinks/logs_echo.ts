/**
 * logs.echo — the simple sink: writes every entry it receives as one JSON line to stdout, or
 * appended to the file named by `path`. Exports `receiver`.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { entryToJson } from '../core/entry-json.js';
import { logsReceiverCapsule, type LogsReceiver } from '../core/receiver.js';
import { defineComponent, healthy, type ComponentContext } from '../core/runtime/component.js';
import { t } from '../core/schema.js';

export const logsEchoComponent = defineComponent({
  name: 'logs.echo',
  doc: 'Writes received log entries as JSON lines to stdout or to a file.',
  exportNames: ['receiver'],
  fields: {
    path: { kind: t.string, default: '', doc: 'File to append JSON lines to; empty means stdout.' },
  },
  build(args, ctx) {
    return new LogsEcho(args.values.path as string, ctx);
  },
});

class LogsEcho {
  readonly exports;
  private out: NodeJS.WritableStream;
  private file: WriteStream | undefined;

  constructor(path: string, ctx: ComponentContext) {
    this.file = path ? createWriteStream(path, { flags: 'a' }) : undefined;
    this.out = this.file ?? ctx.stdout;
    const receiver: LogsReceiver = { send: (entries) => this.write(entries.map((e) => entryToJson(e, false) + '\n').join('')) };
    this.exports = { receiver: logsReceiverCapsule(receiver) };
  }

  health() {
    return healthy();
  }

  update(): void {
    // The path is fixed for the component's life; a changed path takes effect on restart.
  }

  /** Resolves once the stream has taken the text, so a slow disk slows the pipeline. */
  private write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.out.write(text, (err) => (err ? reject(err) : resolve()));
    });
  }

  async stop(): Promise<void> {
    const file = this.file;
    if (file) await new Promise<void>((resolve) => file.end(resolve));
  }
}
