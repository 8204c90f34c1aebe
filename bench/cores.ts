/**
 * `npm run bench -- cores`: how much of the end-to-end work is serial. The k8s end-to-end
 * pipeline (logs.source.api → logs.process → logs.write, the instance the end-to-end tests run)
 * runs as `rivulet run` of the built CLI; the load generator and the fake Loki run in another
 * process (load-child.ts), so what is measured is the instance's own work. After one unmeasured
 * pass of the load, BENCH_CORES_PASSES passes are measured from inside the instance (instance.ts):
 * the process's CPU time, the main thread's event-loop busy time (utilisation × wall) and each
 * pipeline thread's, all per entry.
 *
 * The serial fraction s is the main thread's share of the process's CPU time: the main thread
 * accepts, parses HTTP, decodes, batches, encodes and sends, and only the stages can move to
 * pipeline threads, so s is the part no number of threads spreads. The main thread's share is its
 * own CPU time (Linux /proc) where there is one: its event-loop busy time (utilisation × wall,
 * printed too) is wall time, which on a machine with more runnable threads than cores also counts
 * the time the thread waited for a core. Amdahl's law projects the speed-up on N cores,
 * 1 / (s + (1 − s)/N). Printed for `rivulet run`'s default (one pipeline
 * thread per core), for the stages in place (`--workers 1`) and for two shards (`--shards 2`,
 * where the main thread only serves HTTP and reads bodies), the last with its CPU per entry and
 * throughput beside in place's.
 */
import { availableParallelism } from 'node:os';
import { forwarderConfig } from '../test/e2e/configs.js';
import { startInstance, startLoad, type InstanceMode, type LoadProcess } from './instance.js';
import { formatBeside, formatCores, type CoresFigures } from './reports.js';

const PASSES = Number(process.env.BENCH_CORES_PASSES ?? 1);

async function measure(load: LoadProcess, mode: InstanceMode): Promise<CoresFigures> {
  const instance = await startInstance(forwarderConfig(load.sinkUrl, { write: { batch_wait: '"20ms"' } }), mode);
  try {
    await load.pass(instance.apiUrl, true);
    const figures = await instance.measure(async () => {
      for (let pass = 0; pass < PASSES; pass++) await load.pass(instance.apiUrl, true);
    });
    const workers = 'workers' in mode ? mode.workers : 1;
    return {
      ...figures,
      entries: load.entries * PASSES,
      workers,
      ...('shards' in mode ? { shards: mode.shards } : {}),
      cores: availableParallelism(),
    };
  } finally {
    await instance.stop();
  }
}

export async function benchCores(): Promise<string> {
  const load = await startLoad();
  try {
    const cores = availableParallelism();
    const reports: string[] = [];
    if (cores > 1) reports.push(formatCores(await measure(load, { workers: cores })));
    const inPlace = await measure(load, { workers: 1 });
    reports.push(formatCores(inPlace));
    const sharded = await measure(load, { shards: 2 });
    reports.push(`${formatCores(sharded)}\n${formatBeside('2 shards', sharded, inPlace)}`);
    return reports.join('\n\n');
  } finally {
    await load.close();
  }
}
