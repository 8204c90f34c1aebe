/**
 * A multiline block still open when its sender stops is handed back, not split: the sender (a
 * JetStream reader handing its partition over) takes back what the stage holds of its batches,
 * the stage drops those blocks instead of flushing them, and the sends waiting for them fail with
 * HandedBackError so their messages are not acknowledged and the next owner completes the block.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { processLogs } from '../../core/components/logs-processor.js';
import { logSource, type LogBatch } from '../../core/delivery.js';
import type { Entry } from '../../core/entry.js';
import { HandBack, HandedBackError } from '../../core/hand-back.js';
import type { LogsReceiver, SendOptions } from '../../core/receiver.js';
import { multiline } from '../../operators/multiline.js';

const MS = 1_000_000n;

const line = (text: string, stream = 'a'): Entry => ({
  labels: { stream },
  line: text,
  timestamp: 1n,
  structuredMetadata: [],
  extracted: {},
});

/** processLogs with stage.multiline fed by hand; every send's outcome is recorded. */
function handedProcessor() {
  const clock = new ManualClock(0n);
  let receiver: LogsReceiver | undefined;
  const source = logSource((r) => {
    receiver = r;
    return { stop: async () => {} };
  });
  const out: string[] = [];
  let complete!: () => void;
  const completed = new Promise<void>((resolve) => (complete = resolve));
  source
    .pipe(processLogs([multiline({ firstline: '^START', max_wait_time: 100n * MS })], { clock, registry: new Registry(), log: () => {} }))
    .subscribe({
      next: (batch: LogBatch) => {
        out.push(...batch.entries.map((e) => e.line));
        batch.ack();
      },
      complete,
    });
  const send = (entries: Entry[], options: SendOptions) => {
    const outcome: { state: 'waiting' | 'acked' | 'handed back' | 'failed' } = { state: 'waiting' };
    const done = receiver!.send(entries, options).then(
      () => (outcome.state = 'acked'),
      (err: unknown) => (outcome.state = err instanceof HandedBackError ? 'handed back' : 'failed'),
    );
    return { outcome, done };
  };
  const turn = async () => {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    out,
    send,
    turn,
    end: async () => {
      await source.stop();
      await completed;
    },
  };
}

describe('stage.multiline: an open block handed back at stop', () => {
  it('drops the block its sender takes back, fails the send waiting for it, and does not flush it at the stop', async () => {
    const run = handedProcessor();
    const handBack = new HandBack();
    const sent = run.send([line('START a'), line('  at frame 1')], { untilSentOn: true, handBack });
    await run.turn();
    expect(sent.outcome.state).toBe('waiting');
    handBack.request();
    await sent.done;
    expect(sent.outcome.state).toBe('handed back');
    await run.end();
    expect(run.out).toEqual([]);
  });

  it('acknowledges the sends whose lines were sent on before the hand-back, and fails only the ones still held', async () => {
    const run = handedProcessor();
    const handBack = new HandBack();
    const first = run.send([line('START a'), line('  at frame 1')], { untilSentOn: true, handBack });
    const second = run.send([line('START a2')], { untilSentOn: true, handBack });
    await first.done;
    await run.turn();
    expect([first.outcome.state, second.outcome.state]).toEqual(['acked', 'waiting']);
    handBack.request();
    await second.done;
    expect(second.outcome.state).toBe('handed back');
    await run.end();
    expect(run.out).toEqual(['START a\n  at frame 1']);
  });

  it('still flushes at the stop the blocks of other senders and of senders that did not take theirs back', async () => {
    const run = handedProcessor();
    const stopping = new HandBack();
    const staying = new HandBack();
    const handed = run.send([line('START a', 'a')], { untilSentOn: true, handBack: stopping });
    const kept = run.send([line('START b', 'b'), line('  at frame 1', 'b')], { untilSentOn: true, handBack: staying });
    const plain = run.send([line('START c', 'c')], {});
    await plain.done;
    stopping.request();
    await handed.done;
    await run.end();
    await kept.done;
    expect([handed.outcome.state, kept.outcome.state, plain.outcome.state]).toEqual(['handed back', 'acked', 'acked']);
    expect([...run.out].sort()).toEqual(['START b\n  at frame 1', 'START c']);
  });

  it('sends on at once the blocks of a sender that ends its session keeping what it sent, and acknowledges their sends', async () => {
    const run = handedProcessor();
    const handBack = new HandBack();
    const other = new HandBack();
    const sent = run.send([line('START a', 'a'), line('  at frame 1', 'a')], { untilSentOn: true, handBack });
    const kept = run.send([line('START b', 'b')], { untilSentOn: true, handBack: other });
    await run.turn();
    expect(run.out).toEqual([]);
    handBack.end();
    await sent.done;
    await run.turn();
    expect(sent.outcome.state).toBe('acked');
    expect(kept.outcome.state).toBe('waiting');
    expect(run.out).toEqual(['START a\n  at frame 1']);
    handBack.request();
    await run.end();
    await kept.done;
    expect(run.out).toEqual(['START a\n  at frame 1', 'START b']);
  });

  it('flushes a block whose lines came with different hand-backs, rather than drop lines another sender will not send again', async () => {
    const run = handedProcessor();
    const earlier = new HandBack();
    const later = new HandBack();
    const first = run.send([line('START a')], { untilSentOn: true, handBack: earlier });
    const second = run.send([line('  at frame 1')], { untilSentOn: true, handBack: later });
    await run.turn();
    earlier.request();
    await run.end();
    await Promise.all([first.done, second.done]);
    expect(run.out).toEqual(['START a\n  at frame 1']);
  });
});
