import type { Registry } from 'prom-client';
import type { Clock, ManualClock } from '../core/clock.js';
import type { EntryOutputFormat } from '../core/entry-json.js';
import { addMetricsSource, exposeMetrics } from '../core/metrics.js';
import type { PartitionItem } from '../core/threads/partition-messages.js';
import { PartitionedPipeline } from '../core/threads/partitioned-pipeline.js';
import type { PartitionPlan } from '../core/threads/partitioning.js';
import { type Io, writeTextFile } from './io.js';
import { inputEntries, type InputFormat } from './process-input.js';
import type { ProcessReport } from './process-report.js';

export interface WorkersRun {
  readonly io: Io;
  readonly text: string;
  readonly file: string;
  readonly plan: PartitionPlan;
  readonly workers: number;
  readonly format: EntryOutputFormat;
  readonly input: InputFormat;
  readonly clock: Clock;
  readonly manual: ManualClock | undefined;
  /** What `--metrics` writes. */
  readonly registry: Registry;
  /** Where the threads' families are counted: `registry`, or a logs.process block's registry on it. */
  readonly runRegistry: Registry;
  readonly report: ProcessReport;
  readonly metricsOut: string | undefined;
}

/** Batches read ahead of the output per thread: enough to keep every thread busy. */
const BATCHES_AHEAD_PER_WORKER = 2;

/**
 * `rivulet process --workers N`: the stage list on N threads, split by the partition plan. Each
 * thread formats its own output; the main thread reads, splits and writes in one thread's order
 * (see PartitionedPipeline), so a stateless list prints exactly what one thread prints, and a
 * stateful one keeps every stream's order.
 */
export async function processOnWorkers(run: WorkersRun): Promise<number> {
  const { io, report } = run;
  const write = (items: PartitionItem[]) => {
    for (const item of items) report.output(item as string);
  };
  let written: Promise<void> = Promise.resolve();
  const pool = new PartitionedPipeline({
    workers: run.workers,
    plan: run.plan,
    setup: {
      stagesText: run.text,
      file: run.file,
      output: run.format,
      ...(run.manual ? { virtualStartNs: String(run.clock.nowNs()) } : {}),
    },
    onEmit: (items) => {
      written = written.then(() => write(items));
    },
    onFailure: () => {},
  });
  try {
    await pool.ready();
    // Each batch's turn to be written; the oldest is awaited once too many are read ahead.
    const ahead: Promise<void>[] = [];
    for await (const { entries } of inputEntries(io.stdin, run.input, run.clock, report.malformedLine)) {
      report.read += entries.length;
      const { outputs } = pool.process(entries);
      written = written.then(async () => write(await outputs));
      ahead.push(written);
      if (ahead.length > BATCHES_AHEAD_PER_WORKER * run.workers) await ahead.shift();
    }
    await written;
    write(await pool.end());
    await written;
    report.flush();
    const threadFamilies = await pool.metrics();
    if (run.metricsOut !== undefined) {
      const remove = addMetricsSource(run.runRegistry, async () => threadFamilies);
      writeTextFile(run.metricsOut, await exposeMetrics(run.registry));
      remove();
    }
    return report.finish([await run.runRegistry.getMetricsAsJSON(), ...threadFamilies], run.input);
  } catch (err) {
    report.flush();
    io.stderr.write(`rivulet process: ${(err as Error).message}\n`);
    return 2;
  } finally {
    await pool.terminate();
  }
}
