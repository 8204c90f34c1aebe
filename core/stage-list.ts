import { Registry } from 'prom-client';
import { ManualClock } from './clock.js';
import { buildPipeline } from './pipeline.js';
import type { Sandbox } from './sandbox.js';
import type { StageSpec } from './stage.js';
import type { StageInfo } from './trace.js';

/** The stages of a loaded config, flattened in source order, with lookups the tracer needs. */
export interface StageList {
  readonly infos: StageInfo[];
  readonly specs: StageSpec[];
  /** The stage a trace event's path belongs to. */
  indexOf(path: readonly string[]): number;
  /** Whether `stage` lies inside the `stage.match` at `ancestor` (at any depth). */
  isInside(stage: number, ancestor: number): boolean;
  /** Whether the stage is a `stage.match` (its step says whether the entry took the branch). */
  isMatch(stage: number): boolean;
}

/**
 * Flattens a stage list. Each stage is built once on its own to learn whether it works per entry
 * (a `map` stage: an entry that does not come out was dropped) or is an operator (an entry that
 * does not come out is held) — the trace events alone cannot tell a drop from a hold.
 */
export function stageList(specs: readonly StageSpec[], sandbox?: Sandbox): StageList {
  const infos: StageInfo[] = [];
  const flat: StageSpec[] = [];
  // Trace events carry the spec's own path array, so identity finds the stage even when two
  // blocks have the same path (two `stage.labels` in a row).
  const byPath = new Map<readonly string[], number>();
  const byText = new Map<string, number>();
  const walk = (list: readonly StageSpec[], parent: number | null, depth: number) => {
    for (const spec of list) {
      const index = infos.length;
      infos.push({
        index,
        path: [...spec.path],
        name: `stage.${spec.def.name}`,
        line: spec.block?.pos.line ?? 0,
        col: spec.block?.pos.col ?? 0,
        parent,
        depth,
        kind: probeKind(spec, sandbox),
      });
      flat.push(spec);
      byPath.set(spec.path, index);
      if (!byText.has(spec.path.join('\u0000'))) byText.set(spec.path.join('\u0000'), index);
      const nested = spec.config.stages;
      if (Array.isArray(nested)) walk(nested as StageSpec[], index, depth + 1);
    }
  };
  walk(specs, null, 0);
  return {
    infos,
    specs: flat,
    indexOf: (path) => byPath.get(path) ?? byText.get(path.join('\u0000')) ?? -1,
    isInside: (stage, ancestor) => {
      for (let p = infos[stage]?.parent ?? null; p !== null; p = infos[p]!.parent) if (p === ancestor) return true;
      return false;
    },
    isMatch: (stage) => flat[stage]?.def.name === 'match',
  };
}

function probeKind(spec: StageSpec, sandbox: Sandbox | undefined): 'map' | 'operator' {
  const built = buildPipeline([spec], { clock: new ManualClock(), registry: new Registry(), random: () => 0.5, sandbox });
  try {
    return built.process ? 'map' : 'operator';
  } finally {
    built.dispose();
  }
}
