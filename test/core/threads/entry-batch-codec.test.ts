import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { decodeEntries, encodeEntries, LabelSets } from '../../../core/threads/entry-batch-codec.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);
// Separators, digits and commas in every text, and characters outside the BMP.
const textArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', ',', '12,', '0,,', '\u0000', '__proto__'),
);
// Label sets drawn from a small pool as well, so that batches repeat sets (in either key order).
const labelsArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.dictionary(textArb, textArb, { maxKeys: 4 }),
  fc.constantFrom<Record<string, string>>({ a: '1', b: '2' }, { b: '2', a: '1' }, { a: '1' }, { a: '1', b: '3' }, {}),
);
const entryArb: fc.Arbitrary<Entry> = fc.record({
  labels: labelsArb,
  line: textArb,
  // Past the 64-bit range too: such timestamps cross as text.
  timestamp: fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n })),
  structuredMetadata: fc.array(fc.record({ name: textArb, value: textArb }), { maxLength: 3 }),
  extracted: fc.dictionary(textArb, fc.jsonValue(), { maxKeys: 3 }),
});

describe('entry batch codec', () => {
  it('gives back every entry as it was, each with labels of its own', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 40 }), (entries) => {
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
    expect(packed.texts).toBe('podweb-1l0l1');
    expect([...packed.lengths]).toEqual([3, 5, 2, 2]);
    // One set of one pair; then per entry: set 0, no metadata, no flags.
    expect([...packed.shape]).toEqual([1, 1, 0, 0, 0, 0, 0, 0]);
    expect(packed.timestamps).toEqual(new BigInt64Array([0n, 1n]));
    const [a, b] = decodeEntries(packed);
    a!.labels.pod = 'changed';
    expect(b!.labels.pod).toBe('web-1');
  });

  it('keeps the same pairs in another key order as a set of its own', () => {
    const entries = [
      { a: '1', b: '2' },
      { b: '2', a: '1' },
      { a: '1', b: '2' },
    ].map((labels) => ({
      labels,
      line: '',
      timestamp: 0n,
      structuredMetadata: [],
      extracted: {},
    }));
    const packed = encodeEntries(entries);
    expect(packed.shape[0]).toBe(2);
    expect(decodeEntries(packed).map((e) => Object.keys(e.labels))).toEqual([
      ['a', 'b'],
      ['b', 'a'],
      ['a', 'b'],
    ]);
  });

  it('packs only the sets its entries use when given a table looked up before', () => {
    const sets = new LabelSets();
    const all = ['a', 'b', 'c'].map((pod) => ({ labels: { pod }, line: pod, timestamp: 0n, structuredMetadata: [], extracted: {} }));
    const setOf = all.map((e) => sets.indexOf(e.labels));
    expect(setOf).toEqual([0, 1, 2]);
    const part = [all[2]!, all[0]!, all[2]!];
    const packed = encodeEntries(part, sets, [2, 0, 2]);
    expect(packed.texts).toBe('podcpodacac');
    expect([...packed.shape]).toEqual([2, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
    expect(decodeEntries(packed).map((e) => e.labels.pod)).toEqual(['c', 'a', 'c']);
  });

  it('tells many sets apart, however they interleave', () => {
    const entries = Array.from({ length: 60 }, (_, i) => ({
      labels: { pod: `web-${i % 20}` },
      line: String(i),
      timestamp: BigInt(i),
      structuredMetadata: [],
      extracted: {},
    }));
    const packed = encodeEntries(entries);
    expect(packed.shape[0]).toBe(20);
    expect(decodeEntries(packed).map((e) => e.labels.pod)).toEqual(entries.map((e) => e.labels.pod));
  });

  it('carries a timestamp past the 64-bit range as text', () => {
    const timestamp = 2n ** 70n + 1n;
    const packed = encodeEntries([{ labels: {}, line: 'x', timestamp, structuredMetadata: [], extracted: {} }]);
    expect(packed.texts).toBe(`x${timestamp}`);
    expect(decodeEntries(packed)[0]!.timestamp).toBe(timestamp);
  });

  it('refuses a batch whose lengths run out', () => {
    const packed = encodeEntries([{ labels: {}, line: 'x', timestamp: 0n, structuredMetadata: [], extracted: {} }]);
    expect(() => decodeEntries({ ...packed, lengths: new Int32Array(0) })).toThrow('truncated entry batch');
  });
});
