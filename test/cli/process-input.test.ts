import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type InputBatch, type InputFormat, inputEntries } from '../../cli/process-input.js';
import { ManualClock } from '../../core/clock.js';

interface Read {
  batches: InputBatch[];
  malformed: string[];
}

/** What inputEntries yields for `chunks`, and the malformed lines it reports as `LINE: reason`. */
async function read(chunks: readonly string[], input: InputFormat = 'jsonl', batchLimit?: number): Promise<Read> {
  const malformed: string[] = [];
  const batches: InputBatch[] = [];
  const stream = Readable.from(chunks.map((chunk) => Buffer.from(chunk)));
  const clock = new ManualClock(1_700_000_000_123_456_789n);
  for await (const batch of inputEntries(stream, input, clock, (line, reason) => malformed.push(`${line}: ${reason}`), batchLimit))
    batches.push(batch);
  return { batches, malformed };
}

describe('inputEntries', () => {
  it('yields at most batchLimit entries at a time, the same entries and line numbers as one batch', async () => {
    const text = ['{"line":"a"}', '', '{"line":"b"}', 'not json', '{"line":"c"}', '{"line":"d"}', '{"line":"e"}', ''].join('\n');
    const whole = await read([text]);
    const limited = await read([text], 'jsonl', 2);
    expect(whole.batches.map((b) => b.entries.length)).toEqual([5]);
    expect(limited.batches.map((b) => b.entries.length)).toEqual([2, 2, 1]);
    expect(limited.batches.flatMap((b) => b.entries)).toEqual(whole.batches.flatMap((b) => b.entries));
    expect(limited.batches.flatMap((b) => b.lineNumbers)).toEqual([1, 3, 5, 6, 7]);
    expect(limited.malformed).toEqual([`4: invalid JSON: ${jsonError('not json')}`]);
    expect(whole.malformed).toEqual(limited.malformed);
  });

  it('reads JSON-lines entries with their labels, time, metadata and extracted values, or the clock’s now', async () => {
    const { batches } = await read([
      '{"line":"x","labels":{"app":"api"},"timestamp":"2024-01-02T03:04:05.000000006Z","structured_metadata":{"trace":"t1"},"extracted":{"n":1}}\n',
      '{"line":"y","timestamp":null}\n',
    ]);
    expect(batches.flatMap((b) => b.entries)).toEqual([
      {
        labels: { app: 'api' },
        line: 'x',
        timestamp: 1_704_164_645_000_000_006n,
        structuredMetadata: [{ name: 'trace', value: 't1' }],
        extracted: { n: 1 },
      },
      { labels: {}, line: 'y', timestamp: 1_700_000_000_123_456_789n, structuredMetadata: [], extracted: {} },
    ]);
  });

  it('reports each kind of malformed JSON-lines entry by its line number and goes on', async () => {
    const { batches, malformed } = await read([
      '[1]\n{"line":5}\n{"line":"ok","labels":{"a":1}}\n{"line":"ok","timestamp":5}\n{"line":"ok","extracted":[]}\n{"line":"last"}',
    ]);
    expect(malformed).toEqual([
      '1: expected a JSON object',
      '2: "line" must be a string',
      '3: "labels.a" must be a string',
      '4: "timestamp" must be an RFC 3339 string or null',
      '5: "extracted" must be an object',
    ]);
    expect(batches.flatMap((b) => b.entries.map((e) => e.line))).toEqual(['last']);
    expect(batches.flatMap((b) => b.lineNumbers)).toEqual([6]);
  });

  it('takes every text line as it is, blank ones too, at the clock’s now and without labels', async () => {
    const { batches, malformed } = await read(['first\r\n\n  {"line":"not parsed"}\rlast'], 'text');
    expect(malformed).toEqual([]);
    expect(batches.flatMap((b) => b.lineNumbers)).toEqual([1, 2, 3, 4]);
    expect(batches.flatMap((b) => b.entries)).toEqual(
      ['first', '', '  {"line":"not parsed"}', 'last'].map((line) => ({
        labels: {},
        line,
        timestamp: 1_700_000_000_123_456_789n,
        structuredMetadata: [],
        extracted: {},
      })),
    );
  });

  it('numbers lines across chunks, whatever the chunk boundaries and the batch limit', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => (i % 7 === 3 ? '' : i % 11 === 5 ? 'oops' : JSON.stringify({ line: `l${i}é` })));
    const text = `${lines.join('\n')}\n`;
    const expectedNumbers = lines.flatMap((line, i) => (line.startsWith('{') ? [i + 1] : []));
    const expectedMalformed = lines.flatMap((line, i) => (line === 'oops' ? [i + 1] : []));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: Buffer.byteLength(text) - 1 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 50 }),
        async (cuts, batchLimit) => {
          const bytes = Buffer.from(text);
          const ends = [...cuts.sort((a, b) => a - b), bytes.length];
          // Cut by bytes, so a cut may fall inside a two-byte character.
          const chunks = ends.map((end, i) => bytes.subarray(i === 0 ? 0 : ends[i - 1], end).toString('latin1'));
          const { batches, malformed } = await readBytes(
            chunks.map((chunk) => Buffer.from(chunk, 'latin1')),
            batchLimit,
          );
          expect(batches.every((b) => b.entries.length > 0 && b.entries.length <= batchLimit)).toBe(true);
          expect(batches.flatMap((b) => b.lineNumbers)).toEqual(expectedNumbers);
          expect(batches.flatMap((b) => b.entries.map((e) => e.line))).toEqual(expectedNumbers.map((n) => `l${n - 1}é`));
          expect(malformed.map((m) => Number(m.split(':')[0]))).toEqual(expectedMalformed);
        },
      ),
      { numRuns: 50 },
    );
  });
});

/** The message JSON.parse gives for `text` (its wording is V8's). */
function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${text} is valid JSON`);
}

/** read() over byte chunks as they are. */
async function readBytes(chunks: readonly Buffer[], batchLimit: number): Promise<Read> {
  const malformed: string[] = [];
  const batches: InputBatch[] = [];
  for await (const batch of inputEntries(
    Readable.from(chunks),
    'jsonl',
    new ManualClock(0n),
    (line, reason) => malformed.push(`${line}: ${reason}`),
    batchLimit,
  ))
    batches.push(batch);
  return { batches, malformed };
}
