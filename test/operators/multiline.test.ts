import fc from 'fast-check';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ManualClock, type Clock } from '../../core/clock.js';
import { cloneEntry, labelsKey, type Entry } from '../../core/entry.js';
import { buildPipeline, ingress } from '../../core/pipeline.js';
import { multiline, validateMultiline, type MultilineConfig } from '../../operators/multiline.js';
import { marbles, type MarbleHelpers } from '../../testing/index.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 50);
const MS = 1_000_000n;

const BASE_CONFIG: Partial<MultilineConfig> = { firstline: '^START', max_wait_time: 100n * MS };

/** A marble test of the stage (`BASE_CONFIG` plus `config`), its wall clock starting at the epoch. */
function marbleTest(config: Partial<MultilineConfig>, body: (helpers: MarbleHelpers) => void): void {
  marbles(multiline, { ...BASE_CONFIG, ...config }, body, {
    startNs: 0n,
    assertDeepEqual: (actual, expected) => expect(actual).toEqual(expected),
  });
}

function multilineOperator(config: Partial<MultilineConfig>, clock: Clock) {
  return buildPipeline([multiline({ ...BASE_CONFIG, ...config }).spec], { clock, registry: new Registry() }).operator;
}

/** An input line of stream `stream`, stamped `ms` milliseconds after the epoch. */
function line(text: string, stream = 'a', ms = 0): Entry {
  return entry(text, { stream }, { timestamp: BigInt(ms) * MS });
}

/** The block the stage sends for start line `start`: its entry, as a pipeline hands it over, with the joined text. */
function block(start: Entry, text: string): Entry {
  return { ...ingress(start), line: text };
}

const lines = (entries: readonly Entry[]) => entries.map((e) => e.line);

/**
 * Pushes copies of `inputs` through the stage on a manual clock (the stage owns what it is given,
 * as in a pipeline), waiting `gapsMs[i]` before input i.
 */
function runTimed(config: Partial<MultilineConfig>, inputs: readonly Entry[], gapsMs: readonly number[] = []) {
  const clock = new ManualClock(0n);
  const input = new Subject<Entry>();
  const out: Entry[] = [];
  const sub = multilineOperator(config, clock)(input).subscribe((e) => out.push(e));
  inputs.forEach((e, i) => {
    clock.advanceBy(gapsMs[i] ?? 0);
    input.next(cloneEntry(e));
  });
  return { out, clock, input, sub };
}

describe('stage.multiline', () => {
  describe('blocks', () => {
    it('passes lines before the first start line through, then merges each block', () => {
      const { entries } = runConfig(
        'stage.multiline {\n  firstline = "^START"\n}',
        ['before', 'START 1', 'more', 'START 2', 'START 3'].map((l) => entry(l)),
      );
      expect(lines(entries)).toEqual(['before', 'START 1\nmore', 'START 2', 'START 3']);
    });

    it('sends a block when the next start line of its stream arrives', () => {
      marbleTest({}, ({ hot, expectObservable, stage }) => {
        const v = { s: line('START x', 'a', 1), c: line('cont', 'a', 2), t: line('START y', 'a', 3) };
        expectObservable(stage(hot('sct|', v))).toBe('--x(y|)', {
          x: block(v.s, 'START x\ncont'),
          y: block(v.t, 'START y'),
        });
      });
    });

    it('keeps a block per label set, whatever the order of the labels', () => {
      const ab = entry('START one', { a: '1', b: '2' });
      const ba = entry('two', { b: '2', a: '1' });
      const other = entry('three', { a: '1' });
      const { entries } = runConfig('stage.multiline {\n  firstline = "^START"\n}', [ab, other, ba]);
      expect(lines(entries)).toEqual(['three', 'START one\ntwo']);
    });

    it('merges interleaved streams independently', () => {
      marbleTest({}, ({ hot, expectObservable, stage }) => {
        const v = {
          a: line('START a', 'a'),
          b: line('START b', 'b'),
          c: line('a-1', 'a'),
          d: line('b-1', 'b'),
          e: line('START a2', 'a'),
          f: line('a2-1', 'a'),
        };
        const expected = { A: block(v.a, 'START a\na-1'), B: block(v.b, 'START b\nb-1'), E: block(v.e, 'START a2\na2-1') };
        // At end of input the pending blocks go out least recently active first.
        expectObservable(stage(hot('abcdef|', v))).toBe('----A-(BE|)', expected);
      });
    });

    it('splits a block at max_lines; later parts keep the start line', () => {
      marbleTest({ max_lines: 2 }, ({ hot, expectObservable, stage }) => {
        const v = {
          s: line('START', 'a', 7),
          c: line('c1', 'a', 8),
          d: line('c2', 'a', 9),
          e: line('c3', 'a', 10),
          f: line('c4', 'a', 11),
        };
        const expected = { x: block(v.s, 'START\nc1'), y: block(v.s, 'c2\nc3'), z: block(v.s, 'c4') };
        expectObservable(stage(hot('scdef|', v))).toBe('-x-y-(z|)', expected);
      });
    });

    it('never splits with max_lines = 0', () => {
      const inputs = [line('START'), ...Array.from({ length: 300 }, (_, i) => line(`c${i}`))];
      const { out, input } = runTimed({ max_lines: 0 }, inputs);
      input.complete();
      expect(out).toHaveLength(1);
      expect(out[0]!.line.split('\n')).toHaveLength(301);
    });

    it('carries the start line labels, timestamp, structured metadata and a copy of its extracted map on every part', () => {
      const start = entry(
        'START',
        { stream: 'a' },
        { timestamp: 5n, structuredMetadata: [{ name: 'trace', value: 't1' }], extracted: { level: 'info' } },
      );
      const cont = entry(
        'cont',
        { stream: 'a' },
        { timestamp: 6n, structuredMetadata: [{ name: 'trace', value: 't2' }], extracted: { level: 'debug', other: 1 } },
      );
      const { out } = runTimed({ max_lines: 1 }, [start, cont]);
      expect(out).toEqual([
        {
          labels: { stream: 'a' },
          line: 'START',
          timestamp: 5n,
          structuredMetadata: [{ name: 'trace', value: 't1' }],
          extracted: { level: 'info' },
        },
        {
          labels: { stream: 'a' },
          line: 'cont',
          timestamp: 5n,
          structuredMetadata: [{ name: 'trace', value: 't1' }],
          extracted: { level: 'info' },
        },
      ]);
      out[0]!.extracted.level = 'changed';
      out[0]!.labels.stream = 'changed';
      expect(out[1]!.extracted.level).toBe('info');
      expect(out[1]!.labels.stream).toBe('a');
    });

    it('trims every trailing CR and LF of each line by default', () => {
      const { entries } = runConfig('stage.multiline {\n  firstline = "^START"\n}', [
        entry('START\r\n\r\n'),
        entry(' indented \t\n'),
        entry('last\r'),
      ]);
      expect(lines(entries)).toEqual(['START\n indented \t\nlast']);
    });

    it('joins lines as they are with trim_newlines = false', () => {
      const { entries } = runConfig('stage.multiline {\n  firstline = "^START"\n  trim_newlines = false\n}', [
        entry('START\n'),
        entry('b\r\n'),
        entry('c'),
      ]);
      expect(lines(entries)).toEqual(['START\n\nb\r\n\nc']);
    });

    it('adds no separator after empty text and never sends a block with empty text', () => {
      const config = 'stage.multiline {\n  firstline = "^START|^$"\n}';
      expect(lines(runConfig(config, [entry(''), entry('x'), entry('y')]).entries)).toEqual(['x\ny']);
      expect(lines(runConfig(config, [entry('START'), entry(''), entry('\n')]).entries)).toEqual(['START']);
    });
  });

  describe('max_wait_time', () => {
    it('sends each stream’s block once that stream has been idle for max_wait_time', () => {
      marbleTest({}, ({ hot, expectObservable, stage }) => {
        const v = { x: line('START a', 'a'), y: line('START b', 'b'), z: line('a-1', 'a') };
        const expected = { A: block(v.x, 'START a\na-1'), B: block(v.y, 'START b') };
        // b goes idle at 30 ms + 100 ms; a's last line at 50 ms keeps it until 150 ms.
        expectObservable(stage(hot('x 29ms y 19ms z 249ms |', v))).toBe('130ms B 19ms A 149ms |', expected);
      });
    });

    it('forgets a stream after an idle flush, so its next non-start line passes through', () => {
      marbleTest({}, ({ hot, expectObservable, stage }) => {
        const v = { s: line('START'), c: line('after timeout'), t: line('START again') };
        expectObservable(stage(hot('s 149ms ct 9ms |', v))).toBe('100ms S 49ms c 10ms (T|)', {
          S: block(v.s, 'START'),
          c: ingress(v.c),
          T: block(v.t, 'START again'),
        });
      });
    });

    it('keeps the stream when a line finds its block already idle (a late timer): the line starts a new part of the same start line', () => {
      marbleTest({}, ({ hot, expectObservable, stage }) => {
        const v = { s: line('START', 'a', 1), c: line('cont', 'a', 2) };
        // The input at 100 ms runs before the timer due at the same frame.
        const expected = { S: block(v.s, 'START'), C: block(v.s, 'cont') };
        expectObservable(stage(hot('s 99ms c 200ms |', v))).toBe('100ms S 99ms C 100ms |', expected);
      });
    });

    it('uses one timer for the whole stage, whatever the number of streams', () => {
      const inputs = Array.from({ length: 1000 }, (_, i) => line('START', `s${i}`));
      const { clock, out } = runTimed({}, inputs);
      expect(clock.pendingTimers()).toBe(1);
      clock.advanceBy(100);
      expect(out).toHaveLength(1000);
      expect(clock.pendingTimers()).toBe(0);
    });

    it('waits a max_wait_time longer than a timer can hold', () => {
      const { out, clock } = runTimed({ max_wait_time: 720n * 3600n * 1_000_000_000n }, [line('START')]);
      clock.advanceBy(2_147_483_647);
      expect(out).toHaveLength(0);
      expect(clock.pendingTimers()).toBe(1);
      clock.advanceBy(720 * 3_600_000 - 2_147_483_647);
      expect(lines(out)).toEqual(['START']);
    });

    it('accepts a max_wait_time below a millisecond', () => {
      const { out, clock } = runTimed({ max_wait_time: 500_000n }, [line('START')]);
      clock.advanceBy(0.4);
      expect(out).toHaveLength(0);
      clock.advanceBy(0.1);
      expect(lines(out)).toEqual(['START']);
    });
  });

  describe('end of input and teardown', () => {
    it('flushes every pending block when the input ends, the last block included', () => {
      marbleTest({ max_wait_time: 60_000_000_000n }, ({ hot, expectObservable, stage }) => {
        const v = { s: line('START'), c: line('tail') };
        expectObservable(stage(hot('sc|', v))).toBe('--(B|)', {
          B: block(v.s, 'START\ntail'),
        });
      });
    });

    it('flushes the last block of a multiline nested in a match block when the input ends', () => {
      const config = 'stage.match {\n  selector = "{app=\\"java\\"}"\n  stage.multiline {\n    firstline = "^START"\n  }\n}';
      const { entries } = runConfig(config, [
        entry('START', { app: 'java' }),
        entry('at x', { app: 'java' }),
        entry('other', { app: 'go' }),
      ]);
      expect(lines(entries)).toEqual(['other', 'START\nat x']);
    });

    it('flushes pending blocks before forwarding a source error', () => {
      marbleTest({}, ({ hot, expectObservable, stage }) => {
        const v = { s: line('START') };
        const error = new Error('source failed');
        expectObservable(stage(hot('s#', v, error))).toBe('-(B#)', { B: block(v.s, 'START') }, error);
      });
    });

    it('completes at once when nothing is pending', () => {
      marbleTest({}, ({ hot, expectObservable, stage }) => {
        expectObservable(stage(hot<Entry>('--|'))).toBe('--|');
      });
    });

    it('releases its timer when unsubscribed', () => {
      const { clock, sub } = runTimed({}, [line('START', 'a'), line('START', 'b')]);
      expect(clock.pendingTimers()).toBe(1);
      sub.unsubscribe();
      expect(clock.pendingTimers()).toBe(0);
    });

    it('schedules nothing more when downstream unsubscribes while taking a block', () => {
      const clock = new ManualClock(0n);
      const input = new Subject<Entry>();
      const sub = multilineOperator({}, clock)(input).subscribe(() => sub.unsubscribe());
      input.next(line('START 1'));
      input.next(line('START 2'));
      expect(clock.pendingTimers()).toBe(0);
    });
  });

  describe('validation', () => {
    const base: MultilineConfig = { firstline: '^START', max_lines: 128, max_wait_time: 3_000_000_000n, trim_newlines: true };

    it('rejects an empty firstline', () => {
      expect(() => validateMultiline({ ...base, firstline: '' })).toThrow(
        expect.objectContaining({ field: 'firstline', reason: 'multiline stage config must define `firstline` regular expression' }),
      );
    });

    it('rejects a firstline that does not parse, in Go regexp wording', () => {
      expect(() => validateMultiline({ ...base, firstline: '(' })).toThrow(
        expect.objectContaining({
          field: 'firstline',
          reason: 'multiline stage first line regex compilation error: error parsing regexp: missing closing ): `(`',
        }),
      );
    });

    it('rejects a firstline that is not RE2', () => {
      expect(() => validateMultiline({ ...base, firstline: '(?=x)' })).toThrow(
        expect.objectContaining({
          field: 'firstline',
          reason: expect.stringMatching(/^multiline stage first line regex compilation error: /),
        }),
      );
    });

    it('rejects a max_wait_time that is not positive', () => {
      for (const max_wait_time of [0n, -1n]) {
        expect(() => validateMultiline({ ...base, max_wait_time })).toThrow(
          expect.objectContaining({ field: 'max_wait_time', reason: 'max_wait_time must be greater than 0' }),
        );
      }
    });

    it('rejects a negative max_lines', () => {
      expect(() => validateMultiline({ ...base, max_lines: -1 })).toThrow(
        expect.objectContaining({ field: 'max_lines', reason: 'max_lines must not be negative' }),
      );
    });

    it('reports config errors at the attribute', () => {
      expect(() => runConfig('stage.multiline {\n  firstline = "^S"\n  max_wait_time = "0s"\n}', [])).toThrow(
        'test.alloy:3:3: stage.multiline: max_wait_time must be greater than 0',
      );
      expect(() => runConfig('stage.multiline {\n  max_lines = 10\n}', [])).toThrow('missing required attribute "firstline"');
    });

    it('defaults to 128 lines, 3 s and trimming', () => {
      expect(multiline({ firstline: 'x' }).spec.config).toEqual({
        firstline: 'x',
        max_lines: 128,
        max_wait_time: 3_000_000_000n,
        trim_newlines: true,
      });
    });
  });

  describe('properties', () => {
    const event = fc.record({
      stream: fc.integer({ min: 0, max: 2 }),
      start: fc.boolean(),
      gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 150 })),
    });
    const events = fc.array(event, { minLength: 1, maxLength: 60 });
    const maxLines = fc.constantFrom(0, 1, 2, 3, 5);

    function inputsOf(list: ReadonlyArray<{ stream: number; start: boolean }>): Entry[] {
      return list.map((e, i) => entry(`${e.start ? 'START' : 'line'} ${i}`, { stream: `s${e.stream}` }, { timestamp: BigInt(i) }));
    }

    it('sends every line of every stream, in order', () => {
      fc.assert(
        fc.property(events, maxLines, (list, max_lines) => {
          const inputs = inputsOf(list);
          const { out, input, clock } = runTimed(
            { max_lines },
            inputs,
            list.map((e) => e.gapMs),
          );
          input.complete();
          const byStream = (entries: readonly Entry[]) => {
            const texts = new Map<string, string[]>();
            for (const e of entries) texts.set(labelsKey(e.labels), [...(texts.get(labelsKey(e.labels)) ?? []), e.line]);
            return Object.fromEntries([...texts].map(([k, v]) => [k, v.join('\n')]));
          };
          expect(byStream(out)).toEqual(byStream(inputs));
          if (max_lines > 0) for (const e of out) expect(e.line.split('\n').length).toBeLessThanOrEqual(max_lines);
          expect(clock.pendingTimers()).toBe(0);
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it('stamps every block with a start line of its stream, and passes other lines through as they are', () => {
      fc.assert(
        fc.property(events, maxLines, (list, max_lines) => {
          const inputs = inputsOf(list);
          const { out, input } = runTimed(
            { max_lines },
            inputs,
            list.map((e) => e.gapMs),
          );
          input.complete();
          for (const e of out) {
            const source = inputs[Number(e.timestamp)]!;
            expect(source.labels).toEqual(e.labels);
            if (!source.line.startsWith('START')) expect(e.line).toBe(source.line);
          }
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it('releases every timer on unsubscribe and once all streams are idle', () => {
      fc.assert(
        fc.property(events, maxLines, fc.nat(), (list, max_lines, cut) => {
          const inputs = inputsOf(list);
          const upTo = cut % (inputs.length + 1);
          const idle = runTimed(
            { max_lines },
            inputs,
            list.map((e) => e.gapMs),
          );
          idle.clock.advanceBy(100);
          expect(idle.clock.pendingTimers()).toBe(0);
          const cutShort = runTimed(
            { max_lines },
            inputs.slice(0, upTo),
            list.map((e) => e.gapMs),
          );
          cutShort.sub.unsubscribe();
          expect(cutShort.clock.pendingTimers()).toBe(0);
        }),
        { numRuns: NUM_RUNS },
      );
    });
  });
});
