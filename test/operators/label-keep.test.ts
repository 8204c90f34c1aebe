import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entry, runConfig } from '../support/run-stages.js';

describe('stage.label_keep', () => {
  it('keeps only the listed labels, reserved ones included in the removal', () => {
    const { entries } = runConfig('stage.label_keep { values = ["app"] }', [entry('l', { app: 'a', env: 'e', __tenant_id__: 't' })]);
    expect(entries[0]!.labels).toEqual({ app: 'a' });
  });

  it('forwards an entry left with no labels', () => {
    const { entries } = runConfig('stage.label_keep { values = ["nothing"] }', [entry('l', { app: 'a' })]);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.labels).toEqual({});
  });

  it('rejects an empty list in the reference words, which name the stage labelallow', () => {
    expect(() => runConfig('stage.label_keep { values = [] }', [])).toThrow(
      /^test\.alloy:1:20: stage\.label_keep: labelallow stage config cannot be empty$/,
    );
  });

  it('leaves only listed labels, with their values unchanged (property)', () => {
    const name = fc.constantFrom<string>('a', 'b', 'c', 'd', 'e');
    fc.assert(
      fc.property(
        fc.dictionary(name, fc.string({ maxLength: 3 })),
        fc.uniqueArray(name, { minLength: 1 }),
        fc.string(),
        (labels, keep, line) => {
          const [out] = runConfig(`stage.label_keep { values = ${JSON.stringify(keep)} }`, [entry(line, { ...labels })]).entries;
          for (const key of Object.keys(out!.labels)) {
            expect(keep).toContain(key);
            expect(out!.labels[key]).toBe(labels[key]);
          }
          expect(Object.keys(out!.labels).length).toBe(keep.filter((k) => k in labels).length);
          expect(out!.line).toBe(line);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('stage.label_keep with names that exist on Object.prototype', () => {
  it('does not invent labels named like built-in members', () => {
    const { entries } = runConfig('stage.label_keep { values = ["toString", "constructor", "app"] }', [entry('l', { app: 'a' })]);
    expect(entries[0]!.labels).toEqual({ app: 'a' });
  });

  it('keeps a label named __proto__ as an ordinary label', () => {
    const labels: Record<string, string> = JSON.parse('{"__proto__":"p","app":"a"}');
    const { entries } = runConfig('stage.label_keep { values = ["__proto__"] }', [entry('l', labels)]);
    expect(Object.getPrototypeOf(entries[0]!.labels)).toBe(Object.prototype);
    expect(Object.entries(entries[0]!.labels)).toEqual([['__proto__', 'p']]);
  });
});
