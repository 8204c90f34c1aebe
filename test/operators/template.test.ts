import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { buildPipeline } from '../../core/pipeline.js';
import * as templateEngine from '../../lib/template/index.js';
import { template } from '../../operators/template.js';
import { entry, runConfig } from '../support/run-stages.js';
import { Registry } from 'prom-client';

// Counts parses so a test can show the template is compiled per stage, never per entry.
vi.mock('../../lib/template/index.js', async (importOriginal) => {
  const engine = await importOriginal<typeof import('../../lib/template/index.js')>();
  return { ...engine, parseTemplate: vi.fn(engine.parseTemplate) };
});

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

/** A stage.template block; the template is written as a config-language string. */
function stage(source: string, text: string): string {
  return `stage.template {\n  source = ${JSON.stringify(source)}\n  template = ${JSON.stringify(text)}\n}`;
}

/** Runs one entry with the given extracted map and returns its extracted map afterwards. */
function render(source: string, text: string, extracted: Record<string, unknown>, line = 'the line', labels: Record<string, string> = {}) {
  return runConfig(stage(source, text), [entry(line, labels, { extracted })]).entries[0]!.extracted;
}

describe('stage.template: data', () => {
  it('renders .Value, .Entry and every extracted key', () => {
    expect(render('msg', '{{ .Value }} [{{ .level }}] {{ .Entry }}', { msg: 'hi', level: 'warn' })).toEqual({
      msg: 'hi [warn] the line',
      level: 'warn',
    });
  });

  it('creates the source key when it is absent', () => {
    expect(render('new', '{{ .level }}!', { level: 'warn' })).toEqual({ level: 'warn', new: 'warn!' });
  });

  it('reads labels through label seeding', () => {
    expect(render('out', '{{ .app }}', {}, 'l', { app: 'api' })).toEqual({ app: 'api', out: 'api' });
  });

  it('hands every value to the template as a string in Go form', () => {
    const out = render('out', '{{ .n }} {{ kindOf .n }} {{ .b }} {{ kindOf .b }} {{ .big }}', { n: 12.5, b: true, big: 1e21 });
    expect(out.out).toBe('12.5 string true string 1000000000000000000000');
  });

  it('leaves null and list values out of the data but keeps them in the extracted map', () => {
    expect(render('out', '{{ .n }}|{{ .list }}', { n: null, list: ['a'] })).toEqual({ n: null, list: ['a'], out: '<no value>|<no value>' });
  });

  it('gives .Value only when the source exists and converts to text', () => {
    expect(render('src', '[{{ .Value }}]', { src: null })).toEqual({ src: '[<no value>]' });
    expect(render('src', '[{{ .Value }}]', {})).toEqual({ src: '[<no value>]' });
  });

  it('gives the source priority over an extracted key named Value, and the line priority over one named Entry', () => {
    expect(render('src', '{{ .Value }} {{ .Entry }}', { src: 'source', Value: 'other', Entry: 'x' }, 'line')).toEqual({
      src: 'source line',
      Value: 'other',
      Entry: 'x',
    });
  });
});

describe('stage.template: Go template rules', () => {
  it('prints a missing key as <no value>', () => {
    expect(render('out', '{{ .nope }}', {}).out).toBe('<no value>');
  });

  it('compares a missing key without error and treats it as false', () => {
    expect(render('out', '{{ eq .nope "x" }} {{ ne .nope "x" }} {{ if .nope }}yes{{ else }}no{{ end }}', {}).out).toBe('false true no');
  });

  it('formats a missing key as nil in printf and sprig toString', () => {
    expect(render('out', '{{ printf "%s" .nope }} {{ toString .nope }}', {}).out).toBe('%!s(<nil>) <nil>');
  });

  it('counts bytes in len', () => {
    expect(render('v', '{{ len .Value }}', { v: 'héllo' }).v).toBe('6');
  });

  it('passes a piped value as the last argument, so Hash hashes salt + value', () => {
    const piped = render('v', '{{ .Value | Hash "salt" }}', { v: 'x' }).v;
    expect(piped).toBe(render('v', '{{ Hash "salt" .Value }}', { v: 'x' }).v);
    expect(piped).not.toBe(render('v', '{{ Hash .Value "salt" }}', { v: 'x' }).v);
  });

  it('hashes the concatenation of both arguments with Hash (SHA3-256) and Sha2Hash (SHA-256)', () => {
    expect(render('v', '{{ Hash .Value "salt" }}', { v: 'this is PII data' }).v).toBe(
      '0807ea24e992127128b38e4930f7155013786a4999c73a25910318a793847658',
    );
    expect(render('v', '{{ Hash "this is PII " "datasalt" }}', {}).v).toBe(
      '0807ea24e992127128b38e4930f7155013786a4999c73a25910318a793847658',
    );
    expect(render('v', '{{ Sha2Hash .Value "salt" }}', { v: 'this is PII data' }).v).toBe(
      '5526fd6f8ad457279cf8ff06453c6cb61bf479fa826e3b099caa6c846f9376f2',
    );
  });

  it('offers the reference custom functions and sprig with its own argument orders', () => {
    expect(render('v', '{{ Replace .Value "" "-" -1 }}', { v: 'ab' }).v).toBe('-a-b-');
    expect(render('v', '{{ TrimLeft .Value "ab" }}|{{ TrimPrefix .Value "ab" }}', { v: 'abbac' }).v).toBe('c|bac');
    expect(render('v', '{{ replace "a" "b" .Value }}|{{ trimAll "-" "--x--" }}|{{ add "5" 1 }}', { v: 'aXa' }).v).toBe('bXb|x|6');
    expect(render('v', '{{ regexReplaceAll "(\\\\w)(\\\\d)" .Value "$2${1}" }}', { v: 'a1 b2' }).v).toBe('1a 2b');
    expect(render('v', '{{ regexReplaceAllLiteral "\\\\d" .Value "$1" }}', { v: 'a1' }).v).toBe('a$1');
  });
});

describe('stage.template: results', () => {
  it('deletes the source key when the template renders empty, and keeps whitespace-only results', () => {
    expect(render('v', '{{ if eq .Value "drop" }}{{ end }}', { v: 'drop', other: 'x' })).toEqual({ other: 'x' });
    expect(render('v', ' ', { v: 'x' })).toEqual({ v: ' ' });
  });

  it('leaves the entry unchanged when execution fails', () => {
    expect(render('v', '{{ ToUpper .nope }}', { v: 'keep' })).toEqual({ v: 'keep' });
    expect(render('v', '{{ regexReplaceAll "(" .Value "x" }}', { v: 'keep' })).toEqual({ v: 'keep' });
    expect(render('v', '{{ fail "no" }}', {})).toEqual({});
  });
});

describe('stage.template: execution budget', () => {
  it('leaves an entry unchanged when its render goes over the budget, and logs once per interval with the count', () => {
    const clock = new ManualClock(0n);
    const logged: Array<Record<string, unknown> | undefined> = [];
    const built = buildPipeline([template({ source: 'v', template: '{{ .Value }}{{ repeat 200000000 "a" }}' }).spec], {
      clock,
      registry: new Registry(),
      debug: (message, fields) => {
        if (message === 'failed to execute template on extracted value') logged.push(fields);
      },
    });
    const started = performance.now();
    for (let i = 0; i < 50; i++) {
      expect(built.process!(entry('l', {}, { extracted: { v: `keep ${i}`, other: 'x' } }))!.extracted).toEqual({
        v: `keep ${i}`,
        other: 'x',
      });
    }
    expect(performance.now() - started).toBeLessThan(1000);
    clock.advanceBy(10_000);
    built.process!(entry('l', {}, { extracted: { v: 'last' } }));
    const error =
      'template: pipeline_template:1:15: executing "pipeline_template" at <repeat 200000000 "a">: error calling repeat: ' +
      'execution budget exceeded: a string of 200000000 bytes (at most 16777216)';
    expect(logged).toEqual([
      { error, occurrences: 1 },
      { error, occurrences: 50 },
    ]);
    built.dispose();
  });
});

describe('stage.template: render time', () => {
  /** Builds one stage.template whose debug lines for failed renders are collected in `logged`. */
  function built(text: string) {
    const registry = new Registry();
    const logged: unknown[] = [];
    const pipeline = buildPipeline([template({ source: 'v', template: text }).spec], {
      clock: new ManualClock(0n),
      registry,
      debug: (message, fields) => {
        if (message === 'failed to execute template on extracted value') logged.push(fields?.error);
      },
    });
    return { pipeline, registry, logged };
  }

  it('leaves an entry unchanged when its render takes more than 1 s, and counts it by reason', async () => {
    const { pipeline, registry, logged } = built('{{ range until 5000 }}{{ upper $.Value }}{{ end }}');
    // Virtual time: every reading of the monotonic clock is 100 ms after the one before.
    let now = 0;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => (now += 100));
    let out;
    try {
      out = pipeline.process!(entry('l', {}, { extracted: { v: 'keep', other: 'x' } }));
    } finally {
      clock.mockRestore();
    }
    expect(out!.extracted).toEqual({ v: 'keep', other: 'x' });
    expect(logged).toEqual([
      'template: pipeline_template:1:25: executing "pipeline_template" at <upper $.Value>: error calling upper: ' +
        'execution budget exceeded: render took more than 1s',
    ]);
    expect(await registry.getSingleMetricAsString('logs_process_template_failures_total')).toContain(
      'logs_process_template_failures_total{stage="template",reason="time_budget"} 1',
    );
    pipeline.dispose();
  });

  it('counts steps, sizes and plain execution errors under their own reasons', async () => {
    const stages = ['{{ until 1000000 | len }}', '{{ repeat 200000000 "a" }}', '{{ fail "no" }}'].map(built);
    for (const { pipeline } of stages) pipeline.process!(entry('l', {}, { extracted: { v: 'keep' } }));
    const counted = await Promise.all(
      stages.map(({ registry }) => registry.getSingleMetricAsString('logs_process_template_failures_total')),
    );
    expect(counted[0]).toContain('{stage="template",reason="step_budget"} 1');
    expect(counted[1]).toContain('{stage="template",reason="size_budget"} 1');
    expect(counted[2]).toContain('{stage="template",reason="error"} 1');
    for (const { pipeline } of stages) pipeline.dispose();
  });
});

describe('stage.template: configuration', () => {
  it('reports configuration errors with the reference and engine texts', () => {
    expect(() => runConfig(stage('', 'x'), [])).toThrow('test.alloy:2:3: stage.template: template source value is required');
    expect(() => runConfig(stage('v', '{{{.Value}}}'), [])).toThrow(
      'test.alloy:3:3: stage.template: template: pipeline_template:1: unexpected "{" in command',
    );
    expect(() => runConfig(stage('v', '{{ NoSuchFunc .Value }}'), [])).toThrow(
      'test.alloy:3:3: stage.template: template: pipeline_template:1: function "NoSuchFunc" not defined',
    );
    expect(() => runConfig('stage.template {\n  source = "v"\n}', [])).toThrow(
      'test.alloy:1:1: stage.template: missing required attribute "template"',
    );
    expect(() => template({ source: 'v', template: '{{ .Value ' })).toThrow(
      'stage.template: template: pipeline_template:1: unclosed action',
    );
  });

  it('parses the template when the stage is built, never per entry', () => {
    const parse = vi.mocked(templateEngine.parseTemplate);
    const built = buildPipeline([template({ source: 'v', template: '{{ .Value | ToUpper }}' }).spec], {
      clock: new ManualClock(0n),
      registry: new Registry(),
    });
    const parsesAtBuild = parse.mock.calls.length;
    const out: Array<Entry | null> = [];
    for (let i = 0; i < 100; i++) out.push(built.process!(entry('l', {}, { extracted: { v: `value ${i}` } })));
    expect(parse.mock.calls.length).toBe(parsesAtBuild);
    expect(out[99]!.extracted.v).toBe('VALUE 99');
  });
});

describe('stage.template: properties', () => {
  const key = fc.string({ minLength: 1, maxLength: 8 });
  const extracted = fc.dictionary(key, fc.oneof(fc.string({ maxLength: 8 }), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null)), {
    maxKeys: 6,
  });
  const constantText = fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !s.includes('{{'));

  it('with a constant template sets exactly the source key to that text (property)', () => {
    fc.assert(
      fc.property(key, constantText, extracted, (source, text, before) => {
        const built = buildPipeline([template({ source, template: text }).spec], { clock: new ManualClock(0n), registry: new Registry() });
        const out = built.process!(entry('line', {}, { extracted: { ...before } }))!;
        expect(out.extracted).toEqual({ ...before, [source]: text });
        expect(out.line).toBe('line');
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
