import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { buildPipeline, ingress } from '../../core/pipeline.js';
import { truncate } from '../../operators/index.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

/** Characters of every UTF-8 width (1 to 4 bytes) plus a lone surrogate. */
const mixedWidthChar = fc.constantFrom('a', 'z', '.', '"', '\n', 'é', 'ß', '€', '中', '😀', '\uD800');

function rule(body: string): string {
  return `stage.truncate {\n  rule {\n${body}\n  }\n}`;
}

async function truncatedCounts(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('logs_process_truncated_fields_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [v.labels.field, v.value]));
}

describe('stage.truncate', () => {
  describe('line', () => {
    it('cuts lines over the limit and leaves the rest alone', () => {
      const { entries } = runConfig(rule('limit = "5B"'), [entry('12345'), entry('123456')]);
      expect(entries.map((e) => e.line)).toEqual(['12345', '12345']);
      expect(entries[0]!.extracted).not.toHaveProperty('truncated');
      expect(entries[1]!.extracted.truncated).toBe('line');
    });

    it('lets the suffix eat into the limit', () => {
      const { entries } = runConfig(rule('limit = "10B"\nsuffix = "..."'), [entry('12345678901')]);
      expect(entries[0]!.line).toBe('1234567...');
    });

    it('counts UTF-8 bytes, not characters', () => {
      const { entries } = runConfig(rule('limit = "4B"'), [entry('héllo'), entry('hé'), entry('ééé')]);
      expect(entries.map((e) => e.line)).toEqual(['hél', 'hé', 'éé']);
    });

    it('backs off to the last whole character when the cut falls inside one', () => {
      const { entries } = runConfig(rule('limit = "5B"'), [entry('ab€cd'), entry('a😀bc'), entry('abcd😀')]);
      // € is 3 bytes and 😀 4: the reference would keep 2 and 3 bytes of them as invalid UTF-8.
      expect(entries.map((e) => e.line)).toEqual(['ab€', 'a😀', 'abcd']);
    });

    it('counts a lone surrogate as the three bytes of U+FFFD', () => {
      const { entries } = runConfig(rule('limit = "4B"'), [entry('a\uD800bc')]);
      expect(entries[0]!.line).toBe('a\uD800');
    });
  });

  describe('labels', () => {
    it('cuts every label value, reserved ones included, counting each', async () => {
      const { entries, registry } = runConfig(rule('limit = "3B"\nsource_type = "label"'), [
        entry('l', { app: 'abcdef', env: 'ab', __tenant_id__: 'tenant' }),
      ]);
      expect(entries[0]!.labels).toEqual({ app: 'abc', env: 'ab', __tenant_id__: 'ten' });
      expect(await truncatedCounts(registry)).toEqual({ label: 2 });
    });

    it('cuts only the named labels and ignores names that are absent', () => {
      const { entries } = runConfig(rule('limit = "3B"\nsource_type = "label"\nsources = ["app", "missing"]'), [
        entry('l', { app: 'abcdef', env: 'abcdef' }),
      ]);
      expect(entries[0]!.labels).toEqual({ app: 'abc', env: 'abcdef' });
      expect(entries[0]!.extracted.truncated).toBe('label');
    });

    it('walks a name listed twice twice, as the reference does: cut once, counted again only when a suffix keeps it over the limit', async () => {
      const twice = (suffix: string) =>
        runConfig(rule(`limit = "5B"\nsuffix = "${suffix}"\nsource_type = "label"\nsources = ["a", "a"]`), [
          entry('l', { a: 'abcdefghij' }),
        ]);
      const withSuffix = twice('...');
      expect(withSuffix.entries[0]!.labels).toEqual({ a: 'ab...' });
      expect(await truncatedCounts(withSuffix.registry)).toEqual({ label: 2 });
      const withoutSuffix = twice('');
      expect(withoutSuffix.entries[0]!.labels).toEqual({ a: 'abcde' });
      expect(await truncatedCounts(withoutSuffix.registry)).toEqual({ label: 1 });
    });

    it('leaves the label values seeded into the extracted map untouched', () => {
      const { entries } = runConfig(rule('limit = "3B"\nsource_type = "label"'), [entry('l', { app: 'abcdef' })]);
      expect(entries[0]!.extracted.app).toBe('abcdef');
    });
  });

  describe('structured metadata', () => {
    it('cuts every pair, or every pair of the named ones, keeping their order', async () => {
      const metadata = () => [
        { name: 'a', value: 'long-1' },
        { name: 'b', value: 'long-2' },
        { name: 'a', value: 'long-3' },
      ];
      const all = runConfig(rule('limit = "4B"\nsource_type = "structured_metadata"'), [
        entry('l', {}, { structuredMetadata: metadata() }),
      ]);
      expect(all.entries[0]!.structuredMetadata).toEqual([
        { name: 'a', value: 'long' },
        { name: 'b', value: 'long' },
        { name: 'a', value: 'long' },
      ]);
      expect(await truncatedCounts(all.registry)).toEqual({ structured_metadata: 3 });
      const named = runConfig(rule('limit = "4B"\nsource_type = "structured_metadata"\nsources = ["a"]'), [
        entry('l', {}, { structuredMetadata: metadata() }),
      ]);
      expect(named.entries[0]!.structuredMetadata.map((p) => p.value)).toEqual(['long', 'long-2', 'long']);
    });
  });

  describe('extracted', () => {
    it('counts a key listed twice twice when a suffix keeps its cut value over the limit', async () => {
      const config = rule('limit = "5B"\nsuffix = "..."\nsource_type = "extracted"\nsources = ["k", "k"]');
      const { entries, registry } = runConfig(config, [entry('l', {}, { extracted: { k: 'abcdefghij' } })]);
      expect(entries[0]!.extracted.k).toBe('ab...');
      expect(await truncatedCounts(registry)).toEqual({ extracted: 2 });
    });

    it('cuts only string values', async () => {
      const { entries, registry } = runConfig(rule('limit = "2B"\nsource_type = "extracted"'), [
        entry('l', {}, { extracted: { s: 'abc', n: 12345, b: true, z: null, list: ['abc'] } }),
      ]);
      expect(entries[0]!.extracted).toEqual({ s: 'ab', n: 12345, b: true, z: null, list: ['abc'], truncated: 'extracted' });
      expect(await truncatedCounts(registry)).toEqual({ extracted: 1 });
    });

    it('cuts the named keys only', () => {
      const { entries } = runConfig(rule('limit = "2B"\nsource_type = "extracted"\nsources = ["a"]'), [
        entry('l', {}, { extracted: { a: 'abc', b: 'abc' } }),
      ]);
      expect(entries[0]!.extracted).toEqual({ a: 'ab', b: 'abc', truncated: 'extracted' });
    });

    it('sees a truncated key written by an earlier rule of the same stage', () => {
      const config = 'stage.truncate {\n  rule {\n    limit = "1B"\n  }\n  rule {\n    limit = "2B"\n    source_type = "extracted"\n  }\n}';
      const { entries } = runConfig(config, [entry('abc')]);
      // Rule 1 writes "line"; rule 2 cuts it to "li" and then merges its own kind in.
      expect(entries[0]!.extracted.truncated).toBe('extracted,li,line');
    });
  });

  describe('the truncated key', () => {
    it('lists the kinds cut so far, sorted and comma-joined', () => {
      const config = 'stage.truncate {\n  rule {\n    limit = "1B"\n    source_type = "label"\n  }\n  rule {\n    limit = "1B"\n  }\n}';
      const { entries } = runConfig(config, [entry('ab', { a: 'bc' })]);
      expect(entries[0]!.extracted.truncated).toBe('label,line');
    });

    it('accumulates across chained truncate stages', () => {
      const config =
        'stage.truncate {\n  rule {\n    limit = "1B"\n  }\n}\nstage.truncate {\n  rule {\n    limit = "1B"\n    source_type = "label"\n  }\n}';
      const { entries } = runConfig(config, [entry('ab', { a: 'bc' })]);
      expect(entries[0]!.extracted.truncated).toBe('label,line');
    });

    it('merges an existing string value split on commas as it is, and replaces a non-string one', () => {
      const { entries } = runConfig(rule('limit = "1B"'), [
        entry('ab', {}, { extracted: { truncated: 'zeta,alpha' } }),
        entry('ab', {}, { extracted: { truncated: 7 } }),
        entry('ab', {}, { extracted: { truncated: '' } }),
      ]);
      expect(entries.map((e) => e.extracted.truncated)).toEqual(['alpha,line,zeta', 'line', ',line']);
    });

    it('keeps the earlier kinds through several cutting rules of one stage', () => {
      const config = 'stage.truncate {\n  rule {\n    limit = "1B"\n  }\n  rule {\n    limit = "1B"\n    source_type = "label"\n  }\n}';
      const { entries } = runConfig(config, [entry('ab', { a: 'bc' }, { extracted: { truncated: 'zeta' } })]);
      expect(entries[0]!.extracted.truncated).toBe('label,line,zeta');
    });

    it('is not touched when nothing was cut', () => {
      const { entries } = runConfig(rule('limit = "10B"'), [entry('ab', {}, { extracted: { truncated: 'earlier' } })]);
      expect(entries[0]!.extracted.truncated).toBe('earlier');
    });
  });

  describe('validation', () => {
    it('requires at least one rule', () => {
      expect(() => runConfig('stage.truncate {\n}', [])).toThrow('test.alloy:1:1: stage.truncate: missing required block "rule"');
      expect(() => truncate({ rule: [] })).toThrow('at least one truncate rule must be specified');
    });

    it('requires a limit in every rule', () => {
      expect(() => runConfig('stage.truncate {\n  rule {}\n}', [])).toThrow('missing required attribute "limit"');
    });

    it('rejects a zero limit, a bad size and sources for the line at the attribute, naming no rule', () => {
      expect(() => runConfig(rule('limit = "0B"'), [])).toThrow(/^test\.alloy:3:1: stage\.truncate: limit must be greater than zero$/);
      expect(() => runConfig(rule('limit = "10b"'), [])).toThrow(
        /^test\.alloy:3:1: stage\.truncate: invalid limit: units: unknown unit b in 10b$/,
      );
      expect(() => runConfig(rule('limit = "10B"\nsources = ["app"]'), [])).toThrow(
        /^test\.alloy:4:1: stage\.truncate: sources cannot be set when source_type is 'line'$/,
      );
    });

    it('rejects a suffix as long as the limit or longer, in bytes', () => {
      expect(() => runConfig(rule('limit = "3B"\nsuffix = "..."'), [])).toThrow(
        /^test\.alloy:4:1: stage\.truncate: suffix length cannot be greater than or equal to limit$/,
      );
      expect(() => runConfig(rule('limit = "4B"\nsuffix = "éé"'), [])).toThrow(
        /^test\.alloy:4:1: stage\.truncate: suffix length cannot be greater than or equal to limit$/,
      );
    });

    it('rejects an unknown source_type at the attribute of the rule that has it', () => {
      const config = 'stage.truncate {\n  rule {\n    limit = "1B"\n  }\n  rule {\n    limit = "1B"\n    source_type = "test"\n  }\n}';
      expect(() => runConfig(config, [])).toThrow(/^test\.alloy:7:5: stage\.truncate: unknown source_type: test$/);
    });
  });

  it('never leaves a value over its limit in bytes (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.string({ unit: mixedWidthChar, maxLength: 4 }),
        fc.string({ unit: mixedWidthChar, maxLength: 60 }),
        fc.string({ unit: mixedWidthChar, maxLength: 30 }),
        (limit, suffixCandidate, line, label) => {
          const suffix = Buffer.byteLength(suffixCandidate) < limit ? suffixCandidate : '';
          const stage = truncate({
            rule: [
              { limit: `${limit}B`, suffix, source_type: 'line', sources: [] },
              { limit: `${limit}B`, suffix: '', source_type: 'label', sources: [] },
            ],
          });
          const built = buildPipeline([stage.spec], { clock: new ManualClock(0n), registry: new Registry() });
          const out = built.process!(ingress(entry(line, { a: label })));
          expect(Buffer.byteLength(out!.line)).toBeLessThanOrEqual(limit);
          expect(Buffer.byteLength(out!.labels.a!)).toBeLessThanOrEqual(limit);
          if (Buffer.byteLength(line) <= limit - Buffer.byteLength(suffix)) expect(out!.line).toBe(line);
          else expect(out!.line.endsWith(suffix) && line.startsWith(out!.line.slice(0, out!.line.length - suffix.length))).toBe(true);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
