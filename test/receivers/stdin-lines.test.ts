import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { LogBatch } from '../../core/delivery.js';
import { type LineSource, type StdinLinesOptions, stdinLines } from '../../receivers/index.js';
import { entryOf, eventually, metricValue } from './loki/harness.js';

interface Reading {
  readonly source: LineSource;
  readonly input: PassThrough;
  readonly registry: Registry;
  readonly logs: string[];
  /** Every batch emitted, in order; each is answered by the test. */
  readonly batches: LogBatch[];
  completed(): boolean;
}

function read(options: StdinLinesOptions = {}): Reading {
  const input = new PassThrough();
  const registry = new Registry();
  const logs: string[] = [];
  const source = stdinLines(options, {
    stdin: input,
    id: 'logs.source.stdin.cat',
    clock: new ManualClock(7n),
    registry,
    log: (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`),
  });
  const batches: LogBatch[] = [];
  let completed = false;
  source.subscribe({ next: (batch) => batches.push(batch), complete: () => (completed = true) });
  return { source, input, registry, logs, batches, completed: () => completed };
}

const settle = () => new Promise((r) => setTimeout(r, 50));
const series = { component_id: 'logs.source.stdin.cat' };

describe('stdinLines', () => {
  it('emits the complete lines of each chunk with the labels, reading no further until the batch is acknowledged', async () => {
    const r = read({ labels: { job: 'cat' } });
    r.input.write('first\nsecond\nthi');
    await eventually(() => r.batches.length === 1, 5000, 'the first batch');
    expect(r.batches[0]!.entries).toEqual([entryOf('first', { job: 'cat' }, 7n), entryOf('second', { job: 'cat' }, 7n)]);
    r.input.write('rd\n');
    await settle();
    expect(r.batches).toHaveLength(1);
    expect(await metricValue(r.registry, 'logs_source_stdin_read_lines_total', series)).toBe(0);

    r.batches[0]!.ack();
    await eventually(() => r.batches.length === 2, 5000, 'the second batch');
    expect(r.batches[1]!.entries).toEqual([entryOf('third', { job: 'cat' }, 7n)]);
    expect(await metricValue(r.registry, 'logs_source_stdin_read_lines_total', series)).toBe(2);
    expect(await metricValue(r.registry, 'logs_source_stdin_read_bytes_total', series)).toBe(13);
    r.batches[1]!.ack();
    await r.source.stop();
  });

  it('sends the last line without a newline at the end of the stream, then completes', async () => {
    const r = read();
    r.input.end('one\ntwo');
    await eventually(() => r.batches.length === 1, 5000, 'the first batch');
    r.batches[0]!.ack();
    await eventually(() => r.batches.length === 2, 5000, 'the last line');
    expect(r.completed()).toBe(false);
    r.batches[1]!.ack();
    await eventually(() => r.completed(), 5000, 'completion');
    expect(r.batches.map((b) => b.entries.map((e) => e.line))).toEqual([['one'], ['two']]);
    expect(r.logs).toEqual([`info finished reading stdin ${JSON.stringify({ component: 'logs.source.stdin.cat', lines: 2 })}`]);
    expect(r.source.health().state).toBe('healthy');
    expect(await metricValue(r.registry, 'logs_source_stdin_read_lines_total', series)).toBe(2);
  });

  it('stops reading on stop(), sends the unfinished line it holds, and completes once every batch is answered', async () => {
    const r = read();
    r.input.write('a\nunfinished');
    await eventually(() => r.batches.length === 1, 5000, 'the first batch');
    let stopped = false;
    const stopping = r.source.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    r.batches[0]!.ack();
    await eventually(() => r.batches.length === 2, 5000, 'the unfinished line');
    expect(r.batches[1]!.entries.map((e) => e.line)).toEqual(['unfinished']);
    await settle();
    expect(stopped).toBe(false);
    r.batches[1]!.ack();
    await stopping;
    expect(r.completed()).toBe(true);
    // Input after the stop stays in the stream for whoever reads it next.
    r.input.write('later\n');
    await settle();
    expect(r.batches).toHaveLength(2);
  });

  it('stops reading and completes, unhealthy, when a batch is refused', async () => {
    const r = read();
    r.input.write('a\n');
    await eventually(() => r.batches.length === 1, 5000, 'the first batch');
    r.batches[0]!.nack(new Error('pipeline stopped'));
    await eventually(() => r.completed(), 5000, 'completion');
    expect(r.source.health().state).toBe('unhealthy');
    expect(r.source.health().message).toBe('reading stdin: pipeline stopped');
    expect(r.logs).toEqual([
      `error reading stdin failed ${JSON.stringify({ component: 'logs.source.stdin.cat', error: 'pipeline stopped' })}`,
    ]);
  });

  it('takes the component attributes but forward_to', () => {
    expect(() => stdinLines({ forward_to: [] } as StdinLinesOptions)).toThrow(
      'logs.source.stdin: unrecognized attribute name "forward_to"',
    );
  });
});
