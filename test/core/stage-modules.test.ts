import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { loadStageList } from '../../core/process.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { stageDefinition, unregisterStage, type StageFactory } from '../../core/stage.js';
import {
  loadConfigStageModules,
  loadedStageModuleFiles,
  loadStageModules,
  StageModuleError,
  stageImportsOf,
} from '../../core/stage-modules.js';
import { runStage } from '../../testing/index.js';
import '../../index.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-stage-modules-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const name of ['kit_upper', 'kit_plain', 'kit_reverse']) unregisterStage(name);
});

const coreUrl = (file: string) => pathToFileURL(join(import.meta.dirname, '../../core', file)).href;

/** Writes a module into the temp folder and returns its file name. */
function module(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

const upper = module(
  'upper.ts',
  `import { defineStage } from ${JSON.stringify(coreUrl('stage.ts'))};
export const upper = defineStage({
  name: 'kit_upper',
  doc: 'Upper-cases the line.',
  fields: {},
  build: () => ({ kind: 'map', process: (entry) => ((entry.line = entry.line.toUpperCase()), entry) }),
});
`,
);

describe('loadStageModules', () => {
  it('imports modules relative to the base folder and registers the stages they export', async () => {
    expect(await loadStageModules([`./${upper}`], dir)).toEqual([{ path: `./${upper}`, file: join(dir, upper), stages: ['kit_upper'] }]);
    expect(stageDefinition('kit_upper')?.doc).toBe('Upper-cases the line.');
  });

  it('registers a stage again after it was unregistered, and loading twice is harmless', async () => {
    await loadStageModules([upper], dir);
    unregisterStage('kit_upper');
    await loadStageModules([upper, upper], dir);
    const { upper: factory } = (await import(pathToFileURL(join(dir, upper)).href)) as { upper: StageFactory<Record<string, never>> };
    expect(stageDefinition('kit_upper')).toBe(factory.definition);
    const run = runStage(factory, 'stage.kit_upper { }', [
      { labels: {}, line: 'abc', timestamp: 0n, structuredMetadata: [], extracted: {} },
    ]);
    expect(run.outputs.map((e) => e.line)).toEqual(['ABC']);
  });

  it('accepts a plain stage definition as an export', async () => {
    const plain = module(
      'plain.mjs',
      `export default { name: 'kit_plain', doc: 'Passes entries on.', fields: {}, build: () => ({ kind: 'map', process: (e) => e }) };\n`,
    );
    expect((await loadStageModules([plain], dir))[0]!.stages).toEqual(['kit_plain']);
    expect(loadStageList('stage.kit_plain { }', 'c.alloy')).toHaveLength(1);
  });

  it('names for other threads the modules whose stages are registered and those that define components only', async () => {
    const sinkOnly = module(
      'sink-only.ts',
      `import { defineComponent, healthy } from ${JSON.stringify(coreUrl('runtime/component.ts'))};
export const sink = defineComponent({
  name: 'logs.kit_sink',
  doc: 'Takes nothing.',
  exportNames: [],
  fields: {},
  build: () => ({ exports: {}, health: () => healthy(), update() {}, async stop() {} }),
});
`,
    );
    await loadStageModules([upper, sinkOnly], dir);
    expect(loadedStageModuleFiles()).toEqual(expect.arrayContaining([join(dir, upper), join(dir, sinkOnly)]));
    unregisterStage('kit_upper');
    expect(loadedStageModuleFiles()).not.toContain(join(dir, upper));
    expect(loadedStageModuleFiles()).toContain(join(dir, sinkOnly));
    await loadStageModules([upper], dir);
  });

  it('rejects a module that cannot be imported', async () => {
    await expect(loadStageModules(['./missing.ts'], dir)).rejects.toThrow(/^stage module "\.\/missing\.ts": cannot be loaded: /);
  });

  it('rejects a module that exports no stage', async () => {
    const empty = module('empty.mjs', 'export const answer = 42;\n');
    await expect(loadStageModules([empty], dir)).rejects.toThrow(
      new StageModuleError(empty, 'exports no stage; export the factory that defineStage returns'),
    );
  });

  it('rejects a stage whose name another stage already holds', async () => {
    const clash = module(
      'clash.mjs',
      `export default { name: 'json', doc: 'Not the real one.', fields: {}, build: () => ({ kind: 'map', process: (e) => e }) };\n`,
    );
    await expect(loadStageModules([clash], dir)).rejects.toThrow('stage module "clash.mjs": stage "json" is already defined');
  });
});

describe('stages.import blocks', () => {
  it('reads the label and the path of each import', () => {
    const imports = stageImportsOf('stages.import "a" {\n  path = "./a.ts"\n}\nstages.import "b" { path = "./b.ts" }\n', 'c.alloy');
    expect(imports.map((i) => [i.label, i.path, i.pathPos.line, i.pathPos.col])).toEqual([
      ['a', './a.ts', 2, 3],
      ['b', './b.ts', 4, 21],
    ]);
  });

  it('rejects imports without a label, with a repeated label or without a path, with positions', () => {
    const text =
      'stages.import { path = "x" }\nstages.import "a" { path = "x" }\nstages.import "a" { path = "y" }\nstages.import "b" { }\nstages.import "c" { path = 1 + true }\n';
    expect(() => stageImportsOf(text, 'c.alloy')).toThrow(
      [
        'c.alloy:1:1: block "stages.import" needs a label: stages.import "NAME" { path = "…" }',
        'c.alloy:3:1: stages.import "a" already declared at c.alloy:2:1',
        'c.alloy:4:1: stages.import "b": missing required attribute "path"',
      ].join('\n'),
    );
  });

  it('loads the modules relative to the config file and places a failure at its path', async () => {
    const config = join(dir, 'pipeline.alloy');
    const text = `stages.import "upper" { path = "./${upper}" }\nstages.import "gone" {\n  path = "./gone.ts"\n}\n`;
    await expect(loadConfigStageModules(text, config)).rejects.toThrow(
      new RegExp(`^${config.replace(/[.]/g, '\\.')}:3:3: stages\\.import "gone": stage module "\\./gone\\.ts": cannot be loaded: `),
    );
    expect(await loadConfigStageModules(`stages.import "upper" { path = "./${upper}" }\n`, config)).toEqual([
      { path: `./${upper}`, file: join(dir, upper), stages: ['kit_upper'] },
    ]);
  });

  it('is skipped by loadStageList, next to bare stages or one logs.process block', async () => {
    await loadStageModules([upper], dir);
    const imports = 'stages.import "upper" { path = "./upper.ts" }\n';
    expect(loadStageList(`${imports}stage.kit_upper { }\n`, 'c.alloy').map((s) => s.def.name)).toEqual(['kit_upper']);
    expect(
      loadStageList(`${imports}logs.process "p" {\n  stage.kit_upper { }\n  forward_to = []\n}\n`, 'c.alloy').map((s) => s.def.name),
    ).toEqual(['kit_upper']);
  });

  it('is skipped by the component graph', async () => {
    await loadStageModules([upper], dir);
    const graph = new ComponentGraph((id) => ({
      id,
      clock: new ManualClock(),
      registry: new Registry(),
      stdout: process.stdout,
      log: () => {},
    }));
    graph.load(
      'stages.import "upper" { path = "./upper.ts" }\nlogs.process "p" {\n  stage.kit_upper { }\n  forward_to = []\n}\n',
      'c.alloy',
    );
    expect(graph.health().map((h) => h.id)).toEqual(['logs.process.p']);
    await graph.stop();
  });
});
