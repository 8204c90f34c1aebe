import fc from 'fast-check';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { goExposition } from '../../lib/go-exposition.js';

describe('goExposition', () => {
  it('leaves out families without samples and writes values as Go does', async () => {
    const registry = new Registry();
    const gauge = new Gauge({ name: 'g', help: 'a gauge', labelNames: ['a'], registers: [registry] });
    gauge.set({ a: 'x y} 1' }, Number.NaN);
    gauge.set({ a: 'big' }, 1_500_000);
    gauge.set({ a: 'small' }, 0.00001);
    gauge.set({ a: 'down' }, Number.NEGATIVE_INFINITY);
    gauge.set({ a: 'plain' }, 123456);
    new Counter({ name: 'empty_total', help: 'no series yet', labelNames: ['q'], registers: [registry] });
    new Counter({ name: 'plain_total', help: 'always there', registers: [registry] });
    const histogram = new Histogram({ name: 'h', help: 'a histogram', buckets: [0.5], registers: [registry] });
    histogram.observe(2_000_000);
    expect(goExposition(await registry.metrics())).toBe(
      [
        '# HELP g a gauge',
        '# TYPE g gauge',
        'g{a="x y} 1"} NaN',
        'g{a="big"} 1.5e+06',
        'g{a="small"} 1e-05',
        'g{a="down"} -Inf',
        'g{a="plain"} 123456',
        '',
        '# HELP plain_total always there',
        '# TYPE plain_total counter',
        'plain_total 0',
        '',
        '# HELP h a histogram',
        '# TYPE h histogram',
        'h_bucket{le="0.5"} 0',
        'h_bucket{le="+Inf"} 1',
        'h_sum 2e+06',
        'h_count 1',
        '',
        '',
      ].join('\n'),
    );
  });

  it('keeps every sample line and changes nothing but how its value is written', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.double()), { minLength: 1, maxLength: 8 }), async (points) => {
        const registry = new Registry();
        const gauge = new Gauge({ name: 'p', help: 'p', labelNames: ['l'], registers: [registry] });
        for (const [label, value] of points) gauge.set({ l: label }, value);
        const before = (await registry.metrics()).split('\n').filter((line) => line.startsWith('p{'));
        const after = goExposition(await registry.metrics())
          .split('\n')
          .filter((line) => line.startsWith('p{'));
        expect(after.map((line) => line.slice(0, line.lastIndexOf(' ')))).toEqual(
          before.map((line) => line.slice(0, line.lastIndexOf(' '))),
        );
        for (let i = 0; i < after.length; i++) {
          const value = (line: string) => line.slice(line.lastIndexOf(' ') + 1);
          const read = (text: string) => (text === 'Nan' || text === 'NaN' ? Number.NaN : Number(text));
          expect(read(value(after[i]!))).toEqual(read(value(before[i]!)));
        }
      }),
    );
  });
});
