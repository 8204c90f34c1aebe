import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { buildPipeline, ingress } from '../../core/pipeline.js';
import { doesNotTouch, entryStream, neverAddsEntries, preservesOrder } from '../../testing/index.js';
import { drop } from '../../operators/index.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const NOW = 1_700_000_000_000_000_000n;
const HOUR = 3_600_000_000_000n;

async function droppedCount(registry: Registry, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('logs_process_dropped_lines_total')!.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

describe('stage.drop', () => {
  describe('longer_than', () => {
    it('drops lines strictly longer than the limit, counting UTF-8 bytes', () => {
      const { entries } = runConfig('stage.drop { longer_than = "4B" }', [entry('abcd'), entry('abcde'), entry('héé'), entry('hé')]);
      expect(entries.map((e) => e.line)).toEqual(['abcd', 'hé']);
    });

    it('reads base-2 sizes with units, decimals and composites', () => {
      const line = 'x'.repeat(1537);
      expect(runConfig('stage.drop { longer_than = "1.5KiB" }', [entry(line)]).entries).toHaveLength(0);
      expect(runConfig('stage.drop { longer_than = "1KB513B" }', [entry(line)]).entries).toHaveLength(1);
    });

    it('treats a zero size as not set', () => {
      expect(() => runConfig('stage.drop { longer_than = "0" }', [])).toThrow(
        'drop stage config must contain at least one of `source`, `expression`, `older_than` or `longer_than`',
      );
    });

    it('rejects a bare number, a lowercase unit and SI kB at the attribute', () => {
      expect(() => runConfig('stage.drop {\n  longer_than = "10"\n}', [])).toThrow(
        'test.alloy:2:3: stage.drop: units: unknown unit  in 10',
      );
      expect(() => runConfig('stage.drop { longer_than = "10b" }', [])).toThrow('stage.drop: units: unknown unit b in 10b');
      expect(() => runConfig('stage.drop { longer_than = "1kB" }', [])).toThrow('stage.drop: units: unknown unit kB in 1kB');
    });
  });

  describe('older_than', () => {
    it('drops entries strictly older than the injected clock minus the duration', () => {
      const { entries } = runConfig(
        'stage.drop { older_than = "1h" }',
        [
          entry('old', {}, { timestamp: NOW - HOUR - 1n }),
          entry('edge', {}, { timestamp: NOW - HOUR }),
          entry('new', {}, { timestamp: NOW }),
        ],
        { startNs: NOW },
      );
      expect(entries.map((e) => e.line)).toEqual(['edge', 'new']);
    });

    it('follows the clock as it advances', () => {
      const clock = new ManualClock(NOW);
      const built = buildPipeline([drop({ older_than: 1_000_000_000n }).spec], { clock, registry: new Registry() });
      const e = () => ingress(entry('x', {}, { timestamp: NOW }));
      expect(built.process!(e())).not.toBeNull();
      clock.advanceBy(1001);
      expect(built.process!(e())).toBeNull();
    });
  });

  describe('source', () => {
    it('drops on presence alone when no value or expression is set, even for null or ""', () => {
      const { entries } = runConfig('stage.drop { source = "k" }', [
        entry('null', {}, { extracted: { k: null } }),
        entry('empty', {}, { extracted: { k: '' } }),
        entry('absent', {}, { extracted: { other: 'x' } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['absent']);
    });

    it('needs every listed key present', () => {
      const { entries } = runConfig('stage.drop { source = "a,b" }', [
        entry('both', {}, { extracted: { a: 1, b: 2 } }),
        entry('one', {}, { extracted: { a: 1 } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['one']);
    });

    it('splits the list on commas without trimming spaces', () => {
      const { entries } = runConfig('stage.drop { source = "a, b" }', [
        entry('trimmed', {}, { extracted: { a: 1, b: 2 } }),
        entry('raw', {}, { extracted: { a: 1, ' b': 2 } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['trimmed']);
    });

    it('does not take inherited object properties for present keys', () => {
      const { entries } = runConfig('stage.drop { source = "toString" }', [entry('x')]);
      expect(entries).toHaveLength(1);
    });

    it('sees labels through the extracted map seeded at ingress', () => {
      const { entries } = runConfig('stage.drop {\n  source = "app"\n  value = "noisy"\n}', [
        entry('a', { app: 'noisy' }),
        entry('b', { app: 'calm' }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['b']);
    });
  });

  describe('value', () => {
    it('compares the stringified source exactly, not as a pattern', () => {
      const { entries } = runConfig('stage.drop {\n  source = "k"\n  value = "a.c"\n}', [
        entry('literal', {}, { extracted: { k: 'a.c' } }),
        entry('pattern', {}, { extracted: { k: 'abc' } }),
        entry('longer', {}, { extracted: { k: 'xa.cx' } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['pattern', 'longer']);
    });

    it('stringifies numbers and booleans the Go way', () => {
      const { entries } = runConfig('stage.drop {\n  source = "k"\n  value = "1000000000000000000000"\n}', [
        entry('big', {}, { extracted: { k: 1e21 } }),
      ]);
      expect(entries).toHaveLength(0);
      expect(
        runConfig('stage.drop {\n  source = "k"\n  value = "true"\n}', [entry('b', {}, { extracted: { k: true } })]).entries,
      ).toHaveLength(0);
    });

    it('joins present sources with the separator, skipping absent ones', () => {
      const config = 'stage.drop {\n  source = "a,b,c"\n  separator = "|"\n  value = "1|3"\n}';
      const { entries } = runConfig(config, [
        entry('skips b', {}, { extracted: { a: 1, c: 3 } }),
        entry('all', {}, { extracted: { a: 1, b: 2, c: 3 } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['all']);
    });

    it('uses ";" when the separator is empty', () => {
      const { entries } = runConfig('stage.drop {\n  source = "a,b"\n  separator = ""\n  value = "1;2"\n}', [
        entry('x', {}, { extracted: { a: 1, b: 2 } }),
      ]);
      expect(entries).toHaveLength(0);
    });

    it('keeps the entry when a present source does not convert to text', () => {
      const { entries } = runConfig('stage.drop {\n  source = "a,b"\n  expression = ".*"\n}', [
        entry('null', {}, { extracted: { a: 'x', b: null } }),
        entry('list', {}, { extracted: { a: [1] } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['null', 'list']);
    });
  });

  describe('expression', () => {
    it('searches the line unanchored when there is no source', () => {
      const { entries } = runConfig('stage.drop { expression = "err(or)?" }', [entry('an error here'), entry('fine')]);
      expect(entries.map((e) => e.line)).toEqual(['fine']);
    });

    it('matches "^$" when none of the sources is present', () => {
      const { entries } = runConfig('stage.drop {\n  source = "a,b"\n  expression = "^$"\n}', [
        entry('none'),
        entry('some', {}, { extracted: { a: 'x' } }),
      ]);
      expect(entries.map((e) => e.line)).toEqual(['some']);
    });

    it('uses RE2 syntax', () => {
      const { entries } = runConfig('stage.drop { expression = "(?P<n>\\\\d+)x" }', [entry('12x'), entry('x')]);
      expect(entries.map((e) => e.line)).toEqual(['x']);
    });
  });

  it('ANDs every configured condition', () => {
    const config = 'stage.drop {\n  source = "k"\n  expression = "v"\n  older_than = "1h"\n  longer_than = "3B"\n}';
    const old = NOW - 2n * HOUR;
    const { entries } = runConfig(
      config,
      [
        entry('all!', {}, { timestamp: old, extracted: { k: 'v' } }),
        entry('new!', {}, { timestamp: NOW, extracted: { k: 'v' } }),
        entry('ab', {}, { timestamp: old, extracted: { k: 'v' } }),
        entry('nok!', {}, { timestamp: old, extracted: { k: 'w' } }),
      ],
      { startNs: NOW },
    );
    expect(entries.map((e) => e.line)).toEqual(['new!', 'ab', 'nok!']);
  });

  it('counts drops under drop_counter_reason, an empty one meaning drop_stage', async () => {
    const custom = runConfig('stage.drop {\n  expression = "x"\n  drop_counter_reason = "noise"\n}', [entry('x'), entry('x'), entry('y')]);
    expect(await droppedCount(custom.registry, 'noise')).toBe(2);
    const empty = runConfig('stage.drop {\n  expression = "x"\n  drop_counter_reason = ""\n}', [entry('x')]);
    expect(await droppedCount(empty.registry, 'drop_stage')).toBe(1);
  });

  describe('validation', () => {
    it('needs one of source, expression, older_than or longer_than', () => {
      expect(() => runConfig('stage.drop {\n  value = "x"\n  separator = ","\n}', [])).toThrow(
        'test.alloy:1:1: stage.drop: drop stage config must contain at least one of `source`, `expression`, `older_than` or `longer_than`',
      );
    });

    it('rejects value together with expression', () => {
      expect(() => runConfig('stage.drop {\n  source = "a"\n  value = "x"\n  expression = "y"\n}', [])).toThrow(
        'stage.drop: drop stage config error, `value` and `expression` cannot both be defined at the same time',
      );
    });

    it('rejects value without source', () => {
      expect(() => runConfig('stage.drop {\n  expression = ""\n  longer_than = "1B"\n  value = "x"\n}', [])).toThrow(
        'test.alloy:4:3: stage.drop: drop stage config must contain `source` if `value` is specified',
      );
    });

    it('rejects an expression that is not RE2', () => {
      expect(() => runConfig('stage.drop {\n  expression = "(?P<ts[0-9]+).*"\n}', [])).toThrow(
        'test.alloy:2:17: stage.drop: drop stage regex compilation error: error parsing regexp: invalid named capture: `(?P<ts[0-9]+).*`',
      );
      expect(() => drop({ expression: '(?=x)' })).toThrow(/drop stage regex compilation error/);
    });
  });

  it('never adds entries and passes kept ones unchanged and in order (property)', () => {
    const extractedValue = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null));
    const inputs = entryStream({
      streams: fc.constant([{}]),
      line: fc.string({ maxLength: 12 }),
      extracted: fc.dictionary(fc.constantFrom('a', 'b'), extractedValue),
    });
    const configs = fc.constantFrom(
      'stage.drop { longer_than = "5B" }',
      'stage.drop { source = "a" }',
      'stage.drop {\n  source = "a,b"\n  expression = "1"\n}',
      'stage.drop { expression = "^a" }',
    );
    const options = { inputs, numRuns: NUM_RUNS };
    neverAddsEntries(drop, configs, options);
    preservesOrder(drop, configs, options);
    doesNotTouch(drop, configs, ['labels', 'line', 'timestamp', 'structuredMetadata', 'extracted'], options);
  });
});
