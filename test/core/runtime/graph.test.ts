import { describe, expect, it } from 'vitest';
import { entry, errorsOf, newGraph, receiverOf } from '../../support/graph-harness.js';

describe('component graph', () => {
  it('wires forward_to by reference and processes entries end to end', async () => {
    const { graph, output } = newGraph();
    graph.load(
      `logs.process "default" {
  stage.static_labels { values = { env = "prod" } }
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`,
      'main.alloy',
    );
    await receiverOf(graph, 'logs.process.default').send([entry('hello', { app: 'a' })]);
    await graph.stop();
    expect(output()).toBe(
      '{"labels":{"app":"a","env":"prod"},"line":"hello","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n',
    );
  });

  it('rejects duplicate component ids with both positions', () => {
    const { graph } = newGraph();
    expect(errorsOf(() => graph.load('logs.echo "a" { }\nlogs.echo "a" { }\n', 'dup.alloy'))).toEqual([
      'dup.alloy:2:1: component "logs.echo.a" already declared at dup.alloy:1:1',
    ]);
  });

  it('rejects references to components that do not exist', () => {
    const { graph } = newGraph();
    expect(errorsOf(() => graph.load('logs.process "p" {\n  forward_to = [logs.echo.missing.receiver]\n}\n', 'ref.alloy'))).toEqual([
      'ref.alloy:2:17: logs.process "p": component "logs.echo.missing.receiver" does not exist or is out of scope',
    ]);
  });

  it('still decodes and builds every component when the graph has errors, reporting all in source order', () => {
    const { graph } = newGraph();
    const config = [
      'logs.echo "a" { }',
      'logs.process "p" {',
      '  stage.regex { expression = "a(b" }',
      '  forward_to = [logs.echo.missing.receiver, logs.echo.a.receiver]',
      '}',
      'logs.echo "a" { }',
      'logs.process "q" {',
      '  stage.label_drop { values = [] }',
      '  forward_to = [logs.process.p.receiver]',
      '}',
      '',
    ].join('\n');
    expect(errorsOf(() => graph.load(config, 'all.alloy'))).toEqual([
      'all.alloy:3:32: logs.process "p" > stage.regex: could not compile regular expression: error parsing regexp: missing closing ): `a(b`',
      'all.alloy:4:17: logs.process "p": component "logs.echo.missing.receiver" does not exist or is out of scope',
      'all.alloy:6:1: component "logs.echo.a" already declared at all.alloy:1:1',
      'all.alloy:8:22: logs.process "q" > stage.label_drop: labeldrop stage config cannot be empty',
    ]);
  });

  it('rejects cycles', () => {
    const { graph } = newGraph();
    const errors = errorsOf(() =>
      graph.load(
        'logs.process "a" {\n  forward_to = [logs.process.b.receiver]\n}\nlogs.process "b" {\n  forward_to = [logs.process.a.receiver]\n}\n',
        'cycle.alloy',
      ),
    );
    expect(errors).toEqual(['cycle.alloy:1:1: cycle detected: logs.process.a -> logs.process.b -> logs.process.a']);
  });

  it('rejects unknown component names', () => {
    const { graph } = newGraph();
    expect(errorsOf(() => graph.load('logs.nothing "x" { }\n', 'u.alloy'))).toEqual([
      'u.alloy:1:1: unrecognized component name "logs.nothing"',
    ]);
  });

  it('lets several instances of a component coexist', async () => {
    const { graph, output } = newGraph();
    graph.load(
      `logs.process "a" {
  stage.static_labels { values = { via = "a" } }
  forward_to = [logs.echo.out.receiver]
}
logs.process "b" {
  stage.static_labels { values = { via = "b" } }
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`,
      'multi.alloy',
    );
    await receiverOf(graph, 'logs.process.a').send([entry('1')]);
    await receiverOf(graph, 'logs.process.b').send([entry('2')]);
    await graph.stop();
    expect(
      output()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).labels.via),
    ).toEqual(['a', 'b']);
  });

  it('keeps the old pipeline running and reports unhealthy when a reload brings invalid stages', async () => {
    const { graph, output } = newGraph();
    const config = (stage: string) => `logs.process "p" {\n  ${stage}\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n`;
    graph.load(config('stage.static_labels { values = { v = "1" } }'), 'r.alloy');
    const receiver = receiverOf(graph, 'logs.process.p');
    const errors = await graph.reload(config('stage.output { source = "" }'), 'r.alloy');
    expect(errors.map((e) => e.message)).toEqual([
      'r.alloy:2:18: logs.process "p" > stage.output: output source value is required if output is specified',
    ]);
    expect(graph.health().find((c) => c.id === 'logs.process.p')!.health.state).toBe('unhealthy');
    expect(receiverOf(graph, 'logs.process.p')).toBe(receiver);
    await receiver.send([entry('x')]);
    await graph.stop();
    expect(JSON.parse(output().trim()).labels).toEqual({ v: '1' });
  });

  it('swaps in a valid new pipeline on reload and becomes healthy again', async () => {
    const { graph, output } = newGraph();
    const config = (v: string) =>
      `logs.process "p" {\n  stage.static_labels { values = { v = "${v}" } }\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n`;
    graph.load(config('1'), 'r.alloy');
    expect(await graph.reload(config('2'), 'r.alloy')).toEqual([]);
    await receiverOf(graph, 'logs.process.p').send([entry('x')]);
    await graph.stop();
    expect(JSON.parse(output().trim()).labels).toEqual({ v: '2' });
    expect(graph.health().every((c) => c.health.state === 'healthy')).toBe(true);
  });
});
