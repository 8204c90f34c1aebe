import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { logSource, type LogBatch } from '../../../core/delivery.js';
import type { Entry } from '../../../core/entry.js';
import { processLogs } from '../../../core/components/logs-processor.js';
import type { LogsReceiver } from '../../../core/receiver.js';
import { json, labels, multiline } from '../../../operators/index.js';

const entry = (line: string): Entry => ({ labels: { app: 'a' }, line, timestamp: 1n, structuredMetadata: [], extracted: {} });

/** A hand-driven source: `push` sends a batch and tells when it was answered. */
function handSource() {
  let receiver: LogsReceiver | undefined;
  const source = logSource((r) => {
    receiver = r;
    return { stop: async () => {} };
  });
  const push = (lines: string[]) => {
    const answer = { acked: false, error: undefined as unknown };
    const done = receiver!.send(lines.map(entry)).then(
      () => (answer.acked = true),
      (err: unknown) => (answer.error = err),
    );
    return { answer, done };
  };
  return { source, push };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('processLogs', () => {
  it('acknowledges a batch only once what it produced was acknowledged downstream', async () => {
    const { source, push } = handSource();
    const out: LogBatch[] = [];
    source
      .pipe(processLogs([json({ expressions: { level: '' } }), labels({ values: { level: '' } })], { registry: new Registry() }))
      .subscribe((b) => out.push(b));
    const first = push(['{"level":"warn"}', '{"level":"info"}']);
    await turn();
    expect(out.map((b) => b.entries.map((e) => [e.line, e.labels.level]))).toEqual([
      [
        ['{"level":"warn"}', 'warn'],
        ['{"level":"info"}', 'info'],
      ],
    ]);
    expect(first.answer.acked).toBe(false);
    out[0]!.ack();
    await first.done;
    expect(first.answer.acked).toBe(true);
  });

  it('passes a downstream refusal back to the source', async () => {
    const { source, push } = handSource();
    source.pipe(processLogs([], { registry: new Registry(), log: () => {} })).subscribe((b) => b.nack(new Error('disk full')));
    const sent = push(['x']);
    await sent.done;
    expect(String(sent.answer.error)).toBe('Error: disk full');
  });

  it("runs timers on the clock it is given: a multiline block's max_wait_time flush comes out on its own", async () => {
    const clock = new ManualClock();
    const { source, push } = handSource();
    const out: string[][] = [];
    source
      .pipe(processLogs([multiline({ firstline: '^start', max_wait_time: '3s' })], { clock, registry: new Registry() }))
      .subscribe((b) => {
        out.push(b.entries.map((e) => e.line));
        b.ack();
      });
    const sent = push(['start one', '  more']);
    await sent.done;
    expect(out).toEqual([]);
    clock.advanceBy(2999);
    expect(out).toEqual([]);
    clock.advanceBy(1);
    await turn();
    expect(out).toEqual([['start one\n  more']]);
  });

  it('flushes open blocks when the source completes, then completes', async () => {
    const { source, push } = handSource();
    const out: string[] = [];
    let completed = false;
    const processed = source.pipe(
      processLogs([multiline({ firstline: '^start' })], { clock: new ManualClock(), registry: new Registry() }),
    );
    processed.subscribe({
      next: (b) => {
        out.push(...b.entries.map((e) => e.line));
        b.ack();
      },
      complete: () => (completed = true),
    });
    await push(['start a', ' a2', 'start b', ' b2']).done;
    expect(out).toEqual(['start a\n a2']);
    await source.stop();
    await turn();
    expect(out).toEqual(['start a\n a2', 'start b\n b2']);
    expect(completed).toBe(true);
  });
});
