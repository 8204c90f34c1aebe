import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { buildPipeline, ingress } from '../../core/pipeline.js';
import { entryStream, neverAddsEntries } from '../../testing/index.js';
import { sampling } from '../../operators/index.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 50);

/** A small deterministic generator (mulberry32) for statistical checks. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** Whether one entry survives a sampling stage of `rate` when the draw is `draw`. */
function keeps(rate: number, draw: number): boolean {
  const built = buildPipeline([sampling({ rate }).spec], { clock: new ManualClock(0n), registry: new Registry(), random: () => draw });
  return built.process!(ingress(entry('x'))) !== null;
}

async function droppedCount(registry: Registry, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('logs_process_dropped_lines_total')!.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

describe('stage.sampling', () => {
  it('keeps an entry iff its 63-bit draw is at most rate × 2^63', () => {
    expect(keeps(0.5, 0.5)).toBe(true);
    expect(keeps(0.5, 0.5 + 2 ** -53)).toBe(false);
    expect(keeps(0.25, 0.2499999)).toBe(true);
    expect(keeps(0.25, 0.2500001)).toBe(false);
  });

  it('keeps everything at rate 1', () => {
    expect(keeps(1, 1 - 2 ** -53)).toBe(true);
    expect(keeps(1, 0)).toBe(true);
  });

  it('keeps nothing at rate 0 except a draw of exactly zero, as the reference does', () => {
    expect(keeps(0, 2 ** -60)).toBe(false);
    expect(keeps(0, 0.3)).toBe(false);
    expect(keeps(0, 0)).toBe(true);
  });

  it('counts drops under sampling_stage, or drop_counter_reason as written, even empty', async () => {
    const always = () => 0.9;
    expect(
      await droppedCount(
        runConfig('stage.sampling { rate = 0.5 }', [entry('a'), entry('b')], { random: always }).registry,
        'sampling_stage',
      ),
    ).toBe(2);
    expect(
      await droppedCount(
        runConfig('stage.sampling {\n  rate = 0\n  drop_counter_reason = "logs_sampling"\n}', [entry('a')], { random: always }).registry,
        'logs_sampling',
      ),
    ).toBe(1);
    expect(
      await droppedCount(
        runConfig('stage.sampling {\n  rate = 0\n  drop_counter_reason = ""\n}', [entry('a')], { random: always }).registry,
        '',
      ),
    ).toBe(1);
  });

  it('exports its reason’s series at 0 as soon as it is built, before any drop', async () => {
    const scrape = async (config: Partial<{ drop_counter_reason: string }>): Promise<string> => {
      const registry = new Registry();
      buildPipeline([sampling({ rate: 0.5, ...config }).spec], { clock: new ManualClock(0n), registry, random: () => 0 });
      return (await registry.getSingleMetricAsString('logs_process_dropped_lines_total')).split('\n').pop()!;
    };
    expect(await scrape({})).toBe('logs_process_dropped_lines_total{reason="sampling_stage"} 0');
    expect(await scrape({ drop_counter_reason: 'logs_sampling' })).toBe('logs_process_dropped_lines_total{reason="logs_sampling"} 0');
    expect(await scrape({ drop_counter_reason: '' })).toBe('logs_process_dropped_lines_total{reason=""} 0');
  });

  it('passes kept entries on unchanged and in order', () => {
    const draws = [0.1, 0.9, 0.2, 0.95, 0.3];
    let i = 0;
    const { entries } = runConfig(
      'stage.sampling { rate = 0.5 }',
      draws.map((_, n) => entry(`line ${n}`, { app: 'a' })),
      { random: () => draws[i++]! },
    );
    expect(entries.map((e) => e.line)).toEqual(['line 0', 'line 2', 'line 4']);
    expect(entries[0]!.labels).toEqual({ app: 'a' });
  });

  describe('validation', () => {
    it('rejects a rate above 1 or below 0 at the attribute, printing the rate with Go %f', () => {
      expect(() => runConfig('stage.sampling {\n  rate = 12\n}', [])).toThrow(
        /^test\.alloy:2:3: stage\.sampling: sampling stage failed to parse rate,Sampling Rate must be between 0\.0 and 1\.0, received 12\.000000$/,
      );
      expect(() => runConfig('stage.sampling { rate = -0.1 }', [])).toThrow(
        'stage.sampling: sampling stage failed to parse rate,Sampling Rate must be between 0.0 and 1.0, received -0.100000',
      );
      expect(() => sampling({ rate: Number.NaN })).toThrow(
        'stage.sampling: sampling stage failed to parse rate,Sampling Rate must be between 0.0 and 1.0, received NaN',
      );
    });

    it('requires a rate', () => {
      expect(() => runConfig('stage.sampling { }', [])).toThrow('test.alloy:1:1: stage.sampling: missing required attribute "rate"');
    });
  });

  it('keeps a fraction of entries within statistical bounds of the rate (property)', () => {
    const count = 2000;
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer(), (rate, seed) => {
        const built = buildPipeline([sampling({ rate }).spec], {
          clock: new ManualClock(0n),
          registry: new Registry(),
          random: seeded(seed),
        });
        let kept = 0;
        for (let n = 0; n < count; n++) if (built.process!(ingress(entry('x'))) !== null) kept++;
        // Six standard deviations of a binomial count, plus one entry for rounding.
        const tolerance = 6 * Math.sqrt(count * rate * (1 - rate)) + 1;
        expect(Math.abs(kept - rate * count)).toBeLessThanOrEqual(tolerance);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('never adds entries (property)', () => {
    // The kit draws a seeded random source for each run.
    const configs = fc.double({ min: 0, max: 1, noNaN: true }).map((rate) => ({ rate }));
    neverAddsEntries(sampling, configs, { inputs: entryStream({ line: fc.string({ maxLength: 5 }), maxLength: 20 }), numRuns: NUM_RUNS });
  });
});
