import { Registry } from 'prom-client';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { loadStageList, startProcessRun } from '../../core/process.js';
import '../../operators/index.js';

export interface RunResult {
  readonly entries: Entry[];
  readonly registry: Registry;
  readonly clock: ManualClock;
}

/** Makes an entry with defaults for the parts a test does not care about. */
export function entry(line: string, labels: Record<string, string> = {}, extra: Partial<Entry> = {}): Entry {
  return { labels, line, timestamp: 1_700_000_000_000_000_000n, structuredMetadata: [], extracted: {}, ...extra };
}

/**
 * Runs entries through stage blocks written in the config language, the same way `rivulet
 * process` does, on a virtual clock; returns what was forwarded after the input ended.
 */
export function runConfig(config: string, inputs: readonly Entry[], options: { startNs?: bigint; random?: () => number } = {}): RunResult {
  const clock = new ManualClock(options.startNs ?? 1_700_000_000_000_000_000n);
  const registry = new Registry();
  const entries: Entry[] = [];
  const run = startProcessRun(loadStageList(config, 'test.alloy'), {
    clock,
    registry,
    random: options.random,
    onEntry: (e) => entries.push(e),
  });
  for (const input of inputs) run.push(input);
  run.end();
  clock.runAll();
  run.dispose();
  return { entries, registry, clock };
}
