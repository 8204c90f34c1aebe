import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { compress, uncompress } from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { inflateBodyAsync, snappyDecode, snappyDecodeSteps, snappyEncode, TooLargeError } from '../../../lib/loki/compression.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

/** Bytes with runs, so the compressor emits copies (overlapping ones too) as well as literals. */
const compressible = fc
  .array(
    fc.oneof(fc.uint8Array({ maxLength: 80 }), fc.record({ byte: fc.integer({ min: 0, max: 255 }), n: fc.integer({ min: 1, max: 300 }) })),
    {
      maxLength: 40,
    },
  )
  .map((parts) => Buffer.concat(parts.map((p) => (p instanceof Uint8Array ? Buffer.from(p) : Buffer.alloc(p.n, p.byte)))));

function drain<T>(steps: Generator<number, T, void>): { value: T; yields: number[] } {
  const yields: number[] = [];
  for (;;) {
    const step = steps.next();
    if (step.done) return { value: step.value, yields };
    yields.push(step.value);
  }
}

describe('snappy block decoding', () => {
  it('decodes what the snappy library encodes, and as the library decodes it', () => {
    fc.assert(
      fc.property(compressible, (bytes) => {
        const block = Buffer.from(compress(bytes));
        expect(snappyDecode(block, bytes.length)).toEqual(bytes);
        expect(snappyDecode(block, bytes.length)).toEqual(Buffer.from(uncompress(block)));
      }),
      { numRuns },
    );
  });

  it('yields the output length after every slice, before the end', () => {
    const bytes = Buffer.concat([Buffer.alloc(10_000, 1), Buffer.from('literal tail')]);
    const { value, yields } = drain(snappyDecodeSteps(snappyEncode(bytes), bytes.length, 1000));
    expect(value.equals(bytes)).toBe(true);
    expect(yields.length).toBeGreaterThanOrEqual(9);
    expect(yields.every((n, i) => n >= 1000 * (i + 1) && n <= bytes.length)).toBe(true);
  });

  it('refuses an announced length over the cap before decoding anything', () => {
    const steps = snappyDecodeSteps(snappyEncode(Buffer.alloc(100_000)), 65_536);
    expect(() => steps.next()).toThrow(new TooLargeError(65_536, 'decompressed body'));
    expect(new TooLargeError(65_536, 'decompressed body').message).toBe('decompressed body is larger than the limit of 65536 bytes');
  });

  it('refuses blocks whose elements do not fill exactly the announced length', () => {
    const block = snappyEncode(Buffer.from('hello, hello, hello'));
    const shorter = Buffer.from(block);
    shorter[0] = block[0]! + 1;
    const longer = Buffer.from(block);
    longer[0] = block[0]! - 1;
    const corrupt = 'invalid snappy block: Invalid Snappy bitstream';
    expect(() => snappyDecode(shorter, 1000)).toThrow(corrupt);
    expect(() => snappyDecode(longer, 1000)).toThrow(corrupt);
    // A copy from before the start of the output.
    expect(() => snappyDecode(Buffer.from([0x04, 0x01, 0x05]), 1000)).toThrow(corrupt);
    expect(() => snappyDecode(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 1000)).toThrow('invalid snappy block: bad length header');
  });
});

describe('streaming inflate', () => {
  const text = Buffer.from('the same line again\n'.repeat(20_000));

  it('undoes gzip, zlib deflate and bare deflate off the event loop', async () => {
    // Buffer.equals: a deep equality over 400,000 elements takes the test runner seconds.
    expect((await inflateBodyAsync(gzipSync(text), 'gzip', text.length)).equals(text)).toBe(true);
    expect((await inflateBodyAsync(deflateSync(text), 'deflate', text.length)).equals(text)).toBe(true);
    expect((await inflateBodyAsync(deflateRawSync(text), 'deflate', text.length)).equals(text)).toBe(true);
  });

  it('hands each chunk to admit before keeping it, and stops when admit throws', async () => {
    const admitted: number[] = [];
    await inflateBodyAsync(gzipSync(text), 'gzip', text.length, (bytes) => admitted.push(bytes));
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(text.length);
    expect(admitted.length).toBeGreaterThan(1);
    let calls = 0;
    const refused = inflateBodyAsync(gzipSync(text), 'gzip', text.length, () => {
      calls++;
      throw new Error('no room');
    });
    await expect(refused).rejects.toThrow('no room');
    expect(calls).toBe(1);
  });

  it('stops at the cap, and names a body that is not what it says', async () => {
    await expect(inflateBodyAsync(gzipSync(text), 'gzip', 1000)).rejects.toThrow(new TooLargeError(1000, 'decompressed body'));
    await expect(inflateBodyAsync(Buffer.from('{}'), 'gzip', 1000)).rejects.toThrow('invalid gzip body: incorrect header check');
    await expect(inflateBodyAsync(Buffer.from('{}'), 'deflate', 1000)).rejects.toThrow('invalid deflate body: unexpected end of file');
  });
});
