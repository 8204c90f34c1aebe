import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { buildPipeline } from '../../core/pipeline.js';
import * as templateEngine from '../../lib/template/index.js';
import { stringify } from '../../lib/go/values.js';
import { replace } from '../../operators/replace.js';
import { entry, runConfig } from '../support/run-stages.js';

// Counts parses so a test can show the replacement is compiled per stage, never per entry.
vi.mock('../../lib/template/index.js', async (importOriginal) => {
  const engine = await importOriginal<typeof import('../../lib/template/index.js')>();
  return { ...engine, parseTemplate: vi.fn(engine.parseTemplate) };
});

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

/** The extracted map as the text each value converts to. */
const textOf = (extracted: Record<string, unknown>) => Object.fromEntries(Object.entries(extracted).map(([k, v]) => [k, stringify(v)]));

/** A stage.replace block with the expression and replacement written as config strings. */
function stage(expression: string, replacement: string, source?: string): string {
  const lines = ['stage.replace {', `  expression = ${JSON.stringify(expression)}`, `  replace = ${JSON.stringify(replacement)}`];
  if (source !== undefined) lines.push(`  source = ${JSON.stringify(source)}`);
  return [...lines, '}'].join('\n');
}

/** Runs one entry and returns it. */
function run(config: string, line: string, extracted: Record<string, unknown> = {}, labels: Record<string, string> = {}) {
  return runConfig(config, [entry(line, labels, { extracted })]).entries[0]!;
}

describe('stage.replace: splicing', () => {
  it('rewrites only the capture groups and keeps the rest of the match', () => {
    expect(run(stage('user=(\\w+) id=\\d+', '***'), 'a user=bob id=7 b').line).toBe('a user=*** id=7 b');
  });

  it('changes nothing for an expression without capture groups', () => {
    const out = run(stage('user=\\w+', '***'), 'a user=bob');
    expect(out.line).toBe('a user=bob');
    expect(out.extracted).toEqual({});
  });

  it('processes every non-overlapping match', () => {
    expect(run(stage('(\\d)', '<{{ .Value }}>'), 'a1b2c3').line).toBe('a<1>b<2>c<3>');
  });

  it('replaces empty matches too, skipping one right after the previous match', () => {
    expect(run(stage('(x*)', '-'), 'abc').line).toBe('-a-b-c-');
    expect(run(stage('(a*)', '<{{ .Value }}>'), 'baaac').line).toBe('<>b<aaa>c<>');
  });

  it('deletes the captured text when replace is empty or absent', () => {
    expect(run(stage('(\\s+)', ''), 'a  b c').line).toBe('abc');
    expect(run('stage.replace {\n  expression = "(b)"\n}', 'abc').line).toBe('ac');
  });

  it('splices the outer group of nested groups, while the inner ones are still rendered and stored', () => {
    const out = run(stage('(?P<outer>a(?P<inner>b))c', '{{ .Value | ToUpper }}'), 'xabcx');
    expect(out.line).toBe('xABcx');
    expect(out.extracted).toEqual({ outer: 'AB', inner: 'B' });
  });

  it('skips a group that did not take part in the match', () => {
    expect(run(stage('(a)?(b)', '[{{ .Value }}]'), 'b ab').line).toBe('[b] [a][b]');
  });

  it('works on UTF-16 text consistently', () => {
    expect(run(stage('(é+)', '{{ len .Value }}'), 'aééb').line).toBe('a4b');
  });
});

describe('stage.replace: extracted values', () => {
  it('stores each named group of the first match with its rendering', () => {
    const out = run(stage('(?P<d>\\d)', '[{{ .Value }}]'), '1 2');
    expect(out.line).toBe('[1] [2]');
    expect(out.extracted).toEqual({ d: '[1]' });
  });

  it('stores a named group absent from the first match only when some group rendered the empty text', () => {
    expect(run(stage('(?P<a>x)?(?P<b>y)', '<{{ .Value }}>'), 'y').extracted).toEqual({ b: '<y>' });
    const quirk = run(stage('(?P<a>x)?(?P<e>y*)', '<{{ .Value }}>'), 'q');
    expect(quirk.line).toBe('<>q<>');
    expect(quirk.extracted).toEqual({ a: '<>', e: '<>' });
  });

  it('with a name shared by several groups, stores the last one whose captured text was rendered', () => {
    // The second `code` did not take part on "404" and no group rendered "", so the first one stands.
    const config = stage('(?:(?P<code>\\d{3})|(?P<code>[A-Z_]+))', '<{{ .Value }}>');
    expect(run(config, '404')).toMatchObject({ line: '<404>', extracted: { code: '<404>' } });
    expect(run(config, 'NOT_FOUND 404')).toMatchObject({ line: '<NOT_FOUND> <404>', extracted: { code: '<NOT_FOUND>' } });
  });

  it('renders every group again and keeps the last rendering of a captured text for the named groups', () => {
    // Both matches capture "k"; a random rendering shows which one the named group gets.
    const out = run(stage('(?P<g>k)', '{{ randAlpha 12 }}'), 'k k');
    const [first, second] = out.line.split(' ');
    expect(first).not.toBe(second);
    expect(out.extracted.g).toBe(second);
  });

  it('writes a numeric source back as text even when nothing was rewritten', () => {
    expect(run(stage('\\d', 'x', 'n'), 'l', { n: 5 }).extracted).toEqual({ n: '5' });
  });

  it('rewrites the source instead of the line, as text', () => {
    const out = run(stage('(\\d+)', 'x', 'n'), 'line 1', { n: 12.5 });
    expect(out.line).toBe('line 1');
    expect(out.extracted).toEqual({ n: 'x.x' });
  });

  it('does nothing when the source is missing or does not convert to text', () => {
    expect(run(stage('(\\d)', 'x', 'n'), 'line 1').line).toBe('line 1');
    expect(run(stage('(\\d)', 'x', 'n'), 'line 1', { n: null }).extracted).toEqual({ n: null });
    expect(run(stage('(\\d)', 'x', 'n'), 'line 1', { n: [1] }).extracted).toEqual({ n: [1] });
  });

  it('reads an empty source as the line', () => {
    expect(run(stage('(\\d)', 'x', ''), 'line 1').line).toBe('line x');
  });

  it('gives the template every convertible extracted value and .Value, but no .Entry', () => {
    const out = run(
      stage('(\\d+)', '{{ .app }}:{{ .n }}:{{ .Value }}:{{ .Entry }}:{{ .gone }}'),
      'v=1',
      { n: 2, gone: null },
      { app: 'api' },
    );
    expect(out.line).toBe('v=api:2:1:<no value>:<no value>');
  });

  it('gives .Value the captured text even when an extracted key is named Value', () => {
    expect(run(stage('(\\d)', '{{ .Value }}{{ .Value }}'), 'a1', { Value: 'x' }).line).toBe('a11');
  });

  it('does nothing at all when a render fails', () => {
    const out = run(stage('(?P<d>\\d)', '{{ if eq .Value "2" }}{{ ToUpper .nope }}{{ end }}x'), '1 2');
    expect(out.line).toBe('1 2');
    expect(out.extracted).toEqual({});
  });
});

describe('stage.replace: execution budget', () => {
  it('makes no change to an entry whose render goes over the budget, and logs once per interval with the count', () => {
    const clock = new ManualClock(0n);
    const logged: Array<Record<string, unknown> | undefined> = [];
    const built = buildPipeline([replace({ expression: '(\\d+)', replace: '<{{ seq 1 100000000 }}>' }).spec], {
      clock,
      registry: new Registry(),
      debug: (message, fields) => {
        if (message === 'failed to execute template on extracted value') logged.push(fields);
      },
    });
    expect(built.process!(entry('n=1 m=2', {}, { extracted: { k: 'v' } }))).toMatchObject({ line: 'n=1 m=2', extracted: { k: 'v' } });
    expect(built.process!(entry('n=3'))!.line).toBe('n=3');
    clock.advanceBy(10_000);
    expect(built.process!(entry('n=4'))!.line).toBe('n=4');
    const error =
      'template: pipeline_template:1:4: executing "pipeline_template" at <seq 1 100000000>: error calling seq: ' +
      'execution budget exceeded: a list of 100000000 elements (at most 1000000)';
    expect(logged).toEqual([
      { error, occurrences: 1 },
      { error, occurrences: 2 },
    ]);
    built.dispose();
  });
});

describe('stage.replace: render time', () => {
  it('gives the renders of one entry one time budget, and counts the failure by reason', async () => {
    const registry = new Registry();
    const built = buildPipeline([replace({ expression: '(\\w)', replace: '{{ upper .Value }}', source: '' }).spec], {
      clock: new ManualClock(0n),
      registry,
    });
    // Virtual time: every reading of the monotonic clock is 100 ms after the one before, so each
    // render, which reads it once, would fit in 1 s on its own; the twenty together do not.
    let now = 0;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => (now += 100));
    let out;
    try {
      out = built.process!(entry('abcdefghijklmnopqrst', {}));
    } finally {
      clock.mockRestore();
    }
    expect(out!.line).toBe('abcdefghijklmnopqrst');
    expect(await registry.getSingleMetricAsString('logs_process_template_failures_total')).toContain(
      'logs_process_template_failures_total{stage="replace",reason="time_budget"} 1',
    );
    built.dispose();
  });
});

describe('stage.replace: configuration', () => {
  it('reports configuration errors with the reference and engine texts', () => {
    expect(() => runConfig(stage('', 'x'), [])).toThrow('test.alloy:2:3: stage.replace: expression is required');
    expect(() => runConfig(stage('(?P<ts[0-9]+).*', 'x'), [])).toThrow(
      'test.alloy:2:17: stage.replace: could not compile regular expression: error parsing regexp: invalid named capture: `(?P<ts[0-9]+).*`',
    );
    expect(() => runConfig(stage('(a)', '{{ .Value '), [])).toThrow(
      'test.alloy:3:3: stage.replace: template: pipeline_template:1: unclosed action',
    );
    expect(() => runConfig(stage('(a)', '{{ nope }}'), [])).toThrow(
      'test.alloy:3:3: stage.replace: template: pipeline_template:1: function "nope" not defined',
    );
    expect(() => runConfig('stage.replace {\n  replace = "x"\n}', [])).toThrow(
      'test.alloy:1:1: stage.replace: missing required attribute "expression"',
    );
    expect(() => replace({ expression: '(a)\\1' })).toThrow(/^stage\.replace: could not compile regular expression: /);
  });

  it('parses the replacement when the stage is built, never per entry', () => {
    const parse = vi.mocked(templateEngine.parseTemplate);
    const built = buildPipeline([replace({ expression: '(\\d+)', replace: '<{{ .Value }}>' }).spec], {
      clock: new ManualClock(0n),
      registry: new Registry(),
    });
    const parsesAtBuild = parse.mock.calls.length;
    let last = '';
    for (let i = 0; i < 100; i++) last = built.process!(entry(`n=${i} m=${i}`))!.line;
    expect(parse.mock.calls.length).toBe(parsesAtBuild);
    expect(last).toBe('n=<99> m=<99>');
  });
});

describe('stage.replace: properties', () => {
  const piece = fc.constantFrom('\\d+', '[a-z]*', 'x', '.', '\\s', 'y|z', '-', '[^ ]+?', '(?:ab)+', '(?i)k', '^', '$', '\\b');
  const groupless = fc.array(piece, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
  const line = fc.oneof(fc.string({ maxLength: 20 }), fc.stringMatching(/^[a-z0-9 xyzk-]{0,20}$/));
  const extracted = fc.dictionary(fc.constantFrom('a', 'b', 'src'), fc.oneof(fc.string({ maxLength: 10 }), fc.integer()), { maxKeys: 3 });

  it('with an expression without groups never changes the text of anything (property)', () => {
    fc.assert(
      fc.property(groupless, line, extracted, fc.constantFrom('', 'src'), (expression, text, before, source) => {
        const built = buildPipeline([replace({ expression, replace: 'REPLACED', source }).spec], {
          clock: new ManualClock(0n),
          registry: new Registry(),
        });
        const out = built.process!(entry(text, {}, { extracted: { ...before } }))!;
        expect(out.line).toBe(text);
        expect(textOf(out.extracted)).toEqual(textOf(before));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
