import fc from 'fast-check';
import type { Registry } from 'prom-client';
import { Registry as PromRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { buildPipeline } from '../../core/pipeline.js';
import { cri, CriTimes, parseCriLine } from '../../operators/cri.js';
import { parseRFC3339Strict } from '../../lib/time/rfc3339-strict.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
// Any Unicode scalar, ASCII-heavy; surrogates stand for invalid UTF-8 decoded as U+FFFD.
const anyChar = fc
  .oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0x10ffff }))
  .map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? '\uFFFD' : String.fromCodePoint(cp)));
const TS = '2019-01-01T01:00:00.000000001Z';
const TS_NS = BigInt(Date.parse('2019-01-01T01:00:00Z')) * 1_000_000n + 1n;
const BEFORE = 1_700_000_000_000_000_000n;

async function counter(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`${name} is not registered`);
  return (await metric.get()).values[0]?.value ?? 0;
}

const flushed = (registry: Registry) => counter(registry, 'logs_process_cri_partial_lines_flushed_total');
const truncated = (registry: Registry) => counter(registry, 'logs_process_cri_lines_truncated_total');
const lines = (entries: readonly Entry[]) => entries.map((e) => e.line);

describe('stage.cri', () => {
  describe('parsing', () => {
    it('extracts flags, stream, content and the raw time, and sets the stream label and timestamp', () => {
      const { entries } = runConfig('stage.cri {}', [entry(`${TS} stderr F message`, { job: 'x' })]);
      expect(entries).toHaveLength(1);
      const [out] = entries;
      expect(out!.line).toBe('message');
      expect(out!.labels).toEqual({ job: 'x', stream: 'stderr' });
      expect(out!.timestamp).toBe(TS_NS);
      expect(out!.extracted).toEqual({ job: 'x', flags: 'F', stream: 'stderr', content: 'message', time: TS });
    });

    it('takes a leading F of the content as the flag', () => {
      expect(parseCriLine(`${TS} stdout Failed x`)).toEqual({ time: TS, stream: 'stdout', partial: false, content: 'ailed x' });
      expect(parseCriLine(`${TS} stdout Fmsg`)).toEqual({ time: TS, stream: 'stdout', partial: false, content: 'msg' });
    });

    it('takes a leading P of the content as a partial flag', () => {
      expect(parseCriLine(`${TS} stdout Partial x`)).toEqual({ time: TS, stream: 'stdout', partial: true, content: 'artial x' });
    });

    it('treats a missing flag as full and consumes nothing', () => {
      expect(parseCriLine('something stderr looks like cri')).toEqual({
        time: 'something',
        stream: 'stderr',
        partial: false,
        content: 'looks like cri',
      });
    });

    it('skips at most one space after the flag', () => {
      expect(parseCriLine(`${TS} stdout F  two`)!.content).toBe(' two');
      expect(parseCriLine(`${TS} stdout F\tx`)!.content).toBe('\tx');
      expect(parseCriLine(`${TS} stdout  two`)!.content).toBe('two');
    });

    it('keeps empty and multi-line content verbatim', () => {
      expect(parseCriLine(`${TS} stdout F`)!.content).toBe('');
      expect(parseCriLine(`${TS} stdout `)!.content).toBe('');
      expect(parseCriLine(`${TS} stdout F a\nb\r\n`)!.content).toBe('a\nb\r\n');
    });

    it('parses a line starting with one space with an empty time token', () => {
      expect(parseCriLine(' stdout F x')).toEqual({ time: '', stream: 'stdout', partial: false, content: 'x' });
    });

    it.each([
      ['no whitespace at all', 'i-am-not-cri'],
      ['a tab after the time', `${TS}\tstdout F x`],
      ['two spaces after the time', `${TS}  stdout F x`],
      ['a no-break space after the time', `${TS}\u00a0stdout F x`],
      ['an unknown stream', `${TS} stdin F x`],
      ['an upper-case stream', `${TS} STDOUT F x`],
      ['a stream without a following space', `${TS} stdout`],
      ['a longer stream word', `${TS} stdoutX F x`],
      ['the empty line', ''],
    ])('does not parse %s', (_what, line) => {
      expect(parseCriLine(line)).toBeUndefined();
    });

    it('passes non-CRI lines through untouched', () => {
      const { entries } = runConfig('stage.cri {}', [entry(`${TS}\tstdout F x`, { job: 'x' })]);
      expect(entries[0]!.line).toBe(`${TS}\tstdout F x`);
      expect(entries[0]!.labels).toEqual({ job: 'x' });
      expect(entries[0]!.extracted).toEqual({ job: 'x' });
      expect(entries[0]!.timestamp).toBe(BEFORE);
    });

    it.each([
      ['not a time', '3242'],
      ['ten fraction digits', '2019-01-01T01:00:00.0000000001Z'],
      ['a lower-case z', '2019-01-01T01:00:00z'],
      ['an offset without colon', '2019-01-01T01:00:00+0000'],
      ['an empty token', ''],
    ])('keeps the old timestamp for %s but still extracts the raw token', (_what, time) => {
      const { entries } = runConfig('stage.cri {}', [entry(`${time} stdout F msg`)]);
      expect(entries[0]!.line).toBe('msg');
      expect(entries[0]!.timestamp).toBe(BEFORE);
      expect(entries[0]!.extracted.time).toBe(time);
    });

    it('honours the zone offset of the time', () => {
      const { entries } = runConfig('stage.cri {}', [entry('2024-01-02T04:04:05.5+01:00 stdout F msg')]);
      expect(entries[0]!.timestamp).toBe(BigInt(Date.parse('2024-01-02T03:04:05.500Z')) * 1_000_000n);
    });

    it('overwrites an existing stream label', () => {
      const { entries } = runConfig('stage.cri {}', [entry(`${TS} stdout F x`, { stream: 'old' })]);
      expect(entries[0]!.labels.stream).toBe('stdout');
    });
  });

  describe('partial lines', () => {
    it('joins partial fragments with the full line that completes them', () => {
      const { entries } = runConfig('stage.cri {}', [
        entry(`${TS} stdout P one `),
        entry(`${TS} stdout P two `),
        entry('2019-01-01T01:00:05Z stdout F three'),
      ]);
      expect(lines(entries)).toEqual(['one two three']);
      const [out] = entries;
      expect(out!.timestamp).toBe(BigInt(Date.parse('2019-01-01T01:00:05Z')) * 1_000_000n);
      expect(out!.extracted).toMatchObject({ flags: 'F', content: 'three', time: '2019-01-01T01:00:05Z' });
    });

    it('keeps a buffer per label set, so stdout and stderr of one file do not mix', () => {
      const { entries } = runConfig('stage.cri {}', [
        entry(`${TS} stdout P out-1 `, { file: 'a' }),
        entry(`${TS} stderr P err-1 `, { file: 'a' }),
        entry(`${TS} stdout P other `, { file: 'b' }),
        entry(`${TS} stderr F err-2`, { file: 'a' }),
        entry(`${TS} stdout F out-2`, { file: 'a' }),
        entry(`${TS} stdout F other-2`, { file: 'b' }),
      ]);
      expect(lines(entries)).toEqual(['err-1 err-2', 'out-1 out-2', 'other other-2']);
      expect(entries.map((e) => e.labels)).toEqual([
        { file: 'a', stream: 'stderr' },
        { file: 'a', stream: 'stdout' },
        { file: 'b', stream: 'stdout' },
      ]);
    });

    it('lets non-CRI lines pass while partials are held', () => {
      const { entries } = runConfig('stage.cri {}', [entry(`${TS} stdout P held `), entry('plain text'), entry(`${TS} stdout F done`)]);
      expect(lines(entries)).toEqual(['plain text', 'held done']);
    });

    it('loses partials still held when the input ends', async () => {
      const { entries, registry } = runConfig('stage.cri {}', [entry(`${TS} stdout P never completed`)]);
      expect(entries).toEqual([]);
      expect(await flushed(registry)).toBe(0);
    });

    it('counts buffered label sets, not fragments, against max_partial_lines', async () => {
      const inputs = Array.from({ length: 10 }, (_, i) => entry(`${TS} stdout P ${i} `));
      const { entries, registry } = runConfig('stage.cri { max_partial_lines = 2 }', [...inputs, entry(`${TS} stdout F end`)]);
      expect(lines(entries)).toEqual(['0 1 2 3 4 5 6 7 8 9 end']);
      expect(await flushed(registry)).toBe(0);
    });

    it('flushes every held entry when max_partial_lines label sets are held, then starts afresh', async () => {
      const { entries, registry } = runConfig('stage.cri { max_partial_lines = 2 }', [
        entry(`${TS} stdout P a1 `, { s: 'a' }),
        entry(`${TS} stdout P b1 `, { s: 'b' }),
        entry(`${TS} stdout P a2 `, { s: 'a' }),
        entry(`${TS} stdout P c1 `, { s: 'c' }),
        entry(`${TS} stdout F a3`, { s: 'a' }),
        entry(`${TS} stdout F c2`, { s: 'c' }),
      ]);
      // a2 finds two label sets held: a1 and b1 leave as they are, a2 starts the new buffer alone.
      expect(lines(entries)).toEqual(['a1 ', 'b1 ', 'a2 a3', 'c1 c2']);
      expect(await flushed(registry)).toBe(2);
    });

    it('with max_partial_lines = 1, a second partial of the same stream flushes the first alone', async () => {
      const { entries, registry } = runConfig('stage.cri { max_partial_lines = 1 }', [
        entry(`${TS} stdout P first `),
        entry(`${TS} stdout P second `),
        entry(`${TS} stdout F third`),
      ]);
      expect(lines(entries)).toEqual(['first ', 'second third']);
      expect(await flushed(registry)).toBe(1);
    });

    it('emits the flushed entries with their own labels, timestamps and extracted values', () => {
      const { entries } = runConfig('stage.cri { max_partial_lines = 1 }', [
        entry(`${TS} stdout P first`, { s: 'a' }),
        entry(`2020-01-01T00:00:00Z stdout P second`, { s: 'b' }),
      ]);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ line: 'first', labels: { s: 'a', stream: 'stdout' }, timestamp: TS_NS });
      expect(entries[0]!.extracted).toMatchObject({ flags: 'P', content: 'first' });
    });
  });

  describe('truncation', () => {
    it('cuts stored partials and merged lines to max_partial_line_size bytes, counting each cut', async () => {
      const { entries, registry } = runConfig('stage.cri {\n max_partial_line_size = 11\n max_partial_line_size_truncate = true\n}', [
        entry(`${TS} stdout P partial line 1 `, { f: 'a' }),
        entry(`${TS} stdout P partial`, { f: 'b' }),
        entry(`${TS} stdout F log finished`, { f: 'a' }),
        entry(`${TS} stdout F full`, { f: 'b' }),
      ]);
      expect(lines(entries)).toEqual(['partial lin', 'partialfull']);
      expect(await truncated(registry)).toBe(2);
    });

    it('never cuts a full line that merged nothing', async () => {
      const { entries, registry } = runConfig('stage.cri {\n max_partial_line_size = 3\n max_partial_line_size_truncate = true\n}', [
        entry(`${TS} stdout F a long full line`),
      ]);
      expect(lines(entries)).toEqual(['a long full line']);
      expect(await truncated(registry)).toBe(0);
    });

    it('empties every stored partial and merged line when the size is left at 0', async () => {
      const { entries, registry } = runConfig('stage.cri { max_partial_line_size_truncate = true }', [
        entry(`${TS} stdout P abc`),
        entry(`${TS} stdout F def`),
      ]);
      expect(lines(entries)).toEqual(['']);
      expect(await truncated(registry)).toBe(2);
    });

    it('ignores max_partial_line_size without the truncate flag', async () => {
      const { entries, registry } = runConfig('stage.cri { max_partial_line_size = 2 }', [
        entry(`${TS} stdout P abc`),
        entry(`${TS} stdout F def`),
      ]);
      expect(lines(entries)).toEqual(['abcdef']);
      expect(await truncated(registry)).toBe(0);
    });

    it('counts bytes, cutting inside a multi-byte character', async () => {
      const { entries, registry } = runConfig('stage.cri {\n max_partial_line_size = 2\n max_partial_line_size_truncate = true\n}', [
        entry(`${TS} stdout P aé`),
        entry(`${TS} stdout F`),
      ]);
      // "aé" is 3 bytes; the stored 2 bytes end inside "é", and an empty completion adds nothing.
      expect(lines(entries)).toEqual(['a\uFFFD']);
      expect(await truncated(registry)).toBe(1);
    });
  });

  describe('metrics and validation', () => {
    it('shows both cri counters at 0 as soon as the stage is built', async () => {
      const registry = new PromRegistry();
      const built = buildPipeline([cri({}).spec], { clock: new ManualClock(0n), registry });
      const text = await registry.metrics();
      expect(text).toContain('logs_process_cri_partial_lines_flushed_total 0');
      expect(text).toContain('logs_process_cri_lines_truncated_total 0');
      built.dispose();
    });

    it('rejects max_partial_lines of 0 or below', () => {
      expect(() => runConfig('stage.cri { max_partial_lines = 0 }', [])).toThrow(
        'test.alloy:1:13: stage.cri: max_partial_lines must be greater than 0',
      );
      expect(() => runConfig('stage.cri { max_partial_lines = -1 }', [])).toThrow('max_partial_lines must be greater than 0');
    });

    it('rejects a negative max_partial_line_size', () => {
      expect(() => runConfig('stage.cri { max_partial_line_size = -1 }', [])).toThrow(
        'max_partial_line_size must be a non-negative integer',
      );
    });

    it('rejects a fractional max_partial_lines', () => {
      expect(() => runConfig('stage.cri { max_partial_lines = 1.5 }', [])).toThrow('expected int');
    });
  });

  describe('properties', () => {
    const content = fc.string({ unit: anyChar, maxLength: 200 });

    it('never loses a byte of a complete (F) line', () => {
      fc.assert(
        fc.property(content, fc.constantFrom('stdout', 'stderr'), (text, stream) => {
          const { entries } = runConfig('stage.cri {}', [entry(`${TS} ${stream} F ${text}`)]);
          expect(entries).toHaveLength(1);
          expect(entries[0]!.line).toBe(text);
          expect(entries[0]!.extracted.content).toBe(text);
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it('joins any partial fragments into exactly their concatenation', () => {
      fc.assert(
        fc.property(fc.array(content, { maxLength: 8 }), content, (fragments, last) => {
          const inputs = [...fragments.map((f) => entry(`${TS} stdout P ${f}`)), entry(`${TS} stdout F ${last}`)];
          const { entries } = runConfig('stage.cri {}', inputs);
          expect(lines(entries)).toEqual([fragments.join('') + last]);
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it('never throws and emits at most what it received, whatever the input', () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.oneof(
              fc.string({ unit: anyChar }),
              content.map((c) => `${TS} stdout P ${c}`),
            ),
            { maxLength: 20 },
          ),
          (raw) => {
            const { entries } = runConfig(
              'stage.cri { max_partial_lines = 2 }',
              raw.map((line) => entry(line)),
            );
            expect(entries.length).toBeLessThanOrEqual(raw.length);
          },
        ),
        { numRuns: NUM_RUNS },
      );
    });
  });
});

describe('stage.cri times', () => {
  it('reads every time as parseRFC3339Strict does, whatever second it kept from the last one', () => {
    const second = fc.constantFrom(
      '2024-05-01T10:00:00',
      '2024-05-01T10:00:01',
      '2024-02-30T10:00:00',
      '1969-12-31T23:59:59',
      '2024-05-01t10:00:00',
    );
    const rest = fc.oneof(
      fc.constantFrom('Z', '.Z', '.1Z', '.123456789Z', '.1234567890Z', '+01:00', '.5+01:00', 'z', '.12a4Z', '', '0Z'),
      fc.stringMatching(/^\.[0-9]{1,10}Z$/),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(second, rest), { minLength: 1, maxLength: 20 }), (times) => {
        const reader = new CriTimes();
        for (const [s, r] of times) expect(reader.parse(s + r)).toBe(parseRFC3339Strict(s + r));
      }),
    );
  });
});
