import fc from 'fast-check';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ManualClock, type Clock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import { processMetrics } from '../../../core/metrics.js';
import { buildPipeline, ingress } from '../../../core/pipeline.js';
import type { BuildContext } from '../../../core/stage.js';
import { limit, MAX_HELD_ENTRIES, validateLimit, type LimitConfig, type WaitingLimitImpl } from '../../../operators/limit/index.js';
import { marbles, type MarbleHelpers } from '../../../testing/index.js';
import { entry, runConfig } from '../../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 50);

/**
 * A marble test of the stage (rate 1, burst 1, plus `config`), its wall clock starting at the
 * epoch. A token may fall due inside a millisecond, so frames can be fractional.
 */
function marbleTest(config: Partial<LimitConfig>, body: (helpers: MarbleHelpers) => void): void {
  marbles(limit, { rate: 1, burst: 1, ...config }, body, {
    startNs: 0n,
    assertDeepEqual: (actual, expected) => expect(actual).toEqual(expected),
  });
}

/** Entries named by a letter, optionally with labels. */
function named(names: string, labels: (name: string) => Record<string, string> = () => ({})): Record<string, Entry> {
  return Object.fromEntries([...names].map((n) => [n, entry(n, labels(n))]));
}

function limitOperator(config: Partial<LimitConfig>, clock: Clock, registry = new Registry()) {
  return buildPipeline([limit({ rate: 1, burst: 1, ...config }).spec], { clock, registry }).operator;
}

function contextFor(clock: Clock, registry: Registry): BuildContext {
  return {
    clock,
    metrics: processMetrics(registry),
    random: Math.random,
    buildNested: () => ({ operator: (s) => s, pending: async () => {}, held: async () => {}, dispose: () => {} }),
    debug: () => {},
  };
}

/** Builds a wait-mode limit stage directly, to reach its back-pressure hooks. */
function waitingStage(config: Partial<LimitConfig>, clock: Clock, registry = new Registry()): WaitingLimitImpl {
  const full = { drop: false, by_label_name: '', max_distinct_labels: 10_000, rate: 1, burst: 1, ...config };
  return limit.definition.build(full, contextFor(clock, registry)) as unknown as WaitingLimitImpl;
}

async function dropped(registry: Registry, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('logs_process_dropped_lines_total')!.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

async function droppedByLabel(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('logs_process_dropped_lines_by_label_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [`${v.labels.label_name}=${v.labels.label_value}`, v.value]));
}

/** Pushes entries at the given millisecond offsets through `operator` on a manual clock. */
function runTimed(
  make: (clock: ManualClock) => (source: Subject<Entry>) => import('rxjs').Observable<Entry>,
  arrivalsMs: readonly number[],
): { out: Array<{ line: string; atMs: number }>; clock: ManualClock } {
  const clock = new ManualClock(0n);
  const input = new Subject<Entry>();
  const out: Array<{ line: string; atMs: number }> = [];
  const sub = make(clock)(input).subscribe((e) => out.push({ line: e.line, atMs: clock.now() }));
  arrivalsMs.forEach((at, i) => {
    clock.advanceTo(at);
    input.next(entry(String(i)));
  });
  input.complete();
  clock.runAll();
  sub.unsubscribe();
  return { out, clock };
}

/** Whether no window [a, b] of release times holds more than burst + rate·(b − a) entries. */
function withinBucket(timesMs: readonly number[], rate: number, burst: number): boolean {
  for (let i = 0; i < timesMs.length; i++) {
    for (let j = i; j < timesMs.length; j++) {
      if (j - i + 1 > burst + (rate * (timesMs[j]! - timesMs[i]!)) / 1000 + 1e-6) return false;
    }
  }
  return true;
}

describe('stage.limit', () => {
  describe('drop mode', () => {
    it('lets a burst through, then one entry per token period', () => {
      marbleTest({ rate: 10, burst: 2, drop: true }, ({ hot, expectObservable, stage }) => {
        const v = named('abcdefgh');
        // rate 10/s, burst 2: a and b empty the bucket; by 150 ms 1.5 tokens are back, e takes
        // one; at 199 ms g finds 0.99; at 201 ms h finds 1.01.
        const source = hot('abcd 146ms ef 47ms g 1ms h|', v);
        expectObservable(stage(source)).toBe('ab 148ms e 50ms h|', v);
      });
    });

    it('forwards entries spaced at the rate unchanged', () => {
      marbleTest({ rate: 10, burst: 1, drop: true }, ({ hot, expectObservable, stage }) => {
        const v = named('abcd');
        const source = hot('a 99ms b 99ms c 99ms d|', v);
        expectObservable(stage(source)).toBe('a 99ms b 99ms c 99ms d|', v);
      });
    });

    it('counts each drop under ratelimit_drop_stage', async () => {
      const { entries, registry } = runConfig('stage.limit {\n  rate = 1\n  burst = 2\n  drop = true\n}', [
        entry('a'),
        entry('b'),
        entry('c'),
        entry('d'),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['a', 'b']);
      expect(await dropped(registry, 'ratelimit_drop_stage')).toBe(2);
    });

    it('never forwards more than burst + rate·t entries in any window of length t', () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 120 }),
          fc.double({ min: 0.5, max: 200, noNaN: true }),
          fc.integer({ min: 1, max: 5 }),
          (gaps, rate, burst) => {
            const arrivals = gaps.map(
              (
                (sum) => (g: number) =>
                  (sum += g)
              )(0),
            );
            const { out } = runTimed((clock) => limitOperator({ rate, burst, drop: true }, clock), arrivals);
            return withinBucket(
              out.map((o) => o.atMs),
              rate,
              burst,
            );
          },
        ),
        { numRuns: NUM_RUNS },
      );
    });
  });

  describe('by_label_name', () => {
    it('limits each value of the label separately and never limits entries without it', async () => {
      let registry!: Registry;
      marbleTest({ drop: true, by_label_name: 'app' }, ({ hot, expectObservable, stage, registry: stageRegistry }) => {
        registry = stageRegistry;
        const v = named('abcdef', (n): Record<string, string> => ('abc'.includes(n) ? { app: n === 'c' ? 'poki' : 'loki' } : {}));
        const source = hot('abcdef|', v);
        // The stage sees what a pipeline hands it: labels seeded into the extracted map.
        const out = Object.fromEntries(Object.entries(v).map(([name, e]) => [name, ingress(e)]));
        expectObservable(stage(source)).toBe('a-cdef|', out);
      });
      expect(await dropped(registry, 'ratelimit_drop_stage')).toBe(1);
      expect(await droppedByLabel(registry)).toEqual({ 'app=loki': 1 });
    });

    it('gives the empty value a bucket of its own', async () => {
      const { entries, registry } = runConfig('stage.limit {\n  rate = 1\n  burst = 1\n  drop = true\n  by_label_name = "app"\n}', [
        entry('a', { app: '' }),
        entry('b', { app: '' }),
        entry('c', { app: 'x' }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['a', 'c']);
      expect(await droppedByLabel(registry)).toEqual({ 'app=': 1 });
    });

    it('reads labels, not extracted values', () => {
      const { entries } = runConfig('stage.limit {\n  rate = 1\n  burst = 1\n  drop = true\n  by_label_name = "app"\n}', [
        entry('a', {}, { extracted: { app: 'x' } }),
        entry('b', {}, { extracted: { app: 'x' } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['a', 'b']);
    });

    it('raises max_distinct_labels below 10000 to 10000', () => {
      const config = 'stage.limit {\n  rate = 1\n  burst = 1\n  drop = true\n  by_label_name = "app"\n  max_distinct_labels = 2\n}';
      // With a store of 2 values, "a" would be forgotten after c and d and pass again.
      const { entries } = runConfig(
        config,
        ['a', 'b', 'c', 'd', 'a'].map((app, i) => entry(`${i}`, { app })),
      );
      expect(entries.map((e) => e.line)).toEqual(['0', '1', '2', '3']);
    });

    it('rotates generations: promotes values of the old one, forgets older ones and resets the by-label metric', async () => {
      const clock = new ManualClock(0n);
      const registry = new Registry();
      const built = buildPipeline([limit({ rate: 1, burst: 1, drop: true, by_label_name: 'app' }).spec], { clock, registry });
      const passes = (app: string) => built.process!(entry(app, { app })) !== null;

      expect(passes('v0')).toBe(true);
      expect(passes('v0')).toBe(false);
      expect(await droppedByLabel(registry)).toEqual({ 'app=v0': 1 });
      for (let i = 1; i < 10_000; i++) passes(`v${i}`); // the 10000th value fills the generation
      expect(await droppedByLabel(registry)).toEqual({});
      expect(passes('v0')).toBe(false); // promoted from the old generation with its empty bucket
      expect(await droppedByLabel(registry)).toEqual({ 'app=v0': 1 });
      for (let i = 0; i < 9_999; i++) passes(`w${i}`); // second rotation: v1…v9999 are forgotten
      expect(passes('v1')).toBe(true);
      expect(passes('v0')).toBe(false);
      expect(await dropped(registry, 'ratelimit_drop_stage')).toBe(3);
    });
  });

  describe('wait mode (drop = false)', () => {
    it('holds entries over the limit and releases them one token period apart, in order', () => {
      marbleTest({ rate: 10, burst: 1 }, ({ hot, expectObservable, stage }) => {
        const v = named('abcd');
        const source = hot('abcd|', v);
        // rate 10/s, burst 1: b's token is due 99 ms after it arrives; c and d reserve theirs
        // when they reach the head, each a full period after the one before.
        expectObservable(stage(source)).toBe('a 99ms b 99ms c 99ms (d|)', v);
      });
    });

    it('keeps the reference pace when entries trickle in slower than the rate', () => {
      marbleTest({ rate: 10, burst: 1 }, ({ hot, expectObservable, stage }) => {
        const v = named('abc');
        const source = hot('a 499ms b 499ms c|', v);
        expectObservable(stage(source)).toBe('a 499ms b 499ms c|', v);
      });
    });

    it('lets a burst through before holding', () => {
      marbleTest({ rate: 2, burst: 3 }, ({ hot, expectObservable, stage }) => {
        const v = named('abcde');
        const source = hot('abcde 1s |', v);
        expectObservable(stage(source)).toBe('abc 497ms d 499ms e 4ms |', v);
      });
    });

    it('completes only after the last held entry has left', () => {
      marbleTest({ rate: 1, burst: 1 }, ({ hot, expectObservable, stage }) => {
        const v = named('abc');
        expectObservable(stage(hot('abc|', v))).toBe('a 999ms b 999ms (c|)', v);
      });
    });

    it('forwards a source error after the held entries', () => {
      marbleTest({ rate: 1, burst: 1 }, ({ hot, expectObservable, stage }) => {
        const v = named('ab');
        expectObservable(stage(hot('ab#', v, new Error('boom')))).toBe('a 999ms (b#)', v, new Error('boom'));
      });
    });

    it('passes the conformance wait case: five entries over four seconds, none lost', () => {
      const { entries, clock } = runConfig(
        'stage.limit {\n  rate = 1\n  burst = 1\n}',
        ['1', '2', '3', '4', '5'].map((l) => entry(l)),
      );
      expect(entries.map((e) => e.line)).toEqual(['1', '2', '3', '4', '5']);
      expect(clock.now()).toBe(4000);
    });

    it('never loses or reorders an entry, and keeps within the bucket', () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 80 }),
          fc.double({ min: 0.5, max: 100, noNaN: true }),
          fc.integer({ min: 1, max: 4 }),
          (gaps, rate, burst) => {
            const arrivals = gaps.map(
              (
                (sum) => (g: number) =>
                  (sum += g)
              )(0),
            );
            const { out, clock } = runTimed((c) => limitOperator({ rate, burst }, c), arrivals);
            expect(out.map((o) => o.line)).toEqual(arrivals.map((_, i) => String(i)));
            out.forEach((o, i) => expect(o.atMs).toBeGreaterThanOrEqual(arrivals[i]!));
            expect(
              withinBucket(
                out.map((o) => o.atMs),
                rate,
                burst,
              ),
            ).toBe(true);
            expect(clock.pendingTimers()).toBe(0);
          },
        ),
        { numRuns: NUM_RUNS },
      );
    });

    it('drains inside a match block before the pipeline completes', () => {
      const config = 'stage.match {\n  selector = "{app=\\"slow\\"}"\n  stage.limit {\n    rate  = 1\n    burst = 1\n  }\n}';
      const { entries, clock } = runConfig(config, [
        entry('s1', { app: 'slow' }),
        entry('s2', { app: 'slow' }),
        entry('f1', { app: 'fast' }),
        entry('s3', { app: 'slow' }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['s1', 'f1', 's2', 's3']);
      expect(clock.now()).toBe(2000);
    });

    it('re-arms waits longer than a timer can hold', () => {
      const clock = new ManualClock(0n);
      const input = new Subject<Entry>();
      const out: number[] = [];
      limitOperator({ rate: 1e-7, burst: 1 }, clock)(input).subscribe(() => out.push(clock.now()));
      input.next(entry('a'));
      input.next(entry('b'));
      clock.advanceBy(2_147_483_647);
      expect(out).toEqual([0]);
      expect(clock.pendingTimers()).toBe(1);
      clock.runAll();
      expect(out).toEqual([0, 1e10]);
    });

    it('exposes what it holds and resolves pending() once those entries have left', async () => {
      const clock = new ManualClock(0n);
      const stage = waitingStage({ rate: 1, burst: 1 }, clock);
      const input = new Subject<Entry>();
      const out: string[] = [];
      stage.operator(input).subscribe((e) => out.push(e.line));
      input.next(entry('a'));
      expect(stage.heldCount()).toBe(0);
      await stage.pending();
      input.next(entry('b'));
      input.next(entry('c'));
      expect(stage.heldCount()).toBe(2);
      let settled = false;
      const waiting = stage.pending().then(() => (settled = true));
      input.next(entry('d')); // held later: not part of the earlier pending()
      clock.advanceBy(1000);
      await Promise.resolve();
      expect(settled).toBe(false);
      clock.advanceBy(1000);
      await waiting;
      expect(out).toEqual(['a', 'b', 'c']);
      expect(stage.heldCount()).toBe(1);
    });

    it('refuses entries beyond the hold bound and counts them under ratelimit_queue_full', async () => {
      const clock = new ManualClock(0n);
      const registry = new Registry();
      const stage = waitingStage({ rate: 1, burst: 1 }, clock, registry);
      const input = new Subject<Entry>();
      stage.operator(input).subscribe();
      const one = entry('x');
      for (let i = 0; i < MAX_HELD_ENTRIES + 3; i++) input.next(one);
      expect(stage.heldCount()).toBe(MAX_HELD_ENTRIES);
      expect(await dropped(registry, 'ratelimit_queue_full')).toBe(2);
    });

    it('counts entries still held when unsubscribed under ratelimit_discarded_on_stop and releases its timer', async () => {
      const clock = new ManualClock(0n);
      const registry = new Registry();
      const stage = waitingStage({ rate: 1, burst: 1 }, clock, registry);
      const input = new Subject<Entry>();
      const sub = stage.operator(input).subscribe();
      for (const l of 'abcd') input.next(entry(l));
      const waiting = stage.pending();
      expect(clock.pendingTimers()).toBe(1);
      sub.unsubscribe();
      await waiting;
      expect(clock.pendingTimers()).toBe(0);
      expect(stage.heldCount()).toBe(0);
      expect(await dropped(registry, 'ratelimit_discarded_on_stop')).toBe(3);
    });
  });

  describe('validation', () => {
    const base: LimitConfig = { rate: 1, burst: 1, drop: false, by_label_name: '', max_distinct_labels: 10_000 };

    it.each([
      ['rate', { rate: 0 }],
      ['rate', { rate: -1 }],
      ['burst', { burst: 0 }],
      ['burst', { burst: -3 }],
    ])('rejects a %s that is not positive', (field, patch) => {
      expect(() => validateLimit({ ...base, ...patch })).toThrow(
        expect.objectContaining({ field, reason: 'limit stage failed to parse rate or burst' }),
      );
    });

    it("rejects by_label_name without drop, with the reference's lower-case text", () => {
      expect(() => validateLimit({ ...base, by_label_name: 'app' })).toThrow(
        expect.objectContaining({ field: 'by_label_name', reason: 'when ratelimiting by label, drop must be true' }),
      );
    });

    it('reports config errors at the attribute', () => {
      expect(() => runConfig('stage.limit {\n  rate  = 0\n  burst = 1\n}', [])).toThrow(
        'test.alloy:2:3: stage.limit: limit stage failed to parse rate or burst',
      );
      expect(() => runConfig('stage.limit {\n  rate = 1\n  burst = 1\n  by_label_name = "app"\n}', [])).toThrow(
        'test.alloy:4:3: stage.limit: when ratelimiting by label, drop must be true',
      );
      expect(() => runConfig('stage.limit {\n  burst = 1\n}', [])).toThrow('missing required attribute "rate"');
      expect(() => runConfig('stage.limit {\n  rate = 1\n}', [])).toThrow('missing required attribute "burst"');
    });

    it('accepts a fractional rate', () => {
      expect(() => validateLimit({ ...base, rate: 0.25 })).not.toThrow();
    });
  });
});
