import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRegex } from '../../lib/regex/index.js';
import { regex } from '../../operators/regex.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
/** Any UTF-16 text, lone surrogates included. */
const anyText = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units));

/** A config with the expression written as a config-language string. */
function stage(expression: string, extra = ''): string {
  return `stage.regex {\n  expression = ${JSON.stringify(expression)}\n${extra}\n}`;
}

function extract(config: string, line: string, labels: Record<string, string> = {}, extracted: Record<string, unknown> = {}) {
  return runConfig(config, [entry(line, labels, { extracted })]).entries[0]!;
}

describe('stage.regex', () => {
  it('extracts the named groups of the first match anywhere in the line', () => {
    expect(extract(stage('(?P<n>\\d+)-(?P<m>\\d+)'), 'a 1-2 b 3-4').extracted).toEqual({ n: '1', m: '2' });
  });

  it('stores a named group that did not take part in the match as an empty string', () => {
    expect(extract(stage('(?P<a>x)?(?P<b>y)'), 'y').extracted).toEqual({ a: '', b: 'y' });
  });

  it('writes a name shared by several groups once per group, in order, so the last group wins', () => {
    // Go accepts repeated names; "404" leaves the second `code` out, which then writes "".
    const config = stage('(?:(?P<code>\\d{3})|(?P<code>[A-Z_]+))', '  labels_from_groups = true');
    expect(extract(config, '404')).toMatchObject({ extracted: { code: '' }, labels: { code: '' } });
    expect(extract(config, 'NOT_FOUND')).toMatchObject({ extracted: { code: 'NOT_FOUND' }, labels: { code: 'NOT_FOUND' } });
    expect(extract(stage('(?P<v>\\w+)=(?P<v>\\w+)'), 'a=b').extracted).toEqual({ v: 'b' });
  });

  it('ignores unnamed groups', () => {
    expect(extract(stage('(\\w+) (?P<second>\\w+)'), 'one two').extracted).toEqual({ second: 'two' });
  });

  it('does nothing when the expression does not match', () => {
    expect(extract(stage('^(?P<a>\\d+)$'), 'abc').extracted).toEqual({});
  });

  it('honours RE2 inline flags', () => {
    expect(extract(stage('(?i)(?P<bad>error|fatal)'), 'A Terrible Error').extracted).toEqual({ bad: 'Error' });
  });

  it('reads the source as text, and does nothing when it is missing or not convertible', () => {
    const config = stage('^(?P<int>\\d+)\\.(?P<frac>\\d+)$', '  source = "n"');
    expect(extract(config, 'l', {}, { n: 12.5 }).extracted).toEqual({ n: 12.5, int: '12', frac: '5' });
    expect(extract(config, '1.2', {}, { n: null }).extracted).toEqual({ n: null });
    expect(extract(config, '1.2', {}, { n: [1] }).extracted).toEqual({ n: [1] });
    expect(extract(config, '1.2').extracted).toEqual({});
    expect(extract(stage('^(?P<v>t.*)$', '  source = "b"'), 'l', {}, { b: true }).extracted).toEqual({ b: true, v: 'true' });
  });

  it('sets labels with labels_from_groups, overriding existing ones and setting empty groups', () => {
    const out = extract(stage('(?P<level>[A-Z]+)(?P<code>\\d+)?', '  labels_from_groups = true'), 'WARN x', { level: 'old', job: 'j' });
    expect(out.labels).toEqual({ level: 'WARN', code: '', job: 'j' });
  });

  it('reports configuration errors with the reference texts', () => {
    expect(() => runConfig(stage(''), [])).toThrow('test.alloy:2:3: stage.regex: expression is required');
    expect(() => runConfig(stage('(?P<a>x)', '  source = ""'), [])).toThrow('test.alloy:3:3: stage.regex: empty source');
    expect(() => runConfig(stage('(?P<ts[0-9]+).*'), [])).toThrow(
      /^test\.alloy:2:17: stage\.regex: could not compile regular expression: error parsing regexp: invalid named capture: `\(\?P<ts\[0-9\]\+\)\.\*`$/,
    );
    expect(() => regex({ expression: '(a)\\1' })).toThrow(
      /^stage\.regex: could not compile regular expression: error parsing regexp: invalid escape sequence: `\\1`$/,
    );
    expect(() => regex({ expression: '(?=a)' })).toThrow(
      /^stage\.regex: could not compile regular expression: error parsing regexp: invalid or unsupported Perl syntax: `\(\?=`$/,
    );
    expect(() => runConfig('stage.regex {}', [])).toThrow('test.alloy:1:1: stage.regex: missing required attribute "expression"');
  });

  const names = ['a', 'b', 'c', 'd'];
  const piece = fc.constantFrom('\\d+', '[a-z]*', 'x', '.', '\\s', 'y|z', '-', '[^ ]+?');
  const generatedExpression = fc
    .array(fc.tuple(fc.constantFrom('named', 'unnamed', 'bare', 'optional'), piece), { minLength: 1, maxLength: 4 })
    .map((parts) =>
      parts
        .map(([kind, body], i) =>
          kind === 'named'
            ? `(?P<${names[i]}>${body})`
            : kind === 'optional'
              ? `(?P<${names[i]}>${body})?`
              : kind === 'unnamed'
                ? `(${body})`
                : body,
        )
        .join(''),
    );
  const line = fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[a-z0-9 xyz-]{0,12}$/));

  it('with labels_from_groups sets exactly the named groups when it matches, and nothing otherwise (property)', () => {
    fc.assert(
      fc.property(generatedExpression, line, (expression, text) => {
        const groupNames = compileRegex(expression).groupNames.filter((n): n is string => !!n);
        const matched = compileRegex(expression).test(text);
        const out = extract(stage(expression, '  labels_from_groups = true'), text, { job: 'j' });
        const { job: _job, ...extracted } = out.extracted;
        expect(Object.keys(extracted).sort()).toEqual(matched ? [...groupNames].sort() : []);
        expect(out.labels).toEqual({ job: 'j', ...extracted });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('never throws, whatever the expression and the input (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), anyText, (expression, text) => {
        let config: string;
        try {
          regex({ expression });
          config = stage(expression);
        } catch {
          return;
        }
        expect(extract(config, text).line).toBe(text);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
