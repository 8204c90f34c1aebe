import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DecodedBatch,
  decodeEntryBatch,
  decodeEntryBatchSteps,
  EntryCountExceeded,
  encodeEntryBatch,
  ENTRY_CODEC_VERSION,
  MalformedEntryMessage,
  type WireBatch,
  type WireEntry,
} from '../../../lib/jetstream/entry-codec.js';
import { ItemSlices } from '../../../lib/slices.js';

const batch: WireBatch = {
  labels: { app: 'web', pod: 'pod-1' },
  entries: [
    { timestamp: 1_714_557_600_123_456_789n, line: 'GET / 200', structuredMetadata: [{ name: 'trace_id', value: 'abc' }] },
    { timestamp: -5n, line: 'ünïcødé ✓', structuredMetadata: [] },
  ],
};

describe('the JetStream entry codec', () => {
  it('writes version 1 and reads back labels, lines, nanosecond timestamps and metadata in order', () => {
    const encoded = encodeEntryBatch(batch);
    expect(encoded[0]).toBe(ENTRY_CODEC_VERSION);
    expect(decodeEntryBatch(encoded)).toEqual(batch);
  });

  it('has a fixed layout', () => {
    const encoded = encodeEntryBatch({ labels: { a: 'b' }, entries: [{ timestamp: 1n, line: 'x', structuredMetadata: [] }] });
    expect([...encoded]).toEqual([1, 1, 1, 97, 1, 98, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 120, 0]);
  });

  it('rejects another version, truncation and trailing bytes', () => {
    const encoded = encodeEntryBatch(batch);
    const other = Buffer.from(encoded);
    other[0] = 2;
    expect(() => decodeEntryBatch(other)).toThrow(new MalformedEntryMessage(`unknown version 2 at byte 1 of ${encoded.length}`));
    expect(() => decodeEntryBatch(encoded.subarray(0, encoded.length - 3))).toThrow(MalformedEntryMessage);
    expect(() => decodeEntryBatch(Buffer.concat([encoded, Buffer.from([0])]))).toThrow(
      `1 bytes left over at byte ${encoded.length} of ${encoded.length + 1}`,
    );
    expect(() => decodeEntryBatch(new Uint8Array())).toThrow('empty message at byte 0 of 0');
    expect(() => decodeEntryBatch(new Uint8Array([1, 0xff, 0xff, 0xff, 0x7f]))).toThrow(MalformedEntryMessage);
  });

  it('keeps a __proto__ label as an own property', () => {
    const decoded = decodeEntryBatch(encodeEntryBatch({ labels: JSON.parse('{"__proto__":"x"}'), entries: [] }));
    expect(Object.hasOwn(decoded.labels, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(decoded.labels, '__proto__')?.value).toBe('x');
  });

  it('round-trips any batch', () => {
    const pair = fc.record({ name: fc.string(), value: fc.string() });
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => k !== '__proto__'),
          fc.string(),
        ),
        fc.array(
          fc.record({
            timestamp: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
            line: fc.string({ unit: 'grapheme' }),
            structuredMetadata: fc.array(pair),
          }),
        ),
        (labels, entries) => {
          expect(decodeEntryBatch(encodeEntryBatch({ labels, entries }))).toEqual({ labels, entries });
        },
      ),
    );
  });

  describe('in slices', () => {
    const entriesOf = (n: number, pairs = 0): WireEntry[] =>
      Array.from({ length: n }, (_, i) => ({
        timestamp: BigInt(i),
        line: `l${i}`,
        structuredMetadata: Array.from({ length: pairs }, (_, j) => ({ name: `k${j}`, value: `v${j}` })),
      }));
    /** Runs a decode to the end: the entry counts of the slices yielded, and what it returned. */
    const run = (steps: Generator<DecodedBatch, DecodedBatch, void>) => {
      const slices: number[] = [];
      const entries: DecodedBatch['entries'] = [];
      for (;;) {
        const step = steps.next();
        entries.push(...step.value.entries);
        if (step.done) return { slices, entries, last: step.value.entries.length, labels: step.value.labels };
        slices.push(step.value.entries.length);
      }
    };

    it('checks the whole message, then yields its entries a slice at a time', () => {
      const entries = entriesOf(27);
      const decoded = run(decodeEntryBatchSteps(encodeEntryBatch({ labels: { app: 'a' }, entries }), new ItemSlices(10)));
      // 27 entries checked (two full slices, nothing decoded yet), then decoded from item 28 on:
      // the third slice ends at item 30 after 3 entries; the last 4 are returned.
      expect(decoded.slices).toEqual([0, 0, 3, 10, 10]);
      expect(decoded.last).toBe(4);
      expect(decoded.entries).toEqual(entries);
      expect(decoded.labels).toEqual({ app: 'a' });
    });

    it('ends slices between the metadata pairs of one entry', () => {
      const entries = entriesOf(1, 25);
      const decoded = run(decodeEntryBatchSteps(encodeEntryBatch({ labels: {}, entries }), new ItemSlices(10)));
      expect(decoded.slices).toEqual([0, 0, 0, 0, 0]);
      expect(decoded.entries).toEqual(entries);
    });

    it('shares one count of slices between messages, so small messages share a slice', () => {
      const slices = new ItemSlices(10);
      const message = encodeEntryBatch({ labels: {}, entries: entriesOf(2) });
      const yields = [1, 2, 3].map(() => run(decodeEntryBatchSteps(message, slices)).slices.length);
      // Each message is 4 items (2 checked, 2 decoded): the slice fills during the third.
      expect(yields).toEqual([0, 0, 1]);
    });

    it('refuses a malformed message before yielding any of its entries', () => {
      const encoded = encodeEntryBatch({ labels: {}, entries: entriesOf(30) });
      const steps = decodeEntryBatchSteps(Buffer.concat([encoded, Buffer.from([7])]), new ItemSlices(10));
      expect(steps.next().value.entries).toEqual([]);
      expect(steps.next().value.entries).toEqual([]);
      expect(steps.next().value.entries).toEqual([]);
      expect(() => steps.next()).toThrow(new MalformedEntryMessage(`1 bytes left over at byte ${encoded.length} of ${encoded.length + 1}`));
    });

    it('refuses a message declaring more entries than the limit before reading any', () => {
      const encoded = encodeEntryBatch({ labels: { app: 'a' }, entries: entriesOf(11) });
      const steps = decodeEntryBatchSteps(encoded, new ItemSlices(1024), 10);
      expect(() => steps.next()).toThrow(new EntryCountExceeded(11, 10));
      expect(new EntryCountExceeded(11, 10).message).toBe('message has 11 entries, more than the limit of 10');
      expect(run(decodeEntryBatchSteps(encoded, new ItemSlices(1024), 11)).entries).toHaveLength(11);
    });
  });
});
