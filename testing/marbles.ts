/**
 * Marble tests for time-based stages: the stage is built with an RxJS `TestScheduler` as its
 * clock, so `cold('a 2999ms b |')` plays out in virtual time and `expectObservable` sees exactly
 * when each entry leaves.
 */
import { deepStrictEqual } from 'node:assert/strict';
import { Registry } from 'prom-client';
import { map, type Observable } from 'rxjs';
import { TestScheduler, type RunHelpers } from 'rxjs/testing';
import type { Clock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { StageFactory } from '../core/stage.js';
import { DEFAULT_START_NS, seededRandom, stageSpec, type StageConfigInput } from './run-stage.js';

/** What a marble test body gets: RxJS's run helpers plus the stage wired to virtual time. */
export interface MarbleHelpers extends RunHelpers {
  /**
   * Applies the stage to `source` as a pipeline would: each entry is copied and its labels are
   * seeded into `extracted` first, so the values of a marble diagram are never mutated.
   */
  readonly stage: (source: Observable<Entry>) => Observable<Entry>;
  /** The stage's clock: the test scheduler, with `nowNs()` counted from `startNs`. */
  readonly clock: Clock;
  /** Where the stage's counters (`logs_process_dropped_lines_total`, …) go. */
  readonly registry: Registry;
}

export interface MarbleOptions {
  /** The wall-clock time of frame 0; default 2023-11-14T22:13:20Z. */
  readonly startNs?: bigint;
  readonly random?: () => number;
  /** Compares actual and expected frames; default Node's `assert.deepStrictEqual`. */
  readonly assertDeepEqual?: (actual: unknown, expected: unknown) => void;
}

/**
 * Runs a marble test of one stage on an RxJS TestScheduler (one frame is one millisecond).
 *
 * @example
 * marbles(multiline, { firstline: '^start' }, ({ cold, expectObservable, stage }) => {
 *   const input = cold('a b 3s |', { a: entry('start'), b: entry('more') });
 *   expectObservable(stage(input).pipe(map((e) => e.line))).toBe('3002ms x |', { x: 'start\nmore' });
 * });
 */
export function marbles<C>(
  stage: StageFactory<C>,
  config: StageConfigInput<C>,
  body: (helpers: MarbleHelpers) => void,
  options: MarbleOptions = {},
): void {
  const scheduler = new TestScheduler(options.assertDeepEqual ?? ((actual, expected) => deepStrictEqual(actual, expected)));
  const startNs = options.startNs ?? DEFAULT_START_NS;
  const clock: Clock = {
    scheduler,
    nowNs: () => startNs + BigInt(Math.round(scheduler.now() * 1e6)),
  };
  const registry = new Registry();
  const built = buildPipeline([stageSpec(stage, config)], { clock, registry, random: options.random ?? seededRandom(1) });
  try {
    scheduler.run((helpers) => body({ ...helpers, stage: (source) => built.operator(source.pipe(map(ingress))), clock, registry }));
  } finally {
    built.dispose();
  }
}
