import { describe, expect, it } from 'vitest';
import { entry, runConfig } from '../support/run-stages.js';

describe('stage.structured_metadata_drop', () => {
  it('removes every pair with a listed name and keeps the others in order', () => {
    const { entries } = runConfig('stage.structured_metadata_drop { values = ["b"] }', [
      entry(
        'l',
        { b: 'label stays' },
        {
          structuredMetadata: [
            { name: 'a', value: '1' },
            { name: 'b', value: '2' },
            { name: 'c', value: '3' },
            { name: 'b', value: '4' },
          ],
        },
      ),
    ]);
    expect(entries[0]!.structuredMetadata).toEqual([
      { name: 'a', value: '1' },
      { name: 'c', value: '3' },
    ]);
    expect(entries[0]!.labels).toEqual({ b: 'label stays' });
  });

  it('rejects an empty list in the reference words', () => {
    expect(() => runConfig('stage.structured_metadata_drop { values = [] }', [])).toThrow(
      /^test\.alloy:1:\d+: stage\.structured_metadata_drop: structured_metadata_drop stage config cannot be empty$/,
    );
  });
});
