import { Registry } from 'prom-client';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { buildPipeline, pipeline } from '../../core/pipeline.js';
import { defineStage, unregisterStage } from '../../core/stage.js';
import { t } from '../../lib/config/schema.js';
import { labelDrop, output, staticLabels } from '../../operators/index.js';
import { map } from 'rxjs';

const entry = (line: string, labels: Record<string, string> = {}): Entry => ({
  labels,
  line,
  timestamp: 1n,
  structuredMetadata: [],
  extracted: {},
});

const options = () => ({ clock: new ManualClock(0n), registry: new Registry() });

describe('pipeline', () => {
  it('seeds labels into the extracted map before the first stage', async () => {
    const out = await lastValueFrom(from([entry('x', { app: 'api' })]).pipe(pipeline([output({ source: 'app' })]), toArray()));
    expect(out.map((e) => e.line)).toEqual(['api']);
    expect(out[0]!.extracted).toEqual({ app: 'api' });
  });

  it('copies entries at ingress so the caller’s objects are never mutated', async () => {
    const input = entry('x', { app: 'api' });
    await lastValueFrom(from([input]).pipe(pipeline([staticLabels({ values: { env: 'prod' } })]), toArray()));
    expect(input.labels).toEqual({ app: 'api' });
    expect(input.extracted).toEqual({});
  });

  it('fuses a run of per-entry stages into one function', () => {
    const built = buildPipeline([staticLabels({ values: { a: '1' } }).spec, labelDrop({ values: ['b'] }).spec], options());
    expect(built.process).toBeTypeOf('function');
    const out = built.process!(entry('x', { b: '2' }));
    expect(out?.labels).toEqual({ a: '1' });
  });

  it('keeps order and applies stages in config order', async () => {
    const lines = Array.from({ length: 50 }, (_, i) => `line ${i}`);
    const out = await lastValueFrom(
      from(lines.map((l) => entry(l))).pipe(pipeline([staticLabels({ values: { a: '1' } }), labelDrop({ values: ['a'] })]), toArray()),
    );
    expect(out.map((e) => e.line)).toEqual(lines);
    expect(out.every((e) => Object.keys(e.labels).length === 0)).toBe(true);
  });

  it('lets operator stages sit between fused runs', async () => {
    const doubler = defineStage<{ suffix: string }>({
      name: 'test_doubler',
      doc: 'Emits every entry twice (a fan-out operator).',
      fields: { suffix: { kind: t.string, default: '!', doc: 'Appended to the copy.' } },
      build: (config) => ({
        kind: 'operator',
        operator: (source) =>
          new (source.constructor as typeof import('rxjs').Observable<Entry>)((sub) =>
            source.subscribe({
              next: (e) => {
                sub.next(e);
                sub.next({ ...e, line: e.line + config.suffix });
              },
              complete: () => sub.complete(),
            }),
          ),
      }),
    });
    try {
      const built = buildPipeline(
        [staticLabels({ values: { a: '1' } }).spec, doubler({}).spec, labelDrop({ values: ['a'] }).spec],
        options(),
      );
      expect(built.process).toBeUndefined();
      const out = await lastValueFrom(from([entry('x')]).pipe(built.operator, toArray()));
      expect(out.map((e) => [e.line, e.labels])).toEqual([
        ['x', {}],
        ['x!', {}],
      ]);
    } finally {
      unregisterStage('test_doubler');
    }
  });

  it('passes an entry on unchanged by a stage that throws, instead of failing the stream', async () => {
    const broken = defineStage<Record<string, never>>({
      name: 'test_broken',
      doc: 'Throws on lines containing "boom".',
      fields: {},
      build: () => ({
        kind: 'map',
        process: (e) => {
          if (e.line.includes('boom')) throw new Error('boom');
          e.line += '+';
          return e;
        },
      }),
    });
    try {
      const out = await lastValueFrom(
        from([entry('a'), entry('boom'), entry('b')]).pipe(
          pipeline([broken({})]),
          map((e) => e.line),
          toArray(),
        ),
      );
      expect(out).toEqual(['a+', 'boom', 'b+']);
    } finally {
      unregisterStage('test_broken');
    }
  });

  it('rejects unknown fields in a programmatic config', () => {
    expect(() => staticLabels({ values: {}, colour: 'red' } as never)).toThrow('stage.static_labels: unrecognized attribute name "colour"');
  });

  it('rejects a missing required field in a programmatic config', () => {
    expect(() => output({} as never)).toThrow('stage.output: missing required attribute "source"');
  });
});
