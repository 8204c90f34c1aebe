import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProcessReport } from '../../cli/process-report.js';
import type { Entry } from '../../core/entry.js';
import { type EntryOutputFormat, formatEntry } from '../../core/entry-json.js';
import type { MetricFamilies } from '../../core/metrics.js';
import { entry as entryArbitrary } from '../../testing/arbitraries.js';

/** A report writing to a stream whose bytes are kept. */
function reportToBytes(): { report: ProcessReport; bytes: () => Buffer } {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
  const report = new ProcessReport({ stdin: new PassThrough(), stdout, stderr: new PassThrough() }, true);
  return { report, bytes: () => Buffer.concat(chunks) };
}

function writtenBytes(lines: readonly string[]): Buffer {
  const { report, bytes } = reportToBytes();
  for (const line of lines) report.output(line);
  report.flush();
  return bytes();
}

/** The UTF-8 bytes of each line and a newline. */
function utf8Lines(lines: readonly string[]): Buffer {
  return Buffer.from(lines.map((line) => `${line}\n`).join(''));
}

/** Text with what UTF-8 encodes its own way: non-ASCII, pairs and lone surrogates, U+2028, NUL. */
const awkwardLine = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\ud800', '\udc00', '\u2028', '\u0000', '"', '\\'), maxLength: 60 }),
);

describe('ProcessReport output', () => {
  it('writes each line and a newline as the UTF-8 bytes of the text', () => {
    fc.assert(
      fc.property(fc.array(awkwardLine, { maxLength: 40 }), (lines) => {
        expect(writtenBytes(lines)).toEqual(utf8Lines(lines));
      }),
    );
  });

  it('writes output of many 64 KiB pieces and lines longer than a piece alike', () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `${'é'.repeat(i % 50)} line ${i} 😀 \ud800`);
    lines.splice(1000, 0, 'x'.repeat(300_000), '€'.repeat(70_000));
    // Compared whole: a byte-by-byte diff of a megabyte is slow to compute and no use to read.
    expect(writtenBytes(lines).equals(utf8Lines(lines))).toBe(true);
  });

  it('writes a line longer than a piece a piece at a time, never cutting a surrogate pair in two', () => {
    const stdout = new PassThrough();
    const written: Buffer[] = [];
    stdout.on('data', (chunk: Buffer) => written.push(chunk));
    const report = new ProcessReport({ stdin: new PassThrough(), stdout, stderr: new PassThrough() }, true);
    // The pair straddles the first 64 Ki code units.
    const lines = ['before', `${'a'.repeat(65_535)}😀${'b'.repeat(400_000)}`, 'after'];
    for (const line of lines) report.output(line);
    report.flush();
    expect(Buffer.concat(written).equals(utf8Lines(lines))).toBe(true);
    // Encoded and written a piece at a time, not the whole line at once.
    expect(Math.max(...written.map((chunk) => chunk.length))).toBeLessThanOrEqual(65_536 + 3);
  });

  it('writes what is pending once the event loop turns, without waiting for 64 KiB or the end', async () => {
    const { report, bytes } = reportToBytes();
    report.output('first');
    report.outputEntry({ labels: {}, line: 'second', timestamp: 0n, structuredMetadata: [], extracted: {} }, 'line');
    expect(bytes().length).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(bytes().toString()).toBe('first\nsecond\n');
    report.output('third');
    await new Promise((resolve) => setImmediate(resolve));
    expect(bytes().toString()).toBe('first\nsecond\nthird\n');
  });

  it('prints entries, in any format and between plain lines, as formatEntry gives them, in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.tuple(entryArbitrary(), fc.constantFrom<EntryOutputFormat>('json', 'entry', 'line')), awkwardLine), {
          maxLength: 150,
        }),
        (outputs) => {
          const { report, bytes } = reportToBytes();
          const expected: string[] = [];
          for (const output of outputs) {
            if (typeof output === 'string') {
              report.output(output);
              expected.push(output);
            } else {
              const [entry, format]: [Entry, EntryOutputFormat] = output;
              report.outputEntry(entry, format);
              expected.push(formatEntry(entry, format));
            }
          }
          report.flush();
          expect(report.forwarded).toBe(outputs.length);
          expect(bytes()).toEqual(utf8Lines(expected));
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** A family of dropped-line counts as prom-client gives it (one per pipeline thread). */
function droppedFamily(counts: Record<string, number>): MetricFamilies[number] {
  return {
    name: 'logs_process_dropped_lines_total',
    help: 'dropped',
    type: 'counter',
    aggregator: 'sum',
    values: Object.entries(counts).map(([reason, value]) => ({ labels: { reason }, value })),
  } as unknown as MetricFamilies[number];
}

/** A report whose stderr is a terminal (or not), with what it writes there kept. */
function reportWithStderr(terminal: boolean, quiet = false): { report: ProcessReport; stderr: () => string } {
  const stderr = Object.assign(new PassThrough(), { isTTY: terminal });
  let written = '';
  stderr.on('data', (chunk: Buffer) => {
    written += chunk.toString();
  });
  const report = new ProcessReport({ stdin: new PassThrough(), stdout: new PassThrough(), stderr }, quiet);
  return { report, stderr: () => written };
}

describe('ProcessReport summary and exit code', () => {
  it('ends with a summary on a terminal, drops by reason summed over threads in first-seen order', () => {
    const { report, stderr } = reportWithStderr(true);
    report.read = 1234;
    report.output('kept');
    report.malformedLine(7, 'unexpected token');
    const families = [[droppedFamily({ noise: 3, too_old: 0 })], [droppedFamily({ too_old: 2, noise: 1000 })]];
    expect(report.finish(families, 'jsonl')).toBe(0);
    const [malformed, summary] = stderr().split('\r\x1b[K');
    expect(malformed).toBe('stdin:7: unexpected token\n');
    expect(summary).toMatch(
      /^rivulet process: 1,234 in, 1 out, 1,005 dropped \(noise: 1,003, too_old: 2\), 1 malformed, \d+\.\d\d s \([\d,]+ entries\/s\)\n$/,
    );
  });

  it('writes no summary when stderr is not a terminal, or with --quiet', () => {
    for (const [terminal, quiet] of [
      [false, false],
      [true, true],
    ]) {
      const { report, stderr } = reportWithStderr(terminal!, quiet);
      report.read = 2;
      expect(report.finish([], 'text')).toBe(0);
      expect(stderr()).toBe('');
    }
  });

  it('exits 1 when every line was malformed, with the hint for JSON-lines input', () => {
    const jsonl = reportWithStderr(false);
    jsonl.report.malformedLine(1, 'Unexpected token');
    expect(jsonl.report.finish([], 'jsonl')).toBe(1);
    expect(jsonl.stderr()).toBe(
      'stdin:1: Unexpected token\nrivulet process: every input line was malformed (1); plain log lines need --input text\n',
    );

    const text = reportWithStderr(false);
    text.report.malformedLine(1, 'too long');
    text.report.malformedLine(2, 'too long');
    expect(text.report.finish([], 'text')).toBe(1);
    expect(text.stderr()).toBe('stdin:1: too long\nstdin:2: too long\nrivulet process: every input line was malformed (2)\n');
  });

  it('exits 0 when some lines were malformed and some read, and when nothing came in', () => {
    const some = reportWithStderr(false);
    some.report.read = 1;
    some.report.malformedLine(2, 'bad');
    expect(some.report.finish([], 'jsonl')).toBe(0);
    expect(reportWithStderr(false).report.finish([], 'jsonl')).toBe(0);
  });
});

describe('ProcessReport output of entries with long lines', () => {
  it('writes a long line in JSON a piece at a time, byte for byte what formatEntry gives', () => {
    const stdout = new PassThrough();
    const written: Buffer[] = [];
    stdout.on('data', (chunk: Buffer) => written.push(chunk));
    const report = new ProcessReport({ stdin: new PassThrough(), stdout, stderr: new PassThrough() }, true);
    // Escapes throughout, a pair straddling the first cut, a lone surrogate; the line also stands
    // as an extracted value, so its JSON is written twice.
    const escaped = `${'a'.repeat(65_535)}😀${'"\\\u0001é'.repeat(40_000)}\ud800 end`;
    const plain = 'p'.repeat(200_000);
    const entries: Entry[] = [
      { labels: { app: 'x' }, line: 'short', timestamp: 1n, structuredMetadata: [], extracted: {} },
      {
        labels: { app: 'x', line: 'y' },
        line: escaped,
        timestamp: 2n,
        structuredMetadata: [{ name: 'k', value: 'v' }],
        extracted: { copy: escaped, n: 1 },
      },
      { labels: {}, line: plain, timestamp: 3n, structuredMetadata: [], extracted: { copy: plain } },
      { labels: {}, line: 'after', timestamp: 4n, structuredMetadata: [], extracted: {} },
    ];
    for (const format of ['json', 'entry'] as const) {
      written.length = 0;
      for (const e of entries) report.outputEntry(e, format);
      report.flush();
      const expected = entries.map((e) => `${formatEntry(e, format)}\n`).join('');
      expect(Buffer.concat(written).equals(Buffer.from(expected))).toBe(true);
      // Never the whole line's JSON at once.
      expect(Math.max(...written.map((chunk) => chunk.length))).toBeLessThan(3 * 65_536 + 200);
    }
  });
});
