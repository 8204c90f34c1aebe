import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { decodeEntries, encodeEntries } from '../../core/entry-batch-codec.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);
// Separators, digits and commas in every text, and characters outside the BMP.
const textArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', ',', '12,', '0,,', '\u0000', '__proto__'),
);
const entryArb: fc.Arbitrary<Entry> = fc.record({
  labels: fc.dictionary(textArb, textArb, { maxKeys: 4 }),
  line: textArb,
  timestamp: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  structuredMetadata: fc.array(fc.record({ name: textArb, value: textArb }), { maxLength: 3 }),
  extracted: fc.dictionary(textArb, fc.jsonValue(), { maxKeys: 3 }),
});

describe('entry batch codec', () => {
  it('gives back every entry as it was, each with labels of its own', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 20 }), (entries) => {
        const decoded = decodeEntries(encodeEntries(entries));
        expect(decoded).toHaveLength(entries.length);
        expect(decoded.map((e) => e.timestamp)).toEqual(entries.map((e) => e.timestamp));
        expect(decoded.map((e) => e.line)).toEqual(entries.map((e) => e.line));
        expect(decoded.map((e) => Object.entries(e.labels))).toEqual(entries.map((e) => Object.entries(e.labels)));
        expect(decoded.map((e) => e.structuredMetadata)).toEqual(entries.map((e) => e.structuredMetadata));
        expect(decoded.map((e) => JSON.stringify(e.extracted))).toEqual(entries.map((e) => JSON.stringify(e.extracted)));
      }),
      { numRuns },
    );
  });

  it('writes a repeated label set once, yet gives each entry its own copy', () => {
    const labels = { pod: 'web-1' };
    const entries = [0, 1].map((i) => ({ labels, line: `l${i}`, timestamp: BigInt(i), structuredMetadata: [], extracted: {} }));
    const packed = encodeEntries(entries);
    expect(packed).toBe('1,1,3,pod5,web-12,0,0,2,l00,0,0,1,2,l10,0,');
    const [a, b] = decodeEntries(packed);
    a!.labels.pod = 'changed';
    expect(b!.labels.pod).toBe('web-1');
  });
});
