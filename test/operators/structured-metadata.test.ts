import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { doesNotTouch, entryStream, outputWithinBounds } from '../../testing/index.js';
import { structuredMetadata } from '../../operators/index.js';
import { entry, runConfig } from '../support/run-stages.js';

describe('stage.structured_metadata', () => {
  it('moves a named label to metadata and removes it from the labels', () => {
    const { entries } = runConfig('stage.structured_metadata { values = { pod = "" } }', [entry('l', { pod: 'p-1', app: 'a' })]);
    expect(entries[0]!.labels).toEqual({ app: 'a' });
    expect(entries[0]!.structuredMetadata).toEqual([{ name: 'pod', value: 'p-1' }]);
  });

  it('gives every name mapped to one label its value, removing the label only after all mappings', () => {
    // static_labels adds `pod` after the extracted map was seeded, so only the label step sees it.
    const config = 'stage.static_labels { values = { pod = "p1" } }\nstage.structured_metadata { values = { a = "pod", b = "pod" } }';
    const { entries } = runConfig(config, [entry('l', { k: 'v' })]);
    const [out] = entries;
    expect(Object.fromEntries(out!.structuredMetadata.map((p) => [p.name, p.value]))).toEqual({ a: 'p1', b: 'p1' });
    expect(out!.labels).toEqual({ k: 'v' });
  });

  it('rejects an empty name in values, unquoted as the reference prints it', () => {
    expect(() => runConfig('stage.structured_metadata {\n  values = { "" = "x" }\n}', [])).toThrow(
      /^test\.alloy:2:3: stage\.structured_metadata: invalid label name: $/,
    );
  });

  it('lets a label value override an extracted value of the same name', () => {
    const { entries } = runConfig('stage.structured_metadata { values = { app = "" } }', [
      entry('l', { app: 'from-labels' }, { extracted: {} }),
    ]);
    expect(entries[0]!.structuredMetadata).toEqual([{ name: 'app', value: 'from-labels' }]);
  });

  it('adds extracted keys and labels whose names match the regex, unanchored', () => {
    const { entries } = runConfig('stage.structured_metadata { regex = "trace" }', [
      entry('l', { x_trace_y: 'lab' }, { extracted: { trace_id: 'abc', other: 'no' } }),
    ]);
    expect(Object.fromEntries(entries[0]!.structuredMetadata.map((p) => [p.name, p.value]))).toEqual({ trace_id: 'abc', x_trace_y: 'lab' });
    expect(entries[0]!.labels).toEqual({});
  });

  it('replaces an existing pair in place, keeping the order of the others', () => {
    const { entries } = runConfig('stage.structured_metadata { values = { b = "v" } }', [
      entry(
        'l',
        {},
        {
          extracted: { v: 'new' },
          structuredMetadata: [
            { name: 'a', value: '1' },
            { name: 'b', value: 'old' },
            { name: 'c', value: '3' },
          ],
        },
      ),
    ]);
    expect(entries[0]!.structuredMetadata).toEqual([
      { name: 'a', value: '1' },
      { name: 'b', value: 'new' },
      { name: 'c', value: '3' },
    ]);
  });

  it('rejects an invalid regex with Go’s error as it is, unprefixed', () => {
    expect(() => runConfig('stage.structured_metadata { regex = "(?=x)" }', [])).toThrow(
      /^test\.alloy:1:38: stage\.structured_metadata: error parsing regexp: invalid or unsupported Perl syntax: `\(\?=`$/,
    );
  });

  it('never changes the line and leaves no promoted label behind (property)', () => {
    const inputs = entryStream({
      streams: fc.array(fc.dictionary(fc.constantFrom('a', 'b'), fc.string()), { minLength: 1, maxLength: 3 }),
      line: fc.string(),
    });
    const config = 'stage.structured_metadata { values = { a = "" } }';
    doesNotTouch(structuredMetadata, config, ['line'], { inputs, numRuns: 100 });
    outputWithinBounds(structuredMetadata, config, (out) => !('a' in out.labels), { inputs, numRuns: 100 });
  });
});
