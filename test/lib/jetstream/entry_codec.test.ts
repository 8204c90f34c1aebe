import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeEntryBatch,
  encodeEntryBatch,
  ENTRY_CODEC_VERSION,
  MalformedEntryMessage,
  type WireBatch,
} from '../../../lib/jetstream/entry_codec.js';

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
});
