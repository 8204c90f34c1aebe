import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { buildPipeline, ingress } from '../../core/pipeline.js';
import { doesNotTouch, entryStream } from '../../testing/index.js';
import { labels, type LabelsConfig } from '../../operators/labels.js';
import { entry, runConfig } from '../support/run-stages.js';

/** Runs one stage.labels built from a config object (the config language cannot spell every key). */
function runLabels(config: Partial<LabelsConfig>, input: Entry): Entry {
  const built = buildPipeline([labels(config).spec], { clock: new ManualClock(0n), registry: new Registry() });
  const out = built.process!(ingress(input));
  built.dispose();
  return out!;
}

describe('stage.labels', () => {
  it('sets labels from extracted values, an empty source meaning the same name', () => {
    const { entries } = runConfig('stage.labels { values = { level = "", svc = "app" } }', [
      entry('l', {}, { extracted: { level: 'warn', app: 'api' } }),
    ]);
    expect(entries[0]!.labels).toEqual({ level: 'warn', svc: 'api' });
  });

  it('stringifies numbers and booleans the Go way and skips null and lists', () => {
    const { entries } = runConfig('stage.labels { values = { n = "", b = "", z = "", l = "", big = "" } }', [
      entry('l', {}, { extracted: { n: 1.5, b: true, z: null, l: [1], big: 1e21 } }),
    ]);
    expect(entries[0]!.labels).toEqual({ n: '1.5', b: 'true', big: '1000000000000000000000' });
  });

  it('leaves a label unset when its source is missing', () => {
    const { entries } = runConfig('stage.labels { values = { missing = "" } }', [entry('l', { app: 'a' })]);
    expect(entries[0]!.labels).toEqual({ app: 'a' });
  });

  it('reads structured metadata when source_type says so, keeping the metadata', () => {
    const { entries } = runConfig('stage.labels {\n  source_type = "structured_metadata"\n  values = { trace = "trace_id" }\n}', [
      entry('l', {}, { structuredMetadata: [{ name: 'trace_id', value: 'abc' }] }),
    ]);
    expect(entries[0]!.labels).toEqual({ trace: 'abc' });
    expect(entries[0]!.structuredMetadata).toEqual([{ name: 'trace_id', value: 'abc' }]);
  });

  it('sets a label named __proto__ as an ordinary label, from extracted values and from metadata', () => {
    const values: Record<string, string> = JSON.parse('{"__proto__":"src"}');
    const fromExtracted = runLabels({ values }, entry('l', {}, { extracted: { src: 'x' } }));
    expect(Object.getPrototypeOf(fromExtracted.labels)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(fromExtracted.labels, '__proto__')?.value).toBe('x');
    const fromMetadata = runLabels(
      { values, source_type: 'structured_metadata' },
      entry('l', {}, { structuredMetadata: [{ name: 'src', value: 'y' }] }),
    );
    expect(Object.getOwnPropertyDescriptor(fromMetadata.labels, '__proto__')?.value).toBe('y');
  });

  it('rejects an empty label name, unquoted as the reference prints it', () => {
    expect(() => runConfig('stage.labels {\n  values = { "" = "x" }\n}', [])).toThrow(
      /^test\.alloy:2:3: stage\.labels: invalid label name: $/,
    );
  });

  it('rejects an unknown source_type at the attribute', () => {
    expect(() => runConfig('stage.labels {\n  values = {}\n  source_type = "line"\n}', [])).toThrow(
      'test.alloy:3:17: stage.labels: attribute "source_type": invalid value "line", expected one of "extracted", "structured_metadata"',
    );
  });

  it('never writes the extracted map nor changes the line (property)', () => {
    const extracted = fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.constant(null)));
    const inputs = entryStream({ streams: fc.constant([{}]), line: fc.string(), extracted });
    doesNotTouch(labels, 'stage.labels { values = { a = "", b = "", c = "" } }', ['extracted', 'line'], { inputs, numRuns: 100 });
  });
});
