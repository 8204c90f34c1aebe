/**
 * Every series a config component registers carries its `component_id` and `component_path`, as
 * the reference's registerer adds them: two logs.process components counting the same thing stay
 * two series, on `exposeMetrics` of the registry the graph was given.
 */
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { componentRegistry, exposeMetrics, type MetricFamilies, withComponentLabels } from '../../core/metrics.js';
import type { LogsReceiver } from '../../core/receiver.js';
import { defineComponent, healthy } from '../../core/runtime/component.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { t } from '../../lib/config/schema.js';
import '../../index.js';
import { appEntry, defineDiscardSink, meteredProcess } from '../support/metered-process.js';

defineDiscardSink();

/** A component that labels its own series with `component_id`, as the sources and sinks do. */
defineComponent({
  name: 'test.self_labelled',
  doc: 'Counts one thing under its own component_id.',
  exportNames: [],
  fields: { unused: { kind: t.string, default: '', doc: 'Nothing.' } },
  build: (_args, ctx) => {
    new Counter({
      name: 'test_self_labelled_total',
      help: 'Counted.',
      labelNames: ['component_id', 'kind'],
      registers: [ctx.registry],
    }).inc({ component_id: ctx.id, kind: 'x' }, 3);
    return { exports: {}, health: () => healthy(), update: () => {}, stop: async () => {} };
  },
});

const processor = (label: string): string => meteredProcess(label, '[test.discard.out.receiver]');

function load(text: string): { graph: ComponentGraph; registry: Registry } {
  const registry = new Registry();
  const clock = new ManualClock(0n);
  const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: process.stdout, log: () => {} }));
  graph.load(text, 'metrics.alloy');
  return { graph, registry };
}

const receiverOf = (graph: ComponentGraph, id: string): LogsReceiver =>
  (graph.component(id)!.exports.receiver as { value: LogsReceiver }).value;

const samples = (text: string, name: string): string[] => text.split('\n').filter((l) => l.startsWith(`${name}{`));

describe('component metrics', () => {
  it('tells two logs.process dropping for the same reason, and their stage.metrics counters, apart by component_id', async () => {
    const { graph, registry } = load(`${processor('a')}${processor('b')}test.discard "out" { }\n`);
    await receiverOf(graph, 'logs.process.a').send([appEntry('noise 1'), appEntry('noise 2'), appEntry('kept')]);
    await receiverOf(graph, 'logs.process.b').send([appEntry('noise 3')]);
    const text = await exposeMetrics(registry);
    expect(samples(text, 'logs_process_dropped_lines_total')).toEqual([
      'logs_process_dropped_lines_total{component_id="logs.process.a",component_path="/",reason="noise"} 2',
      'logs_process_dropped_lines_total{component_id="logs.process.b",component_path="/",reason="noise"} 1',
    ]);
    expect(samples(text, 'logs_process_custom_lines')).toEqual([
      'logs_process_custom_lines{component_id="logs.process.a",component_path="/",app="a"} 3',
      'logs_process_custom_lines{component_id="logs.process.b",component_path="/",app="a"} 1',
    ]);
    // One family, one header, however many components count in it.
    expect(text.split('\n').filter((l) => l === '# TYPE logs_process_dropped_lines_total counter')).toHaveLength(1);
    expect(text.split('\n').filter((l) => l.startsWith('# HELP logs_process_custom_lines '))).toHaveLength(1);
    await graph.stop();
  });

  it('adds only component_path to a series that names its component_id already', async () => {
    const { graph, registry } = load('test.self_labelled "s" { }\n');
    expect(samples(await exposeMetrics(registry), 'test_self_labelled_total')).toEqual([
      'test_self_labelled_total{component_id="test.self_labelled.s",component_path="/",kind="x"} 3',
    ]);
    await graph.stop();
  });

  it('takes a removed component series off the exposition on reload, and keeps an updated one', async () => {
    const { graph, registry } = load(`${processor('a')}${processor('b')}test.discard "out" { }\n`);
    await receiverOf(graph, 'logs.process.a').send([appEntry('noise')]);
    await receiverOf(graph, 'logs.process.b').send([appEntry('noise')]);
    expect(await graph.reload(`${processor('a')}test.discard "out" { }\n`, 'metrics.alloy')).toEqual([]);
    expect(samples(await exposeMetrics(registry), 'logs_process_dropped_lines_total')).toEqual([
      'logs_process_dropped_lines_total{component_id="logs.process.a",component_path="/",reason="noise"} 1',
    ]);
    await graph.stop();
  });

  it('labels a component inside a module instance with its id there and the instance path', async () => {
    const { graph, registry } = load(`declare "pipeline" {
  argument "forward_to" { }
  ${meteredProcess('main', 'argument.forward_to.value')}
}
pipeline "default" {
  forward_to = [test.discard.out.receiver]
}
test.discard "out" { }
`);
    await receiverOf(graph, 'pipeline.default/logs.process.main').send([appEntry('noise')]);
    expect(samples(await exposeMetrics(registry), 'logs_process_dropped_lines_total')).toEqual([
      'logs_process_dropped_lines_total{component_id="logs.process.main",component_path="/pipeline.default",reason="noise"} 1',
    ]);
    await graph.stop();
  });

  it('serves a component registry with its parent, and not after it is removed', async () => {
    const parent = new Registry();
    new Counter({ name: 'own_total', help: 'The parent own.', registers: [parent] }).inc();
    const child = componentRegistry(parent, { component_id: 'c', component_path: '/' });
    new Counter({ name: 'child_total', help: 'A child counter.', labelNames: ['k'], registers: [child.registry] }).inc({ k: 'v' }, 2);
    expect(await exposeMetrics(parent)).toBe(
      [
        '# HELP own_total The parent own.',
        '# TYPE own_total counter',
        'own_total 1',
        '',
        '# HELP child_total A child counter.',
        '# TYPE child_total counter',
        'child_total{component_id="c",component_path="/",k="v"} 2',
        '',
        '',
      ].join('\n'),
    );
    child.remove();
    expect(await exposeMetrics(parent)).toBe(
      ['# HELP own_total The parent own.', '# TYPE own_total counter', 'own_total 1', '', ''].join('\n'),
    );
  });

  it('keeps both labels where a series names them, component_id first where it names one', () => {
    const labels = { component_id: 'x', component_path: '/m' };
    const family = (values: Record<string, string>[]) =>
      [
        { name: 'f', help: 'h', type: 'counter', aggregator: 'sum', values: values.map((l) => ({ value: 1, labels: l })) },
      ] as unknown as MetricFamilies;
    expect(
      withComponentLabels(
        family([{}, { a: '1', component_id: 'own' }, { component_path: '/p', component_id: 'own' }]),
        labels,
      )[0]!.values.map((v) => v.labels),
    ).toEqual([
      { component_id: 'x', component_path: '/m' },
      { a: '1', component_id: 'own', component_path: '/m' },
      { component_path: '/p', component_id: 'own' },
    ]);
  });
});
