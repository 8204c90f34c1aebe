import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileLines, type FileLine } from '../../../receivers/file/file-lines.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every line `chunks` complete, fed one chunk at a time into a reused buffer (as the tailer reads). */
function linesOf(lines: FileLines, chunks: readonly Buffer[]): FileLine[] {
  const out: FileLine[] = [];
  const scratch = Buffer.alloc(Math.max(1, ...chunks.map((c) => c.length)));
  for (const chunk of chunks) {
    chunk.copy(scratch);
    const data = scratch.subarray(0, chunk.length);
    for (let got = lines.next(data, 0); got; got = lines.next(data, got.next)) out.push(got.line);
    // The caller reuses its buffer: what FileLines kept must not change with it.
    scratch.fill(0x21);
  }
  return out;
}

function cut(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

describe('FileLines', () => {
  it("cuts lines at \\n, drops the \\r of \\r\\n even across chunks, and counts each line's bytes", () => {
    const lines = new FileLines();
    const got = linesOf(lines, [Buffer.from('one\r'), Buffer.from('\ntw'), Buffer.from('o\nthr'), Buffer.from('ee\r\n\nfour')]);
    expect(got).toEqual([
      { text: 'one', bytes: 5, overflow: 0 },
      { text: 'two', bytes: 4, overflow: 0 },
      { text: 'three', bytes: 7, overflow: 0 },
      { text: '', bytes: 1, overflow: 0 },
    ]);
    expect(lines.pending).toBe(4);
    expect(lines.end()).toEqual({ text: 'four', bytes: 4, overflow: 0 });
    expect(lines.pending).toBe(0);
    expect(lines.end()).toBeUndefined();
  });

  it('gives the same lines however the bytes are chunked', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\n', '\r', ' ') });
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 9 }), fc.nat(12), fc.boolean(), (t, size, max, truncate) => {
        const bytes = Buffer.from(t);
        const whole = linesOf(new FileLines(max, truncate), [bytes]);
        expect(linesOf(new FileLines(max, truncate), cut(bytes, size))).toEqual(whole);
      }),
    );
  });

  it('drops a line longer than max_line_size, counting its bytes, and keeps one of exactly that size', () => {
    const lines = new FileLines(5);
    expect(linesOf(lines, [Buffer.from('12345\r\n123456\nab'), Buffer.from('cdefgh\r\nok\n')])).toEqual([
      { text: '12345', bytes: 7, overflow: 0 },
      { text: undefined, bytes: 7, overflow: 6 },
      { text: undefined, bytes: 10, overflow: 8 },
      { text: 'ok', bytes: 3, overflow: 0 },
    ]);
  });

  it('truncates a longer line to max_line_size bytes, back to the start of a character cut in two', () => {
    const lines = new FileLines(5, true);
    expect(linesOf(lines, [Buffer.from('abcdefgh\nabcdéfg\nab'), Buffer.from('cd😀x\n')])).toEqual([
      { text: 'abcde', bytes: 9, overflow: 3 },
      { text: 'abcd', bytes: 9, overflow: 4 },
      { text: 'abcd', bytes: 10, overflow: 5 },
    ]);
    expect(linesOf(new FileLines(4, true), [Buffer.from('abcdef')])).toEqual([]);
  });

  it('sends an unfinished last line over max_line_size dropped or truncated too', () => {
    const dropping = new FileLines(3);
    linesOf(dropping, [Buffer.from('abcdef')]);
    expect(dropping.end()).toEqual({ text: undefined, bytes: 6, overflow: 6 });
    const truncating = new FileLines(3, true);
    linesOf(truncating, [Buffer.from('abcdef')]);
    expect(truncating.end()).toEqual({ text: 'abc', bytes: 6, overflow: 3 });
  });

  it('never holds more than max_line_size + 1 bytes of a line over it', () => {
    const copy = vi.spyOn(Buffer, 'from');
    const line = Buffer.alloc(4 << 20, 'x');
    for (const truncate of [false, true]) {
      copy.mockClear();
      const lines = new FileLines(1024, truncate);
      const got = linesOf(lines, [...cut(line, 64 * 1024), Buffer.from('\n')]);
      expect(got).toEqual([
        { text: truncate ? 'x'.repeat(1024) : undefined, bytes: line.length + 1, overflow: line.length - (truncate ? 1024 : 0) },
      ]);
      const copied = copy.mock.results.reduce((n, r) => n + (Buffer.isBuffer(r.value) ? (r.value as Buffer).length : 0), 0);
      expect(copied).toBeLessThanOrEqual(1024 + 1 + 1);
    }
  });

  it('copies and scans a line spanning many chunks in time linear in its length', () => {
    const concat = vi.spyOn(Buffer, 'concat');
    const indexOf = vi.spyOn(Buffer.prototype, 'indexOf');
    const size = 8 << 20;
    const got = linesOf(new FileLines(), [...cut(Buffer.alloc(size, 'y'), 256 * 1024), Buffer.from('\n')]);
    expect(got.map((l) => [l.text?.length, l.bytes])).toEqual([[size, size + 1]]);
    const joined = concat.mock.results.reduce((n, r) => n + (r.value as Buffer).length, 0);
    expect(joined).toBeLessThanOrEqual(size);
    const scanned = indexOf.mock.calls.reduce((n, call, i) => n + ((indexOf.mock.contexts[i] as Buffer).length - Number(call[1] ?? 0)), 0);
    expect(scanned).toBe(size + 1);
  });
});
