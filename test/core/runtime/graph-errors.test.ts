import { describe, expect, it } from 'vitest';
import { errorsOf, newGraph } from '../../support/graph-harness.js';

describe('component graph errors', () => {
  it('reports a misspelt export at the reference, with the other errors of the file', () => {
    const { graph } = newGraph();
    const config = 'logs.process "p" {\n  forward_to = [logs.echo.out.reciever]\n}\nlogs.echo "out" {\n  bogus = 1\n}\n';
    expect(errorsOf(() => graph.load(config, 'export.alloy'))).toEqual([
      'export.alloy:2:17: logs.process "p": component "logs.echo.out" has no export "reciever" (did you mean "receiver"?)',
      'export.alloy:5:3: logs.echo "out": unrecognized attribute name "bogus"',
    ]);
  });

  it('takes no dependency on a component through a misspelt export, so reports no knock-on cycle', () => {
    const { graph } = newGraph();
    const config = 'logs.process "p" {\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" {\n  path = logs.process.p.nope\n}\n';
    expect(errorsOf(() => graph.load(config, 'cycle.alloy'))).toEqual([
      'cycle.alloy:5:10: logs.echo "out": component "logs.process.p" has no export "nope"; it exports "receiver"',
    ]);
  });

  it('rejects a reload whose references name an export that does not exist, keeping what runs', async () => {
    const { graph } = newGraph();
    graph.load('logs.process "p" {\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n', 'ok.alloy');
    const errors = await graph.reload('logs.process "p" {\n  forward_to = [logs.echo.out.recv]\n}\nlogs.echo "out" { }\n', 'bad.alloy');
    expect(errors.map((e) => e.message)).toEqual([
      'bad.alloy:2:17: logs.process "p": component "logs.echo.out" has no export "recv"; it exports "receiver"',
    ]);
    expect(graph.health().map((h) => [h.id, h.health.state])).toEqual([
      ['logs.echo.out', 'healthy'],
      ['logs.process.p', 'healthy'],
    ]);
    await graph.stop();
  });

  it('lists the ids of its components, dependencies first', () => {
    const { graph } = newGraph();
    graph.load('logs.process "p" {\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n', 'ids.alloy');
    expect(graph.componentIds()).toEqual(['logs.echo.out', 'logs.process.p']);
  });
});
