/**
 * stage.multiline's `max_wait_time` on the pipeline's input time: idle means no input waiting.
 * A stall while a block's next lines are queued (in the batch being pushed, in a source's backlog)
 * never splits the block; input that is really idle flushes it after `max_wait_time`, exactly.
 */
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { processLogs } from '../../core/components/logs-processor.js';
import { logSource, type LogBatch } from '../../core/delivery.js';
import type { Entry } from '../../core/entry.js';
import { InputBacklog, InputClock } from '../../core/input-time.js';
import { buildPipeline } from '../../core/pipeline.js';
import type { LogsReceiver } from '../../core/receiver.js';
import { defineStage, unregisterStage } from '../../core/stage.js';
import { multiline, type MultilineConfig } from '../../operators/multiline.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 50);
const MS = 1_000_000n;
const MAX_WAIT_MS = 100;
const CONFIG: Partial<MultilineConfig> = { firstline: '^START', max_wait_time: BigInt(MAX_WAIT_MS) * MS };

const line = (text: string, stream = 'a'): Entry => ({
  labels: { stream },
  line: text,
  timestamp: 1n,
  structuredMetadata: [],
  extracted: {},
});

/** The stage on a manual clock, measuring idleness on an InputClock the test holds. */
function stageOnInputTime(config: Partial<MultilineConfig> = {}) {
  const clock = new ManualClock(0n);
  const input = new InputClock(clock.scheduler);
  const entries = new Subject<Entry>();
  const out: Array<{ line: string; at: number }> = [];
  buildPipeline([multiline({ ...CONFIG, ...config }).spec], { clock, input, registry: new Registry() })
    .operator(entries)
    .subscribe((e) => out.push({ line: e.line, at: clock.now() }));
  return { clock, input, push: (e: Entry) => entries.next(e), out };
}

describe('stage.multiline on input time', () => {
  it('does not flush a block while input is queued, however long the stall, and flushes it max_wait_time after the input drained', () => {
    const { clock, input, push, out } = stageOnInputTime();
    push(line('START a'));
    const release = input.hold();
    clock.advanceBy(10 * MAX_WAIT_MS);
    expect(out).toEqual([]);
    push(line('  at frame 1'));
    release();
    clock.advanceBy(MAX_WAIT_MS - 1);
    expect(out).toEqual([]);
    clock.advanceBy(1);
    expect(out).toEqual([{ line: 'START a\n  at frame 1', at: 11 * MAX_WAIT_MS }]);
  });

  it('flushes a block of genuinely idle input exactly max_wait_time after its last line', () => {
    const { clock, push, out } = stageOnInputTime();
    push(line('START a'));
    clock.advanceBy(30);
    push(line('  more'));
    clock.advanceBy(MAX_WAIT_MS - 1);
    expect(out).toEqual([]);
    clock.advanceBy(1);
    expect(out).toEqual([{ line: 'START a\n  more', at: 30 + MAX_WAIT_MS }]);
  });

  it('counts only the time with no input queued towards max_wait_time', () => {
    const { clock, input, push, out } = stageOnInputTime();
    push(line('START a'));
    clock.advanceBy(40);
    const release = input.hold();
    clock.advanceBy(500);
    release();
    clock.advanceBy(MAX_WAIT_MS - 40 - 1);
    expect(out).toEqual([]);
    clock.advanceBy(1);
    expect(out).toEqual([{ line: 'START a', at: 600 }]);
  });

  it('flushes the idle block of another stream once queued input drains, when its quiet time is up', () => {
    const { clock, input, push, out } = stageOnInputTime();
    push(line('START a', 'a'));
    clock.advanceBy(90);
    const release = input.hold();
    clock.advanceBy(300);
    push(line('START b', 'b'));
    release();
    clock.advanceBy(9);
    expect(out).toEqual([]);
    clock.advanceBy(1);
    expect(out).toEqual([{ line: 'START a', at: 400 }]);
    clock.advanceBy(MAX_WAIT_MS);
    expect(out.at(-1)).toEqual({ line: 'START b', at: 490 });
  });
});

/** A hand-driven source feeding processLogs: sends batches with a backlog, as a reader holding messages does. */
function queuedProcessor(config: Partial<MultilineConfig> = {}, extraStages: Parameters<typeof processLogs>[0] = []) {
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
    .pipe(processLogs([...extraStages, multiline({ ...CONFIG, ...config })], { clock, registry: new Registry(), log: () => {} }))
    .subscribe({
      next: (batch: LogBatch) => {
        out.push(...batch.entries.map((e) => e.line));
        batch.ack();
      },
      complete,
    });
  const backlog = new InputBacklog();
  return {
    clock,
    backlog,
    out,
    send: (entries: Entry[]) => receiver!.send(entries, { backlog }),
    /** Advances the clock, then lets what timers flushed be handed on. */
    advanceBy: async (ms: number) => {
      clock.advanceBy(ms);
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    },
    end: async () => {
      await source.stop();
      await completed;
    },
  };
}

let stallClock: ManualClock | undefined;
/** A per-entry stage that stalls the process (advances the manual clock) on lines saying so. */
const stall = defineStage<Record<string, never>>({
  name: 'test_stall',
  doc: 'Advances the test clock by 500 ms on a line containing "stall".',
  fields: {},
  build: () => ({
    kind: 'map',
    process: (entry) => {
      if (entry.line.includes('stall')) stallClock?.advanceBy(5 * MAX_WAIT_MS);
      return entry;
    },
  }),
});
afterAll(() => unregisterStage('test_stall'));

describe('logs.process: idle means no input waiting', () => {
  it('keeps a block whole when the process stalls between two of its lines in one batch', async () => {
    const run = queuedProcessor({}, [stall({})]);
    stallClock = run.clock;
    await run.send([line('START a'), line('  at stall'), line('  at frame 2')]);
    await run.advanceBy(MAX_WAIT_MS);
    expect(run.out).toEqual(['START a\n  at stall\n  at frame 2']);
    stallClock = undefined;
  });

  it('keeps a block whole when a stall longer than max_wait_time comes while the source holds its next lines', async () => {
    const run = queuedProcessor();
    const release = run.backlog.hold();
    await run.send([line('START a'), line('  at frame 1')]);
    await run.advanceBy(10 * MAX_WAIT_MS);
    expect(run.out).toEqual([]);
    await run.send([line('  at frame 2'), line('START b')]);
    release();
    await run.advanceBy(MAX_WAIT_MS);
    expect(run.out).toEqual(['START a\n  at frame 1\n  at frame 2', 'START b']);
  });

  it('flushes a block max_wait_time after its source stopped holding input', async () => {
    const run = queuedProcessor();
    const release = run.backlog.hold();
    await run.send([line('START a')]);
    await run.advanceBy(500);
    release();
    await run.advanceBy(MAX_WAIT_MS - 1);
    expect(run.out).toEqual([]);
    await run.advanceBy(1);
    expect(run.out).toEqual(['START a']);
  });

  it('lets a closed backlog go: its input no longer counts as queued', async () => {
    const run = queuedProcessor();
    run.backlog.hold();
    await run.send([line('START a')]);
    await run.advanceBy(500);
    expect(run.out).toEqual([]);
    run.backlog.close();
    await run.advanceBy(MAX_WAIT_MS);
    expect(run.out).toEqual(['START a']);
  });

  it('gives the same blocks however input is cut into batches and however long the stalls while it is queued', async () => {
    const lineArb = fc.record({
      stream: fc.constantFrom('a', 'b', 'c'),
      start: fc.boolean(),
      n: fc.nat(99),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 10 * MAX_WAIT_MS }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 4 }),
        async (spec, cuts, stallsMs, maxLines) => {
          const inputs = () => spec.map((l, i) => line(`${l.start ? 'START' : '  at'} ${l.stream}${i}:${l.n}`, l.stream));
          const config = { max_lines: maxLines };

          const whole = queuedProcessor(config);
          await whole.send(inputs());
          await whole.end();

          const cut = queuedProcessor(config);
          const release = cut.backlog.hold();
          const all = inputs();
          for (let at = 0, i = 0; at < all.length; i++) {
            const size = cuts[i % cuts.length]!;
            await cut.send(all.slice(at, at + size));
            at += size;
            cut.clock.advanceBy(stallsMs[i % stallsMs.length]!);
          }
          release();
          await cut.end();
          expect(cut.out).toEqual(whole.out);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
