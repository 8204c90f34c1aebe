import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineBatches } from '../../cli/lines.js';
import { charactersScanned } from '../support/characters-scanned.js';

async function viaBatches(chunks: readonly (string | Buffer)[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const batch of lineBatches(Readable.from(chunks))) lines.push(...batch);
  return lines;
}

async function viaReadline(chunks: readonly (string | Buffer)[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: Readable.from(chunks), crlfDelay: Infinity })) lines.push(line);
  return lines;
}

/** `text` as UTF-8 bytes cut at the given offsets (possibly inside a character). */
function cut(text: string, cuts: readonly number[]): Buffer[] {
  const bytes = Buffer.from(text);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const p of points) {
    out.push(bytes.subarray(start, p));
    start = p;
  }
  out.push(bytes.subarray(start));
  return out.filter((b) => b.length > 0);
}

describe('lineBatches', () => {
  it('splits like readline with crlfDelay Infinity, however the bytes are chunked', async () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\n', '\r', '\r\n', ' ') });
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat(), { maxLength: 6 }), async (t, cuts) => {
        const chunks = cut(t, cuts);
        expect(await viaBatches(chunks)).toEqual(await viaReadline(chunks));
      }),
    );
  });

  it('keeps a CRLF split across chunks as one break and reads a last line without newline', async () => {
    expect(await viaBatches(['a\r', '\nb\rc\n\nd'])).toEqual(['a', 'b', 'c', '', 'd']);
  });

  it('reads a line of many chunks looking at each character a bounded number of times', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let lines: string[] = [];
    const scanned = await charactersScanned(async () => {
      lines = await viaBatches([...Array.from({ length: 128 }, () => chunk), 'y\nnext']);
    });
    expect(lines.map((l) => l.length)).toEqual([128 * chunk.length + 1, 4]);
    // Searching the whole unfinished line again for every chunk would look at 128 / 2 times as much.
    expect(scanned).toBeLessThanOrEqual(2 * 128 * chunk.length);
  });
});
