import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { logSource, type LogBatch } from '../../core/delivery.js';
import type { Entry } from '../../core/entry.js';
import type { LogsReceiver } from '../../core/receiver.js';
import { echo, type EchoOptions } from '../../sinks/logs-echo.js';
import { entryOf, eventually, metricValue } from '../receivers/loki/harness.js';

const first: Entry = {
  ...entryOf('hello "world"', { job: 'web', app: 'a' }, 1_700_000_000_123_456_789n),
  structuredMetadata: [{ name: 'trace_id', value: 't1' }],
};
const second = entryOf('second', {}, 2_000_000_000n);
const FIRST_JSON =
  '{"labels":{"app":"a","job":"web"},"line":"hello \\"world\\"","timestamp":"2023-11-14T22:13:20.123456789Z","structured_metadata":{"trace_id":"t1"}}\n';
const SECOND_JSON = '{"labels":{},"line":"second","timestamp":"1970-01-01T00:00:02.000000000Z","structured_metadata":{}}\n';

function batchOf(entries: Entry[], answers: string[]): LogBatch {
  return { entries, ack: () => answers.push('ack'), nack: (error) => answers.push(`nack: ${(error as Error).message}`) };
}

describe('echo', () => {
  it('writes each entry a source sends as one JSON line to stdout, answering once written, and counts them', async () => {
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (chunk) => (text += chunk));
    const registry = new Registry();
    const sink = echo({}, { id: 'show', registry, stdout });
    let receiver: LogsReceiver | undefined;
    const source = logSource((r) => {
      receiver = r;
      return { stop: async () => {} };
    });
    source.subscribe(sink);
    await receiver!.send([first]);
    expect(text).toBe(FIRST_JSON);
    await receiver!.send([second]);
    await source.stop();
    await sink.stop();
    expect(text).toBe(FIRST_JSON + SECOND_JSON);
    expect(await metricValue(registry, 'logs_echo_entries_total', { component_id: 'show' })).toBe(2);
    expect(await metricValue(registry, 'logs_echo_bytes_total', { component_id: 'show' })).toBe(
      Buffer.byteLength(FIRST_JSON + SECOND_JSON),
    );
    expect(await metricValue(registry, 'logs_echo_write_errors_total', { component_id: 'show' })).toBe(0);
  });

  it('appends to the file at path, and closes it when the Observable it takes completes', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rivulet-echo-sink-')), 'entries.jsonl');
    writeFileSync(path, 'earlier\n');
    const answers: string[] = [];
    const sink = echo({ path }, { registry: new Registry() });
    from([batchOf([first], answers), batchOf([second], answers)]).subscribe(sink);
    await eventually(() => answers.length === 2, 5000, 'the answers');
    await sink.stop();
    expect(answers).toEqual(['ack', 'ack']);
    expect(readFileSync(path, 'utf8')).toBe(`earlier\n${FIRST_JSON}${SECOND_JSON}`);
  });

  it('refuses a batch it could not write, counted as a write error', async () => {
    const registry = new Registry();
    const path = join(tmpdir(), 'rivulet-no-such-dir', 'x', 'entries.jsonl');
    const sink = echo({ path }, { registry });
    const answers: string[] = [];
    sink.next(batchOf([first], answers));
    await eventually(() => answers.length === 1, 5000, 'the answer');
    await sink.stop();
    expect(answers).toEqual([`nack: ENOENT: no such file or directory, open '${path}'`]);
    expect(await metricValue(registry, 'logs_echo_write_errors_total', { component_id: 'logs.echo' })).toBe(1);
    expect(await metricValue(registry, 'logs_echo_entries_total')).toBe(0);
  });

  it('refuses invalid options with the texts a config gets', () => {
    const messageOf = (options: EchoOptions) => {
      try {
        echo(options, { registry: new Registry() });
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    };
    expect(messageOf({ path: 'a\0b' })).toBe('logs.echo: open "a\\u0000b": invalid argument (a path cannot hold a NUL character)');
    expect(messageOf({ file: 'x' } as EchoOptions)).toBe('logs.echo: unrecognized attribute name "file"');
  });
});
