import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entry, runConfig } from '../support/run-stages.js';

describe('stage.label_drop', () => {
  it('removes the listed labels and ignores missing ones', () => {
    const { entries } = runConfig('stage.label_drop { values = ["app", "missing"] }', [entry('l', { app: 'a', env: 'e' })]);
    expect(entries[0]!.labels).toEqual({ env: 'e' });
  });

  it('keeps the seeded copy in the extracted map', () => {
    const { entries } = runConfig('stage.label_drop { values = ["app"] }', [entry('l', { app: 'a' })]);
    expect(entries[0]!.extracted).toEqual({ app: 'a' });
  });

  it('rejects an empty list in the reference words', () => {
    expect(() => runConfig('stage.label_drop { values = [] }', [])).toThrow(
      /^test\.alloy:1:20: stage\.label_drop: labeldrop stage config cannot be empty$/,
    );
  });

  it('rejects a missing values attribute', () => {
    expect(() => runConfig('stage.label_drop { }', [])).toThrow('test.alloy:1:1: stage.label_drop: missing required attribute "values"');
  });

  it('removes exactly the listed labels and never touches the line (property)', () => {
    const name = fc.constantFrom<string>('a', 'b', 'c', 'd', 'e');
    fc.assert(
      fc.property(
        fc.dictionary(name, fc.string({ maxLength: 3 })),
        fc.uniqueArray(name, { minLength: 1 }),
        fc.string(),
        (labels, drop, line) => {
          const [out] = runConfig(`stage.label_drop { values = ${JSON.stringify(drop)} }`, [entry(line, { ...labels })]).entries;
          const expected = Object.fromEntries(Object.entries(labels).filter(([k]) => !drop.includes(k)));
          expect(out!.labels).toEqual(expected);
          expect(out!.line).toBe(line);
        },
      ),
      { numRuns: 100 },
    );
  });
});
