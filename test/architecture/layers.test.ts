import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, layerViolations } from '../support/import-graph.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

describe('the layered house', () => {
  const graph = importGraph(root);

  it('reads the whole source tree', () => {
    expect(graph.has('lib/config/parser.ts')).toBe(true);
    expect(graph.get('bin/rivulet.ts')).toEqual(['cli/main.ts']);
    expect(graph.size).toBeGreaterThan(250);
  });

  it('keeps every layer to the layers below it', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('catches a broken tree', () => {
    const broken = importGraph(join(root, 'test/fixtures/layers/broken'));
    expect(layerViolations(broken)).toEqual([
      'core/b.ts -> operators/c.ts (core may not import operators)',
      'lib/a.ts -> core/b.ts (lib may not import core)',
      'operators/c.ts -> sinks/d.ts (operators may not import sinks)',
      'receivers/e.ts -> cli/f.ts (receivers may not import cli)',
    ]);
    expect(importCycles(broken)).toEqual([['core/b.ts', 'operators/c.ts', 'sinks/d.ts']]);
  });

  it("reads the package's own name as the face and rivulet/testing as testing/index.ts", () => {
    const selfImport = importGraph(join(root, 'test/fixtures/layers/self-import'));
    expect(selfImport.get('core/kernel.ts')).toEqual(['index.ts']);
    expect(layerViolations(selfImport)).toEqual([
      'core/kernel.ts -> index.ts (core may not import face)',
      'lib/text.ts -> testing/index.ts (lib may not import testing)',
    ]);
    expect(importCycles(selfImport)).toEqual([['core/kernel.ts', 'index.ts']]);
  });

  it('keeps the kernel below the rooms of core/, counts worker URLs as imports, and reads bench/ and scripts/', () => {
    const rooms = importGraph(join(root, 'test/fixtures/layers/rooms'));
    expect(rooms.get('core/threads/pool.ts')).toEqual(['core/inspect/recorder-worker.ts']);
    expect(layerViolations(rooms)).toEqual([
      'bench/run.ts -> bin/main.ts (bench may not import bin)',
      'core/kernel.ts -> core/threads/pool.ts (core may not import core/threads)',
      'core/runtime/graph.ts -> core/inspect/recorder-worker.ts (core may not import core/inspect)',
      'core/threads/pool.ts -> core/inspect/recorder-worker.ts (core/threads may not import core/inspect)',
      'lib/util.ts -> scripts/gen.ts (lib may not import scripts)',
      'operators/stage.ts -> core/components/engine.ts (operators may not import core/components)',
    ]);
    expect(importCycles(rooms)).toEqual([['core/inspect/recorder-worker.ts', 'core/kernel.ts', 'core/threads/pool.ts']]);
  });

  it('sees the pipeline worker the library starts', () => {
    expect(graph.get('core/threads/worker-modules.ts')).toEqual(
      expect.arrayContaining(['core/threads/pipeline-worker-source.mjs', 'core/threads/pipeline-worker.ts']),
    );
    expect(graph.get('core/threads/pipeline-worker-source.mjs')).toEqual(['core/threads/pipeline-worker.ts']);
  });
});
