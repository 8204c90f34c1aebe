import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exposeMetrics } from '../../../core/metrics.js';
import type { Entry } from '../../../core/entry.js';
import { entry, errorsOf, newGraph, receiverOf } from '../../support/graph-harness.js';
import { runCli } from '../../support/run-cli.js';

const FIXTURES = 'test/fixtures/modules';

/** Loads `config`, sends `entries` to component `into` and gives what logs.echo printed. */
async function outputOf(config: string, file: string, into: string, entries: Entry[]): Promise<string> {
  const { graph, output } = newGraph();
  graph.load(config, file);
  await graph.start();
  await receiverOf(graph, into).send(entries);
  await graph.stop();
  return output();
}

const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

const PIPELINE_DECLARATION = fixture('pipeline.alloy');

describe('custom components', () => {
  it('runs a declare + import.file config exactly as its inlined form', async () => {
    const entries = [entry('hello', { app: 'a' }), entry('world', { app: 'b', env: 'x' })];
    const imported = await outputOf(
      fixture('main.alloy'),
      join(FIXTURES, 'main.alloy'),
      'mods.pipeline.default/logs.process.main',
      entries,
    );
    const inlined = await outputOf(fixture('inlined.alloy'), join(FIXTURES, 'inlined.alloy'), 'logs.process.main', entries);
    expect(imported).toBe(inlined);
    expect(imported).toBe(
      '{"labels":{"app":"a","env":"prod"},"line":"hello","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n' +
        '{"labels":{"app":"b","env":"prod"},"line":"world","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n',
    );
  });

  it('names the components of an instance under its id, dependencies first', () => {
    const { graph } = newGraph();
    graph.load(fixture('main.alloy'), join(FIXTURES, 'main.alloy'));
    expect(graph.componentIds()).toEqual(['logs.echo.out', 'mods.pipeline.default/logs.process.main']);
    expect(graph.details('mods.pipeline.default/logs.process.main')!.references).toEqual(['logs.echo.out']);
  });

  it('runs a declaration from import.string the same way, and one written in the config', async () => {
    const viaString = `import.string "mods" {
  content = ${JSON.stringify(PIPELINE_DECLARATION)}
}
mods.pipeline "default" {
  env        = "prod"
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`;
    const declared = `${PIPELINE_DECLARATION}
pipeline "default" {
  env        = "prod"
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`;
    const entries = [entry('hello', { app: 'a' })];
    const inlined = await outputOf(fixture('inlined.alloy'), 'inlined.alloy', 'logs.process.main', entries);
    expect(await outputOf(viaString, 'string.alloy', 'mods.pipeline.default/logs.process.main', entries)).toBe(inlined);
    expect(await outputOf(declared, 'declared.alloy', 'pipeline.default/logs.process.main', entries)).toBe(inlined);
  });

  it('sends to an instance through its exports, and uses an argument default', async () => {
    const config = `${PIPELINE_DECLARATION}
pipeline "default" {
  forward_to = [logs.echo.out.receiver]
}
logs.process "front" {
  forward_to = [pipeline.default.receiver]
}
logs.echo "out" { }
`;
    const out = await outputOf(config, 'exports.alloy', 'logs.process.front', [entry('hi')]);
    expect(out).toBe('{"labels":{"env":"dev"},"line":"hi","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n');
  });

  it('exports a value computed from arguments, used in another component', async () => {
    const config = `declare "join" {
  argument "a" { }
  argument "b" { }
  export "joined" {
    value = argument.a.value + "-" + argument.b.value
  }
}
join "tag" {
  a = "eu"
  b = string.to_upper("west")
}
logs.process "p" {
  stage.static_labels { values = { region = join.tag.joined } }
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`;
    const out = await outputOf(config, 'values.alloy', 'logs.process.p', [entry('x')]);
    expect(out).toBe('{"labels":{"region":"eu-WEST"},"line":"x","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n');
  });

  it('on reload, builds a new instance, stops a removed one and keeps the old when an argument is rejected', async () => {
    const config = (instances: string) => `${PIPELINE_DECLARATION}
${instances}
logs.echo "out" { }
`;
    const instance = (label: string, env = label) => `pipeline "${label}" {
  env        = ${JSON.stringify(env)}
  forward_to = [logs.echo.out.receiver]
}
`;
    const { graph, output } = newGraph();
    graph.load(config(instance('a')), 'swap.alloy');
    await graph.start();
    expect(await graph.reload(config(instance('b')), 'swap.alloy')).toEqual([]);
    expect(graph.componentIds()).toEqual(['logs.echo.out', 'pipeline.b/logs.process.main']);
    const rejected = config(instance('b').replace('"b"\n  forward_to', '["b"]\n  forward_to'));
    expect((await graph.reload(rejected, 'swap.alloy')).map((e) => e.message)).toEqual([
      'swap.alloy:15:16: logs.process "main" > stage.static_labels: attribute "values": expected string, got array (in instance "pipeline.b" at swap.alloy:25:1)',
    ]);
    await receiverOf(graph, 'pipeline.b/logs.process.main').send([entry('still b')]);
    await graph.stop();
    expect(output()).toBe(
      '{"labels":{"env":"b"},"line":"still b","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n',
    );
  });

  it('reads an imported file again on reload, so a changed module applies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modules-'));
    try {
      const module = (env: string) => PIPELINE_DECLARATION.replace('default  = "dev"', `default  = "${env}"`);
      writeFileSync(join(dir, 'pipeline.alloy'), module('first'));
      const config = `import.file "mods" {
  filename = "pipeline.alloy"
}
mods.pipeline "default" {
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`;
      const file = join(dir, 'main.alloy');
      const { graph, output } = newGraph();
      graph.load(config, file);
      await graph.start();
      await receiverOf(graph, 'mods.pipeline.default/logs.process.main').send([entry('a')]);
      writeFileSync(join(dir, 'pipeline.alloy'), module('second'));
      expect(await graph.reload(config, file)).toEqual([]);
      await receiverOf(graph, 'mods.pipeline.default/logs.process.main').send([entry('b')]);
      await graph.stop();
      expect(output()).toBe(
        '{"labels":{"env":"first"},"line":"a","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n' +
          '{"labels":{"env":"second"},"line":"b","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('imports every .alloy file of a directory, chains instances and keeps two instances apart', async () => {
    const config = `import.file "lib" {
  filename = "lib"
}
lib.drop "first" {
  forward_to = [lib.team.a.receiver]
}
lib.team "a" {
  team       = "a"
  forward_to = [logs.echo.out.receiver]
}
lib.team "b" {
  team       = "b"
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`;
    const { graph, registry, output } = newGraph();
    graph.load(config, join(FIXTURES, 'dir.alloy'));
    expect(graph.componentIds()).toEqual([
      'logs.echo.out',
      'lib.team.a/logs.process.labels',
      'lib.drop.first/logs.process.filter',
      'lib.team.b/logs.process.labels',
    ]);
    await receiverOf(graph, 'lib.drop.first/logs.process.filter').send([entry('debug: noise'), entry('kept')]);
    await receiverOf(graph, 'lib.team.b/logs.process.labels').send([entry('other')]);
    // The reference's labels: the id within the instance, and the instance as the module path.
    const dropped = (await exposeMetrics(registry)).split('\n').filter((l) => l.startsWith('logs_process_dropped_lines_total{'));
    expect(dropped).toEqual([
      'logs_process_dropped_lines_total{component_id="logs.process.filter",component_path="/lib.drop.first",reason="drop_stage"} 1',
    ]);
    await graph.stop();
    expect(output()).toBe(
      '{"labels":{"team":"a"},"line":"kept","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n' +
        '{"labels":{"team":"b"},"line":"other","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n',
    );
  });

  it('nests declarations, and an inner instance is named under the outer one', async () => {
    const config = `declare "outer" {
  argument "forward_to" { }
  declare "inner" {
    argument "forward_to" { }
    logs.process "p" {
      stage.static_labels { values = { level = "inner" } }
      forward_to = argument.forward_to.value
    }
    export "receiver" { value = logs.process.p.receiver }
  }
  inner "x" {
    forward_to = argument.forward_to.value
  }
  export "receiver" { value = inner.x.receiver }
}
outer "o" {
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
logs.process "front" {
  forward_to = [outer.o.receiver]
}
`;
    const { graph, output } = newGraph();
    graph.load(config, 'nested.alloy');
    expect(graph.componentIds()).toEqual(['logs.echo.out', 'outer.o/inner.x/logs.process.p', 'logs.process.front']);
    await receiverOf(graph, 'logs.process.front').send([entry('deep')]);
    await graph.stop();
    expect(output()).toBe(
      '{"labels":{"level":"inner"},"line":"deep","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n',
    );
  });

  it('lets a declaration of an imported module use another declared beside it', async () => {
    const module = `declare "label" {
  argument "forward_to" { }
  logs.process "p" {
    stage.static_labels { values = { by = "module" } }
    forward_to = argument.forward_to.value
  }
  export "receiver" { value = logs.process.p.receiver }
}
declare "front" {
  argument "forward_to" { }
  label "inner" { forward_to = argument.forward_to.value }
  export "receiver" { value = label.inner.receiver }
}
`;
    const config = `import.string "m" {
  content = ${JSON.stringify(module)}
}
m.front "f" { forward_to = [logs.echo.out.receiver] }
logs.echo "out" { }
`;
    const { graph, output } = newGraph();
    graph.load(config, 'beside.alloy');
    expect(graph.componentIds()).toEqual(['logs.echo.out', 'm.front.f/label.inner/logs.process.p']);
    await receiverOf(graph, 'm.front.f/label.inner/logs.process.p').send([entry('x')]);
    await graph.stop();
    expect(output()).toBe('{"labels":{"by":"module"},"line":"x","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n');
  });

  it('applies a changed argument on reload, keeping the running component', async () => {
    const config = (env: string) => `${PIPELINE_DECLARATION}
pipeline "default" {
  env        = "${env}"
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`;
    const { graph, output } = newGraph();
    graph.load(config('one'), 'reload.alloy');
    await graph.start();
    const before = graph.component('pipeline.default/logs.process.main');
    await receiverOf(graph, 'pipeline.default/logs.process.main').send([entry('a')]);
    expect(await graph.reload(config('two'), 'reload.alloy')).toEqual([]);
    expect(graph.component('pipeline.default/logs.process.main')).toBe(before);
    await receiverOf(graph, 'pipeline.default/logs.process.main').send([entry('b')]);
    await graph.stop();
    expect(output()).toBe(
      '{"labels":{"env":"one"},"line":"a","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n' +
        '{"labels":{"env":"two"},"line":"b","timestamp":"1970-01-01T00:00:01.000000000Z","structured_metadata":{}}\n',
    );
  });
});

describe('custom component errors', () => {
  it('positions an error inside a module file in that file and names the instance', () => {
    const { graph } = newGraph();
    const file = join(FIXTURES, 'broken/main.alloy');
    expect(errorsOf(() => graph.load(fixture('broken/main.alloy'), file))).toEqual([
      `${FIXTURES}/broken/bad.alloy:6:21: logs.process "main" > stage.regex: could not compile regular expression: error parsing regexp: missing closing ): \`(unclosed\` (in instance "broken.bad.one" at ${FIXTURES}/broken/main.alloy:5:1)`,
    ]);
  });

  it('refuses import.git and import.http in one positioned line each', () => {
    const { graph } = newGraph();
    const config = `import.git "remote" {
  repository = "https://example.com/modules.git"
}
import.http "web" {
  url = "https://example.com/module.alloy"
}
logs.echo "out" { }
`;
    expect(errorsOf(() => graph.load(config, 'remote.alloy'))).toEqual([
      'remote.alloy:1:1: import.git is not supported: copy the module next to the config and use import.file',
      'remote.alloy:4:1: import.http is not supported: copy the module next to the config and use import.file',
    ]);
  });

  it('reports unknown and missing arguments and unknown exports with suggestions', () => {
    const { graph } = newGraph();
    const config = `${PIPELINE_DECLARATION}
pipeline "a" {
  evn        = "prod"
  forward_to = [logs.echo.out.receiver]
}
pipeline "b" {
  env = "prod"
}
pipeline "c" {
  forward_to = [logs.echo.out.receiver]
}
logs.process "front" {
  forward_to = [pipeline.c.reciever]
}
logs.echo "out" { }
`;
    expect(errorsOf(() => graph.load(config, 'args.alloy'))).toEqual([
      'args.alloy:26:3: pipeline "a": unrecognized argument "evn" of custom component "pipeline" (did you mean "env"?)',
      'args.alloy:29:1: pipeline "b": missing required argument "forward_to" of custom component "pipeline"',
      'args.alloy:36:17: component "pipeline.c" has no export "reciever" (did you mean "receiver"?)',
    ]);
  });

  it('reports an undeclared argument read inside a declaration, and keeps components outside it out of scope', () => {
    const { graph } = newGraph();
    const config = `declare "p" {
  argument "forward_to" { }
  logs.process "main" {
    stage.static_labels { values = { env = argument.evn.value } }
    forward_to = [logs.echo.out.receiver]
  }
}
p "x" {
  forward_to = []
}
logs.echo "out" { }
`;
    expect(errorsOf(() => graph.load(config, 'scope.alloy'))).toEqual([
      'scope.alloy:4:44: argument "evn" is not declared in custom component "p" (in instance "p.x" at scope.alloy:8:1)',
      'scope.alloy:5:19: logs.process "main": component "p.x/logs.echo.out.receiver" does not exist or is out of scope (in instance "p.x" at scope.alloy:8:1)',
    ]);
  });

  it('suggests a declared custom component for a misspelt name, and requires a required argument even with a default', () => {
    const { graph } = newGraph();
    const config = `declare "pipeline" {
  argument "env" { default = "dev" }
}
pipline "a" { }
pipeline "b" { }
`;
    expect(errorsOf(() => graph.load(config, 'names.alloy'))).toEqual([
      'names.alloy:4:1: unrecognized component name "pipline" (did you mean "pipeline"?)',
      'names.alloy:5:1: pipeline "b": missing required argument "env" of custom component "pipeline"',
    ]);
  });

  it('reports misplaced blocks, a component in an imported module, a syntax error in it and an import cycle', () => {
    const { graph } = newGraph();
    const config = `argument "x" { }
declare "p" {
  argument "a" { optinal = true }
  argument "b" {
    optional = "yes"
    comment  = 1
  }
}
declare "p" { }
p "i" {
  a = 1
  b = 2
  http { }
}
import.string "bad" {
  content = "logs.echo \\"x\\" { }\\ndeclare \\"q\\" { }\\n"
}
import.string "broken" {
  content = "declare \\"q\\" {"
}
import.file "cycle" {
  filename = "cycle/a.alloy"
}
`;
    expect(errorsOf(() => graph.load(config, join(FIXTURES, 'misplaced.alloy')))).toEqual([
      `${FIXTURES}/misplaced.alloy:1:1: argument blocks belong inside a declare block`,
      `${FIXTURES}/misplaced.alloy:3:18: declare "p" > argument "a": unrecognized attribute name "optinal" (did you mean "optional"?)`,
      `${FIXTURES}/misplaced.alloy:5:16: declare "p" > argument "b": attribute "optional": expected bool`,
      `${FIXTURES}/misplaced.alloy:6:16: declare "p" > argument "b": attribute "comment": expected string`,
      `${FIXTURES}/misplaced.alloy:9:1: custom component "p" already declared at ${FIXTURES}/misplaced.alloy:2:1`,
      `${FIXTURES}/misplaced.alloy:13:3: p "i": unexpected block "http": a custom component takes arguments as attributes`,
      'import.string.bad:1:1: unexpected block "logs.echo" in an imported module; it may hold only declare and import blocks',
      'import.string.broken:1:14: expected "}" to close block "declare" opened at 1:13, got end of file',
      `${FIXTURES}/cycle/b.alloy:1:1: import.file "a": import cycle: ${FIXTURES}/misplaced.alloy -> ${FIXTURES}/cycle/a.alloy -> ${FIXTURES}/cycle/b.alloy -> ${FIXTURES}/cycle/a.alloy`,
    ]);
  });

  it('reports a module file that cannot be read, at its filename', () => {
    const { graph } = newGraph();
    const config = 'import.file "m" {\n  filename = "missing.alloy"\n}\n';
    expect(errorsOf(() => graph.load(config, join(FIXTURES, 'x.alloy')))).toEqual([
      `${FIXTURES}/x.alloy:2:14: import.file "m": cannot read module "missing.alloy": ENOENT`,
    ]);
  });
});

describe('rivulet validate on a config with modules', () => {
  it('accepts a config that imports a module', async () => {
    expect(await runCli(['validate', join(FIXTURES, 'main.alloy')])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('lists the errors of a module positioned in its file', async () => {
    expect(await runCli(['validate', join(FIXTURES, 'broken/main.alloy')])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${FIXTURES}/broken/bad.alloy:6:21: logs.process "main" > stage.regex: could not compile regular expression: error parsing regexp: missing closing ): \`(unclosed\` (in instance "broken.bad.one" at ${FIXTURES}/broken/main.alloy:5:1)\n`,
    });
  });
});
