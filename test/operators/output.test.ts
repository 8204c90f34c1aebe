import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entry, runConfig } from '../support/run-stages.js';

describe('stage.output', () => {
  it('replaces the line with the extracted value', () => {
    const { entries } = runConfig('stage.output { source = "msg" }', [entry('raw', {}, { extracted: { msg: 'hello' } })]);
    expect(entries[0]!.line).toBe('hello');
  });

  it('can read a label through label seeding', () => {
    const { entries } = runConfig('stage.output { source = "app" }', [entry('raw', { app: 'api' })]);
    expect(entries[0]!.line).toBe('api');
  });

  it('leaves the line unchanged for a missing, null or list value', () => {
    const { entries } = runConfig('stage.output { source = "v" }', [
      entry('a'),
      entry('b', {}, { extracted: { v: null } }),
      entry('c', {}, { extracted: { v: ['x'] } }),
    ]);
    expect(entries.map((e) => e.line)).toEqual(['a', 'b', 'c']);
  });

  it('prints floats without an exponent', () => {
    const { entries } = runConfig('stage.output { source = "v" }', [entry('a', {}, { extracted: { v: 1e-7 } })]);
    expect(entries[0]!.line).toBe('0.0000001');
  });

  it('rejects an empty source', () => {
    expect(() => runConfig('stage.output { source = "" }', [])).toThrow(
      'test.alloy:1:16: stage.output: output source value is required if output is specified',
    );
  });

  it('only ever changes the line (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string(), { nil: undefined }), (line, msg) => {
        const input = entry(line, { app: 'x' }, { extracted: msg === undefined ? {} : { msg } });
        const [out] = runConfig('stage.output { source = "msg" }', [input]).entries;
        expect(out!.line).toBe(msg ?? line);
        expect(out!.labels).toEqual({ app: 'x' });
        expect(out!.timestamp).toBe(input.timestamp);
      }),
      { numRuns: 100 },
    );
  });
});
