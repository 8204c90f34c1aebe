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
});
