import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePattern } from '../../lib/logql/pattern.js';
import { pattern } from '../../operators/pattern.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
/** Any UTF-16 text, lone surrogates included. */
const anyText = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units));

function extract(config: string, line: string, labels: Record<string, string> = {}, extracted: Record<string, unknown> = {}) {
  return runConfig(config, [entry(line, labels, { extracted })]).entries[0]!;
}

describe('stage.pattern', () => {
  it('extracts named captures and skips <_>', () => {
    const out = extract('stage.pattern { pattern = "<ip> - <_> \\"<method> <path> <_>\\"" }', '10.0.0.1 - frank "GET /x HTTP/1.1"');
    expect(out.extracted).toEqual({ ip: '10.0.0.1', method: 'GET', path: '/x' });
  });

  it('returns a partial result when a literal is missing: the capture takes the rest and later ones are absent', () => {
    expect(extract('stage.pattern { pattern = "<a> x <b> y <c>" }', '1 x 2').extracted).toEqual({ a: '1', b: '2' });
  });

  it('ignores text after a trailing literal', () => {
    expect(extract('stage.pattern { pattern = "[<level>] " }', '[INFO] started [x]').extracted).toEqual({ level: 'INFO' });
  });

  it('does nothing on an empty input or when the leading literal is not a prefix', () => {
    expect(extract('stage.pattern { pattern = "<a>" }', '').extracted).toEqual({});
    expect(extract('stage.pattern { pattern = "HTTP/<v>" }', 'http/1.1').extracted).toEqual({});
  });

  it('reads the source as text, and does nothing when it is missing or null', () => {
    const config = 'stage.pattern {\n  pattern = "<int>.<frac>"\n  source = "n"\n}';
    expect(extract(config, 'l', {}, { n: 12.5 }).extracted).toEqual({ n: 12.5, int: '12', frac: '5' });
    expect(extract(config, '1.2', {}, { n: null }).extracted).toEqual({ n: null });
    expect(extract(config, '1.2').extracted).toEqual({});
  });

  it('sets labels with labels_from_groups, overriding existing ones, including empty captures', () => {
    const out = extract('stage.pattern {\n  pattern = "<a> <b>"\n  labels_from_groups = true\n}', 'x ', { a: 'old' });
    expect(out.labels).toEqual({ a: 'x', b: '' });
    expect(out.extracted).toEqual({ a: 'x', b: '' });
  });

  it('skips label values that are not valid UTF-8 but still extracts them', () => {
    const out = extract('stage.pattern {\n  pattern = "<a> <b>"\n  labels_from_groups = true\n}', '\ud800 ok');
    expect(out.labels).toEqual({ b: 'ok' });
    expect(out.extracted).toEqual({ a: '\ud800', b: 'ok' });
  });

  it('reports configuration errors with the reference texts', () => {
    expect(() => runConfig('stage.pattern {\n  pattern = ""\n}', [])).toThrow('test.alloy:2:3: stage.pattern: pattern is required');
    expect(() => runConfig('stage.pattern {\n  pattern = "<a>"\n  source = ""\n}', [])).toThrow(
      'test.alloy:3:3: stage.pattern: empty source',
    );
    expect(() => runConfig('stage.pattern {\n  pattern = "<_> <_>"\n}', [])).toThrow(
      'test.alloy:2:3: stage.pattern: failed to parse pattern: at least one capture is required',
    );
    expect(() => pattern({ pattern: '<a><b>' })).toThrow(
      "stage.pattern: failed to parse pattern: found consecutive capture '<a><b>': invalid expression",
    );
    expect(() => runConfig('stage.pattern {}', [])).toThrow('test.alloy:1:1: stage.pattern: missing required attribute "pattern"');
  });

  it('never throws and only writes names of the pattern (property)', () => {
    const token = fc.oneof(fc.constantFrom('<a>', '<b>', '<c>', '<_>', '<1x>', '< a>', '<'), fc.string({ minLength: 1, maxLength: 3 }));
    const validPattern = fc
      .array(token, { minLength: 1, maxLength: 8 })
      .map((t) => t.join(''))
      .filter((p) => {
        try {
          parsePattern(p);
          return true;
        } catch {
          return false;
        }
      });
    fc.assert(
      fc.property(validPattern, anyText, fc.boolean(), (text, line, asLabels) => {
        const names = parsePattern(text).names;
        const out = extract(`stage.pattern {\n  pattern = ${JSON.stringify(text)}\n  labels_from_groups = ${asLabels}\n}`, line, {
          job: 'j',
        });
        for (const key of Object.keys(out.extracted)) expect(key === 'job' || names.includes(key)).toBe(true);
        for (const key of Object.keys(out.labels)) expect(key === 'job' || names.includes(key)).toBe(true);
        expect(out.line).toBe(line);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
