import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLogfmt } from '../../lib/logfmt.js';
import { t } from '../../lib/config/schema.js';
import { defineStage, unregisterStage } from '../../core/stage.js';
import {
  ansiLine,
  criLine,
  dockerLine,
  entryStream,
  invalidUtf8Line,
  jsonLine,
  labelName,
  labelSet,
  labelValue,
  logfmtLine,
  logLine,
  runStage,
  stackTraceLines,
  stageConfig,
  stageSpec,
  timestampNs,
  unicodeText,
} from '../../testing/index.js';
import { isLegacyLabelName, isValidLabelName, isValidUtf8String } from '../../lib/go/values.js';
import { cri } from '../../operators/index.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 50);
const check = <T>(arb: fc.Arbitrary<T>, predicate: (value: T) => void) =>
  fc.assert(
    fc.property(arb, (value) => {
      predicate(value);
    }),
    { numRuns: NUM_RUNS },
  );

describe('label arbitraries', () => {
  it('generates valid label names under the UTF-8 and the legacy scheme', () => {
    check(labelName(), (name) => expect(isValidLabelName(name) && !name.startsWith('__')).toBe(true));
    check(labelName({ legacy: true }), (name) => expect(isLegacyLabelName(name)).toBe(true));
  });

  it('generates invalid label names under each scheme', () => {
    check(labelName({ invalid: true }), (name) => expect(isValidLabelName(name)).toBe(false));
    check(labelName({ invalid: true, legacy: true }), (name) => expect(isLegacyLabelName(name)).toBe(false));
  });

  it('generates label values that are UTF-8 (or, when asked, are not)', () => {
    check(labelValue(), (value) => expect(value !== '' && isValidUtf8String(value)).toBe(true));
    check(labelValue({ invalid: true }), (value) => expect(isValidUtf8String(value)).toBe(false));
  });

  it('generates label sets of own keys within the size asked', () => {
    check(labelSet({ minSize: 1, maxSize: 3 }), (labels) => {
      const names = Object.keys(labels);
      expect(names.length).toBeGreaterThanOrEqual(1);
      expect(names.length).toBeLessThanOrEqual(3);
      for (const name of names) expect(Object.hasOwn(labels, name)).toBe(true);
    });
  });
});

describe('log line arbitraries', () => {
  it('writes JSON objects', () => {
    check(jsonLine(), (line) => expect(typeof JSON.parse(line)).toBe('object'));
  });

  it('writes logfmt that decodes without error', () => {
    check(logfmtLine(), (line) => expect(decodeLogfmt(line).error).toBeUndefined());
  });

  it('writes CRI lines that stage.cri parses', () => {
    check(criLine(), (line) => {
      const [out] = runStage(cri, {}, [{ labels: {}, line, timestamp: 0n, structuredMetadata: [], extracted: {} }]).outputs;
      // A partial line is held; a full one comes out parsed.
      if (out) expect(out.extracted.flags).toBe('F');
    });
  });

  it('writes Docker json-file records', () => {
    check(dockerLine(), (line) => expect(Object.keys(JSON.parse(line))).toEqual(['log', 'stream', 'time']));
  });

  it('writes terminal escapes only through ESC [ or ESC ] sequences and CSI', () => {
    check(ansiLine(), (line) =>
      expect(line.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007|\u009b[0-9;]*m/g, '')).not.toMatch(/[\u001b\u009b]/),
    );
  });

  it('writes stack traces whose first line starts the trace', () => {
    check(stackTraceLines(), (lines) => expect(lines[0]).toMatch(/^(Exception in thread|panic:|Traceback)/));
  });

  it('decodes bytes that are not UTF-8 to U+FFFD, never to a lone surrogate', () => {
    check(invalidUtf8Line(), (line) => {
      expect(line).toContain('\ufffd');
      expect(isValidUtf8String(line)).toBe(true);
    });
  });

  it('writes Unicode edge cases and lines of every kind as valid UTF-16', () => {
    check(unicodeText(), (line) => expect(isValidUtf8String(line)).toBe(true));
    check(logLine(), (line) => expect(typeof line).toBe('string'));
  });
});

describe('timestamps and streams', () => {
  it('keeps timestamps within the bounds asked', () => {
    check(timestampNs({ min: 10n, max: 20n }), (ns) => expect(ns >= 10n && ns <= 20n).toBe(true));
  });

  it('spreads entries over a few streams with arrival times that never go back', () => {
    check(entryStream({ maxLength: 10 }), (items) => {
      for (let i = 1; i < items.length; i++) expect(items[i]!.atMs).toBeGreaterThanOrEqual(items[i - 1]!.atMs);
      expect(new Set(items.map((i) => JSON.stringify(i.entry.labels))).size).toBeLessThanOrEqual(3);
    });
  });
});

/** A stage whose schema has every field kind and a nested block, and no validation of its own. */
const everyKind = defineStage<Record<string, unknown>>({
  name: 'kit_every_kind',
  doc: 'Schema coverage for stageConfig.',
  fields: {
    text: { kind: t.string, required: true, doc: 'A string.' },
    mode: { kind: t.string, default: 'a', oneOf: ['a', 'b'], doc: 'One of a few values.' },
    ratio: { kind: t.number, doc: 'A number.' },
    count: { kind: t.int, default: 3, doc: 'An integer.' },
    on: { kind: t.bool, default: false, doc: 'A boolean.' },
    wait: { kind: t.duration, default: 1_000_000_000n, doc: 'A duration.' },
    names: { kind: t.list(t.string), default: [], doc: 'A list.' },
    pairs: { kind: t.map(t.string), default: {}, doc: 'A map.' },
    anything: { kind: t.any, doc: 'Any value.' },
  },
  blocks: {
    rule: {
      doc: 'A repeated nested block.',
      multiple: true,
      required: true,
      fields: { limit: { kind: t.int, required: true, doc: 'An integer.' }, note: { kind: t.string, default: '', doc: 'A string.' } },
    },
  },
  build: () => ({ kind: 'map', process: (entry) => entry }),
});
afterAll(() => unregisterStage('kit_every_kind'));

describe('stageConfig', () => {
  it('writes valid configs whose text and object decode to the same config', () => {
    check(stageConfig(everyKind, { valid: true }), ({ text, object }) => {
      expect(stageSpec(everyKind, text).config).toEqual(stageSpec(everyKind, object!).config);
    });
  });

  it('writes invalid configs the decoder rejects, each saying what was broken', () => {
    check(stageConfig(everyKind, { valid: false }), ({ text, invalid }) => {
      expect(invalid).toMatch(
        /^(unknown (attribute|block)|attribute "\w+" (has a value of the wrong type|written twice)|required (attribute|block) "\w+" missing)/,
      );
      expect(() => stageSpec(everyKind, text)).toThrow(/^stage\.alloy:\d+:\d+: stage\.kit_every_kind/);
    });
  });

  it('uses the arbitraries given for particular fields, nested ones by block and name', () => {
    check(stageConfig(everyKind, { valid: true, fields: { text: fc.constant('fixed'), 'rule.limit': fc.constant(7) } }), ({ object }) => {
      expect(object!.text).toBe('fixed');
      for (const rule of object!.rule as Array<{ limit: number }>) expect(rule.limit).toBe(7);
    });
  });

  it('writes a config as text in the config language', () => {
    const [sample] = fc.sample(stageConfig(everyKind, { valid: true, fields: { text: fc.constant('a "quoted"\nline') } }), {
      numRuns: 1,
      seed: 3,
    });
    expect(sample!.text.split('\n')[0]).toBe('stage.kit_every_kind {');
    expect(sample!.text).toContain('  text = "a \\"quoted\\"\\nline"\n');
    expect(sample!.text).toMatch(/\n {2}rule \{\n {4}limit = -?\d+\n/);
  });
});
