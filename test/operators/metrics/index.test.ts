import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { formatGoFloatG } from '../../../operators/metrics/custom-metrics.js';
import type { Entry } from '../../../core/entry.js';
import { buildPipeline, ingress } from '../../../core/pipeline.js';
import { loadStageList, startProcessRun } from '../../../core/process.js';
import { metrics } from '../../../operators/index.js';
import type { CounterMetricConfig, HistogramMetricConfig } from '../../../operators/metrics/index.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';
import { entry } from '../../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const START_NS = 1_700_000_000_000_000_000n;

/** A running pipeline whose metrics stay registered until `dispose()`. */
function start(config: string, registry = new Registry(), clock = new ManualClock(START_NS)) {
  const entries: Entry[] = [];
  const run = startProcessRun(loadStageList(config, 'test.alloy'), { clock, registry, onEntry: (e) => entries.push(e) });
  return {
    entries,
    clock,
    registry,
    push: (...inputs: Entry[]) => inputs.forEach((e) => run.push(e)),
    dispose: () => run.dispose(),
    /** Samples of one family as `name{labels}` → value. */
    samples: async (family: string) => {
      const out: Record<string, number> = {};
      for (const s of parsePrometheusText(await registry.metrics())) {
        if (s.name !== family && !s.name.startsWith(`${family}_`)) continue;
        const labels = Object.entries(s.labels)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',');
        out[`${s.name}{${labels}}`] = s.value;
      }
      return out;
    },
  };
}

function stage(body: string): string {
  return `stage.metrics {\n${body}\n}`;
}

describe('stage.metrics', () => {
  describe('counter', () => {
    it('increments by one when the source key exists, whatever its value, the source defaulting to the name', async () => {
      const p = start(stage('metric.counter {\n  name = "hits"\n  action = "inc"\n}'));
      p.push(entry('a', {}, { extracted: { hits: null } }), entry('b', {}, { extracted: { hits: 'x' } }), entry('c'));
      expect(await p.samples('logs_process_custom_hits')).toEqual({ 'logs_process_custom_hits{}': 2 });
    });

    it('counts only entries whose stringified source equals value, skipping unconvertible ones', async () => {
      const p = start(stage('metric.counter {\n  name = "warns"\n  source = "level"\n  value = "true"\n  action = "inc"\n}'));
      p.push(
        entry('a', {}, { extracted: { level: true } }),
        entry('b', {}, { extracted: { level: 'true' } }),
        entry('c', {}, { extracted: { level: null } }),
        entry('d', {}, { extracted: { level: 'false' } }),
      );
      expect(await p.samples('logs_process_custom_warns')).toEqual({ 'logs_process_custom_warns{}': 2 });
    });

    it('adds the source converted to a float: numbers, Go float strings, durations in seconds, booleans', async () => {
      const p = start(stage('metric.counter {\n  name = "total"\n  source = "v"\n  action = "add"\n}'));
      for (const v of [2, '0x1p-2', '1_000', '1.5ms', true, false, 'nope', null, [1]]) p.push(entry('x', {}, { extracted: { v } }));
      expect(await p.samples('logs_process_custom_total')).toEqual({ 'logs_process_custom_total{}': 2 + 0.25 + 1000 + 0.0015 + 1 });
    });

    it('skips a negative add instead of crashing', async () => {
      const p = start(stage('metric.counter {\n  name = "total"\n  source = "v"\n  action = "add"\n}'));
      p.push(entry('x', { a: '1' }, { extracted: { v: -3 } }));
      expect(await p.samples('logs_process_custom_total')).toEqual({});
      p.push(entry('x', { a: '1' }, { extracted: { v: '4' } }));
      expect(await p.samples('logs_process_custom_total')).toEqual({ 'logs_process_custom_total{a="1"}': 4 });
    });

    it('counts every entry with match_all, without reading the source', async () => {
      const p = start(stage('metric.counter {\n  name = "lines"\n  source = "missing"\n  match_all = true\n  action = "inc"\n}'));
      p.push(entry('a'), entry('b'));
      expect(await p.samples('logs_process_custom_lines')).toEqual({ 'logs_process_custom_lines{}': 2 });
    });

    it('never creates a series for match_all with action add but without count_entry_bytes', async () => {
      const p = start(
        stage(
          'metric.counter {\n  name = "lines"\n  match_all = true\n  action = "add"\n}\nmetric.counter {\n  name = "seen"\n  match_all = true\n  action = "inc"\n}',
        ),
      );
      p.push(entry('a', { app: 'api' }, { extracted: { lines: 3 } }), entry('b'));
      expect(await p.samples('logs_process_custom_lines')).toEqual({});
      expect(await p.samples('logs_process_custom_seen')).toEqual({
        'logs_process_custom_seen{app="api"}': 1,
        'logs_process_custom_seen{}': 1,
      });
    });

    it('adds the UTF-8 byte length of the line with count_entry_bytes', async () => {
      const p = start(stage('metric.counter {\n  name = "bytes"\n  match_all = true\n  count_entry_bytes = true\n  action = "add"\n}'));
      p.push(entry('héllo'), entry('😀'));
      expect(await p.samples('logs_process_custom_bytes')).toEqual({ 'logs_process_custom_bytes{}': 6 + 4 });
    });
  });

  describe('gauge', () => {
    it('supports set, inc, dec, add and sub', async () => {
      const body = ['set', 'inc', 'dec', 'add', 'sub']
        .map((action) => `metric.gauge {\n  name = "g_${action}"\n  source = "v"\n  action = "${action}"\n}`)
        .join('\n');
      const p = start(stage(body));
      p.push(
        entry('x', {}, { extracted: { v: '2.5' } }),
        entry('y', {}, { extracted: { v: -1 } }),
        entry('z', {}, { extracted: { v: 'bad' } }),
      );
      const values = await Promise.all(['set', 'inc', 'dec', 'add', 'sub'].map((a) => p.samples(`logs_process_custom_g_${a}`)));
      expect(values.map((v) => Object.values(v)[0])).toEqual([-1, 3, -3, 1.5, -1.5]);
    });
  });

  describe('histogram', () => {
    it('puts observations into upper-inclusive buckets and tracks sum and count', async () => {
      const p = start(stage('metric.histogram {\n  name = "size"\n  source = "v"\n  buckets = [1, 5]\n}'));
      for (const v of [1, 3, 5, 9]) p.push(entry('x', {}, { extracted: { v } }));
      expect(await p.samples('logs_process_custom_size')).toEqual({
        'logs_process_custom_size_bucket{le="1"}': 1,
        'logs_process_custom_size_bucket{le="5"}': 3,
        'logs_process_custom_size_bucket{le="+Inf"}': 4,
        'logs_process_custom_size_sum{}': 18,
        'logs_process_custom_size_count{}': 4,
      });
    });

    it('uses the default buckets for an empty list', async () => {
      const p = start(stage('metric.histogram {\n  name = "d"\n  source = "v"\n  buckets = []\n}'));
      p.push(entry('x', {}, { extracted: { v: 0.02 } }));
      expect(Object.keys(await p.samples('logs_process_custom_d_bucket'))).toEqual(
        ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'].map(
          (le) => `logs_process_custom_d_bucket{le="${le}"}`,
        ),
      );
    });

    it('formats bounds like Go and drops a trailing +Inf bound, which is always implied', async () => {
      const registry = new Registry();
      const stageSpec = metrics({
        'metric.histogram': [
          {
            name: 'big',
            source: 'v',
            buckets: [0.00001, 1000000, Infinity],
            description: '',
            prefix: '',
            value: '',
            max_idle_duration: 300_000_000_000n,
          },
        ],
      }).spec;
      const built = buildPipeline([stageSpec], { clock: new ManualClock(START_NS), registry });
      built.process!(ingress(entry('x', {}, { extracted: { v: 2e6 } })));
      const buckets = parsePrometheusText(await registry.metrics()).filter((s) => s.name === 'logs_process_custom_big_bucket');
      expect(buckets.map((s) => [s.labels.le, s.value])).toEqual([
        ['1e-05', 0],
        ['1e+06', 0],
        ['+Inf', 1],
      ]);
      built.dispose();
    });

    it('skips observations for entries carrying a label named le', async () => {
      const p = start(stage('metric.histogram {\n  name = "h"\n  source = "v"\n  buckets = [1]\n}'));
      p.push(entry('x', { le: 'oops' }, { extracted: { v: 1 } }));
      expect(await p.samples('logs_process_custom_h')).toEqual({});
    });
  });

  describe('series labels', () => {
    it('carry the current labels minus reserved __ names', async () => {
      const config = `stage.static_labels {\n  values = { added = "yes" }\n}\nstage.tenant {\n  value = "t1"\n}\n${stage('metric.counter {\n  name = "c"\n  match_all = true\n  action = "inc"\n}')}`;
      const p = start(config);
      p.push(entry('x', { app: 'api', __path__: '/x' }));
      expect(await p.samples('logs_process_custom_c')).toEqual({ 'logs_process_custom_c{added="yes",app="api"}': 1 });
    });

    it('escape names outside the legacy character set the way the reference exposition does', async () => {
      const p = start(stage('metric.counter {\n  name = "lines-total"\n  prefix = "my.app_"\n  match_all = true\n  action = "inc"\n}'));
      p.push(entry('x', { 'k8s.io/app': 'api', '1st': 'a' }));
      expect(await p.samples('my_app_lines_total')).toEqual({ 'my_app_lines_total{_st="a",k8s_io_app="api"}': 1 });
    });

    it('keep one series per distinct label set', async () => {
      const p = start(stage('metric.counter {\n  name = "c"\n  match_all = true\n  action = "inc"\n}'));
      p.push(entry('a', { app: 'a' }), entry('b', { app: 'b' }), entry('c', { app: 'a' }));
      expect(await p.samples('logs_process_custom_c')).toEqual({
        'logs_process_custom_c{app="a"}': 2,
        'logs_process_custom_c{app="b"}': 1,
      });
    });

    it('keys series on the full label set, reserved labels included, as the reference does', async () => {
      const p = start(stage('metric.counter {\n  name = "c"\n  match_all = true\n  action = "inc"\n}'));
      p.push(entry('a', { app: 'a', __tenant_id__: '1' }), entry('b', { app: 'a', __tenant_id__: '2' }));
      const samples = parsePrometheusText(await p.registry.metrics()).filter((s) => s.name === 'logs_process_custom_c');
      expect(samples).toEqual([
        { name: 'logs_process_custom_c', labels: { app: 'a' }, value: 1 },
        { name: 'logs_process_custom_c', labels: { app: 'a' }, value: 1 },
      ]);
    });
  });

  describe('naming', () => {
    it('uses prefix + name, an empty prefix meaning the default, and description as HELP', async () => {
      const p = start(
        stage(
          'metric.counter {\n  name = "a"\n  prefix = "my_"\n  description = "the a count"\n  match_all = true\n  action = "inc"\n}\nmetric.counter {\n  name = "b"\n  prefix = ""\n  match_all = true\n  action = "inc"\n}',
        ),
      );
      p.push(entry('x'));
      const text = await p.registry.metrics();
      expect(text).toContain('# HELP my_a the a count\n# TYPE my_a counter\nmy_a 1');
      expect(text).toContain('logs_process_custom_b 1');
    });

    it('updates only the last definition of a name within one stage', async () => {
      const p = start(
        stage(
          'metric.counter {\n  name = "c"\n  source = "v"\n  action = "inc"\n}\nmetric.counter {\n  name = "c"\n  source = "v"\n  action = "add"\n}',
        ),
      );
      p.push(entry('x', {}, { extracted: { v: 5 } }));
      expect(await p.samples('logs_process_custom_c')).toEqual({ 'logs_process_custom_c{}': 5 });
    });

    it('lets the last block of a name win in the order written, whatever the types', async () => {
      const gauge = 'metric.gauge {\n  name = "hits"\n  source = "v"\n  action = "set"\n}';
      const counter = 'metric.counter {\n  name = "hits"\n  match_all = true\n  action = "inc"\n}';
      const counterLast = start(stage(`${gauge}\n${counter}`));
      counterLast.push(entry('x', {}, { extracted: { v: 7 } }), entry('y'));
      expect(await counterLast.registry.metrics()).toContain('# TYPE logs_process_custom_hits counter\nlogs_process_custom_hits 2');
      counterLast.dispose();

      const gaugeLast = start(stage(`${counter}\n${gauge}`));
      gaugeLast.push(entry('x', {}, { extracted: { v: 7 } }), entry('y'));
      expect(await gaugeLast.registry.metrics()).toContain('# TYPE logs_process_custom_hits gauge\nlogs_process_custom_hits 7');
    });

    it('takes counters, gauges, then histograms when a programmatic config gives no written order', async () => {
      const registry = new Registry();
      const { spec } = metrics({
        'metric.gauge': [{ name: 'hits', source: 'v', action: 'set' }],
        'metric.counter': [{ name: 'hits', match_all: true, action: 'inc' }],
      } as unknown as Parameters<typeof metrics>[0]);
      const built = buildPipeline([spec], { clock: new ManualClock(START_NS), registry });
      built.process!(ingress(entry('x', {}, { extracted: { v: 7 } })));
      expect(await registry.metrics()).toContain('# TYPE logs_process_custom_hits gauge\nlogs_process_custom_hits 7');
      built.dispose();
    });

    it('refuses a name taken by another kind of metric', () => {
      expect(() =>
        start(
          stage('metric.counter {\n  name = "dropped_lines_total"\n  prefix = "logs_process_"\n  match_all = true\n  action = "inc"\n}'),
        ),
      ).toThrow('test.alloy:1:1: stage.metrics: metric "logs_process_dropped_lines_total" is already registered by another component');
    });
  });

  describe('idle expiry', () => {
    it('exports an idle series one last time at a scrape, then removes it', async () => {
      const p = start(stage('metric.counter {\n  name = "c"\n  match_all = true\n  action = "inc"\n  max_idle_duration = "2s"\n}'));
      p.push(entry('x', { s: 'old' }));
      p.clock.advanceBy(1000);
      p.push(entry('x', { s: 'fresh' }));
      expect(Object.keys(await p.samples('logs_process_custom_c'))).toEqual([
        'logs_process_custom_c{s="old"}',
        'logs_process_custom_c{s="fresh"}',
      ]);
      p.clock.advanceBy(1000);
      expect(Object.keys(await p.samples('logs_process_custom_c'))).toEqual([
        'logs_process_custom_c{s="old"}',
        'logs_process_custom_c{s="fresh"}',
      ]);
      expect(Object.keys(await p.samples('logs_process_custom_c'))).toEqual(['logs_process_custom_c{s="fresh"}']);
    });

    it('starts a removed series again from zero', async () => {
      const p = start(stage('metric.counter {\n  name = "c"\n  match_all = true\n  action = "inc"\n  max_idle_duration = "1s"\n}'));
      p.push(entry('x'), entry('x'));
      p.clock.advanceBy(1000);
      await p.samples('logs_process_custom_c');
      p.push(entry('x'));
      expect(await p.samples('logs_process_custom_c')).toEqual({ 'logs_process_custom_c{}': 1 });
    });

    it('compares whole seconds, as the reference does', async () => {
      const p = start(stage('metric.gauge {\n  name = "g"\n  source = "v"\n  action = "set"\n  max_idle_duration = "1500ms"\n}'));
      p.push(entry('x', {}, { extracted: { v: 1 } }));
      p.clock.advanceBy(1000);
      await p.samples('logs_process_custom_g');
      expect(await p.samples('logs_process_custom_g')).toEqual({});
    });
  });

  describe('lifecycle', () => {
    it('deletes its series when the pipeline is torn down and lets a new pipeline re-create the name', async () => {
      const registry = new Registry();
      const config = stage('metric.counter {\n  name = "c"\n  match_all = true\n  action = "inc"\n}');
      const old = start(config, registry);
      old.push(entry('x'), entry('x'));
      const next = start(stage('metric.counter {\n  name = "c"\n  description = "new"\n  match_all = true\n  action = "inc"\n}'), registry);
      next.push(entry('y'));
      old.dispose();
      expect(await next.samples('logs_process_custom_c')).toEqual({ 'logs_process_custom_c{}': 1 });
      expect(await registry.metrics()).toContain('# HELP logs_process_custom_c new');
      next.dispose();
      expect(await next.samples('logs_process_custom_c')).toEqual({});
    });

    it('shows only the newest type while a reload changes the type of a name', async () => {
      const registry = new Registry();
      const old = start(stage('metric.counter {\n  name = "m"\n  match_all = true\n  action = "inc"\n}'), registry);
      old.push(entry('x'));
      const next = start(stage('metric.gauge {\n  name = "m"\n  source = "v"\n  action = "set"\n}'), registry);
      next.push(entry('y', {}, { extracted: { v: 7 } }));
      const text = await registry.metrics();
      expect(text).toContain('# TYPE logs_process_custom_m gauge\nlogs_process_custom_m 7');
      old.dispose();
      next.dispose();
    });

    it('registers metrics of nested match stages on the same registry', async () => {
      const p = start(
        'stage.match {\n  selector = "{app=\\"api\\"}"\n  stage.metrics {\n    metric.counter {\n      name = "api_lines"\n      match_all = true\n      action = "inc"\n    }\n  }\n}',
      );
      p.push(entry('a', { app: 'api' }), entry('b', { app: 'web' }));
      expect(await p.samples('logs_process_custom_api_lines')).toEqual({ 'logs_process_custom_api_lines{app="api"}': 1 });
    });
  });

  describe('validation', () => {
    const counter = (body: string) => stage(`metric.counter {\n  name = "c"\n${body}\n}`);

    it('rejects an unknown counter or gauge action', () => {
      expect(() => start(counter('action = "del"'))).toThrow(
        /^test\.alloy:4:1: stage\.metrics: metric\.counter "c": the 'action' counter field must be either 'inc' or 'add'$/,
      );
      expect(() => start(stage('metric.gauge {\n  name = "g"\n  action = "mul"\n}'))).toThrow(
        /^test\.alloy:4:3: stage\.metrics: metric\.gauge "g": the 'action' gauge field must be one of the following values: \[set, inc, dec, add, sub\]$/,
      );
    });

    it('points at the attribute inside the metric block that holds it', () => {
      const config = [
        'stage.metrics {',
        '  metric.counter {',
        '    name   = "ok"',
        '    action = "inc"',
        '  }',
        '  metric.counter {',
        '    name   = "bad"',
        '    action = "del"',
        '  }',
        '  metric.histogram {',
        '    name    = "h"',
        '    buckets = [2, 1]',
        '  }',
        '}',
      ];
      expect(() => start(config.join('\n'))).toThrow(
        "test.alloy:8:5: stage.metrics: metric.counter \"bad\": the 'action' counter field must be either 'inc' or 'add'",
      );
      config[7] = '    action = "inc"';
      expect(() => start(config.join('\n'))).toThrow(/^test\.alloy:12:5: stage\.metrics: metric\.histogram "h": /);
      // Not written (a default): at the nested block.
      expect(() => start(stage('metric.counter {\n  name = "c"\n  action = "inc"\n  count_entry_bytes = true\n}'))).toThrow(
        'test.alloy:5:3: stage.metrics: metric.counter "c": the \'count_entry_bytes\' counter field',
      );
    });

    it('rejects match_all together with value', () => {
      expect(() => start(counter('action = "inc"\nmatch_all = true\nvalue = "x"'))).toThrow(
        /^test\.alloy:6:1: stage\.metrics: metric\.counter "c": a 'counter' metric supports either 'match_all' or a 'value', but not both$/,
      );
    });

    it('requires both match_all and action add for count_entry_bytes', () => {
      const message =
        "metric.counter \"c\": the 'count_entry_bytes' counter field must be specified along with match_all set to true or action set to 'add'";
      expect(() => start(counter('action = "inc"\ncount_entry_bytes = true'))).toThrow(message);
      expect(() => start(counter('action = "inc"\nmatch_all = true\ncount_entry_bytes = true'))).toThrow(message);
      expect(() => start(counter('action = "add"\ncount_entry_bytes = true'))).toThrow(message);
    });

    it('requires max_idle_duration of at least 1s', () => {
      expect(() => start(counter('action = "inc"\nmax_idle_duration = "999ms"'))).toThrow(
        'metric.counter "c": max_idle_duration must be greater or equal than 1s',
      );
      expect(() => start(stage('metric.histogram {\n  name = "h"\n  buckets = [1]\n  max_idle_duration = "0s"\n}'))).toThrow(
        'metric.histogram "h": max_idle_duration must be greater or equal than 1s',
      );
    });

    it('requires increasing histogram buckets, naming the offending bound and the next one as the Prometheus client does', () => {
      expect(() => start(stage('metric.histogram {\n  name = "h"\n  buckets = [1, 1]\n}'))).toThrow(
        'metric.histogram "h": histogram buckets must be in increasing order: 1.000000 >= 1.000000',
      );
      expect(() => start(stage('metric.histogram {\n  name = "h"\n  buckets = [0.5, 2, 1.25]\n}'))).toThrow(
        'metric.histogram "h": histogram buckets must be in increasing order: 2.000000 >= 1.250000',
      );
      const inf = (buckets: number[]) =>
        metrics({
          'metric.histogram': [{ name: 'h', buckets, max_idle_duration: 300_000_000_000n }] as unknown as HistogramMetricConfig[],
        });
      // Only a last +Inf bound is implied; anywhere else it is a bound like any other.
      expect(() => inf([1, Infinity, 2])).toThrow('histogram buckets must be in increasing order: +Inf >= 2.000000');
      expect(() => inf([Infinity, Infinity])).toThrow('histogram buckets must be in increasing order: +Inf >= +Inf');
      expect(() => inf([1, Infinity])).not.toThrow();
      expect(() => start(stage('metric.histogram {\n  name = "h"\n}'))).toThrow('missing required attribute "buckets"');
    });

    it('checks the programmatic form too', () => {
      expect(() =>
        metrics({ 'metric.counter': [{ name: 'c', action: 'inc', max_idle_duration: '10ms' }] as unknown as CounterMetricConfig[] }),
      ).toThrow('max_idle_duration must be greater or equal than 1s');
    });
  });

  it('formats bucket bounds like Go %g', () => {
    expect([0.005, 1, 100000, 1e6, 1234567, 1e-4, 1e-5, 2.5e21].map(formatGoFloatG)).toEqual([
      '0.005',
      '1',
      '100000',
      '1e+06',
      '1.234567e+06',
      '0.0001',
      '1e-05',
      '2.5e+21',
    ]);
  });

  it('never changes or drops entries (property)', () => {
    const body =
      'metric.counter {\n  name = "c"\n  source = "v"\n  action = "add"\n}\nmetric.gauge {\n  name = "g"\n  source = "v"\n  action = "sub"\n}\nmetric.histogram {\n  name = "h"\n  source = "v"\n  buckets = [1, 10]\n}';
    const specs = loadStageList(stage(body), 'test.alloy');
    const built = buildPipeline(specs, { clock: new ManualClock(START_NS), registry: new Registry() });
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('app', 'le', '__x', 'env'), fc.string({ maxLength: 3 })),
        fc.string({ maxLength: 10 }),
        fc.oneof(fc.double(), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null)),
        (labels, line, v) => {
          const input = ingress(entry(line, labels, { extracted: { v } }));
          const before = structuredClone(input);
          const out = built.process!(input);
          expect(out).toEqual(before);
        },
      ),
      { numRuns: NUM_RUNS },
    );
    built.dispose();
  });
});
