import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildLabels, isBuiltLabelSet } from '../../../lib/pyroscope/labels.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

describe('buildLabels', () => {
  it('keeps the last value of a repeated name, drops empty values and sorts by name', () => {
    expect(
      buildLabels([
        { name: 'b', value: '1' },
        { name: 'a', value: 'x' },
        { name: 'b', value: '2' },
        { name: 'c', value: 'y' },
        { name: 'c', value: '' },
      ]),
    ).toEqual([
      { name: 'a', value: 'x' },
      { name: 'b', value: '2' },
    ]);
  });

  it('yields a sorted set without repeated names or empty values for any input', () => {
    const pair = fc.record({ name: fc.constantFrom('a', 'b', 'c', '__name__', 'service_name'), value: fc.constantFrom('', 'x', 'y') });
    fc.assert(
      fc.property(fc.array(pair), (pairs) => {
        const built = buildLabels(pairs);
        const names = built.map((l) => l.name);
        expect(names).toEqual([...new Set(names)].sort());
        expect(built.every((l) => l.value !== '')).toBe(true);
        for (const { name, value } of built) expect(pairs.filter((p) => p.name === name).at(-1)!.value).toBe(value);
      }),
      { numRuns },
    );
  });

  it('returns a copy, equal to its input, for an input that is already built', () => {
    const pair = fc.record({ name: fc.string({ maxLength: 4 }), value: fc.string({ maxLength: 3 }) });
    fc.assert(
      fc.property(fc.array(pair), (pairs) => {
        const built = buildLabels(pairs);
        expect(isBuiltLabelSet(built)).toBe(true);
        const again = buildLabels(built);
        expect(again).toEqual(built);
        for (let i = 0; i < built.length; i++) expect(again[i]).not.toBe(built[i]);
      }),
      { numRuns },
    );
  });
});

describe('isBuiltLabelSet', () => {
  it('holds exactly when the names ascend strictly and no value is empty', () => {
    expect(isBuiltLabelSet([])).toBe(true);
    expect(
      isBuiltLabelSet([
        { name: 'a', value: '1' },
        { name: 'b', value: '2' },
      ]),
    ).toBe(true);
    expect(
      isBuiltLabelSet([
        { name: 'b', value: '1' },
        { name: 'a', value: '2' },
      ]),
    ).toBe(false);
    expect(
      isBuiltLabelSet([
        { name: 'a', value: '1' },
        { name: 'a', value: '2' },
      ]),
    ).toBe(false);
    expect(isBuiltLabelSet([{ name: 'a', value: '' }])).toBe(false);
  });
});
