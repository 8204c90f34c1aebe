/**
 * The printed forms of the `cores` and `costs` benches, from their figures alone (so a test can
 * hold them to exact lines without running anything).
 */

/** What `npm run bench -- cores` measured in the Rivulet process, over `entries` entries. */
export interface CoresFigures {
  readonly entries: number;
  /** Pipeline threads the instance ran (`--workers`; 1: stages in place). */
  readonly workers: number;
  /** Shard threads the instance ran (`--shards`), if sharded: `threadBusySeconds` are theirs. */
  readonly shards?: number;
  readonly cores: number;
  readonly wallSeconds: number;
  /** CPU seconds (user + system) of the whole process, every thread. */
  readonly cpuSeconds: number;
  /** The main thread's event-loop busy time: utilisation × wall. */
  readonly mainBusySeconds: number;
  /** The main thread's own CPU seconds, where the system says (Linux /proc). */
  readonly mainCpuSeconds?: number;
  /** Each pipeline thread's event-loop busy time. */
  readonly threadBusySeconds: readonly number[];
  readonly peakRssMiB: number;
}

/** Core counts Amdahl's projection is printed for. */
export const PROJECTED_CORES = [2, 4, 8, 16] as const;

/**
 * s = the main thread's time / the process's CPU time: the part of the work only the main thread
 * does. The main thread's time is its own CPU time where the system says, else its event-loop busy
 * time; busy time is wall time, and on a loaded machine it also counts the time the thread waited
 * for a core (the one figure that can make s exceed 1, hence the cap).
 */
export function serialFraction(f: Pick<CoresFigures, 'mainBusySeconds' | 'mainCpuSeconds' | 'cpuSeconds'>): number {
  return Math.min(1, (f.mainCpuSeconds ?? f.mainBusySeconds) / f.cpuSeconds);
}

/** Amdahl's speed-up on `cores` cores when the fraction `serial` of the work cannot be spread. */
export function amdahl(serial: number, cores: number): number {
  return 1 / (serial + (1 - serial) / cores);
}

const micros = (seconds: number, entries: number) => ((seconds * 1e6) / entries).toFixed(2);

export function formatCores(f: CoresFigures): string {
  const perEntry = (seconds: number) => micros(seconds, f.entries);
  const threads =
    f.shards !== undefined
      ? `${f.shards} shards (decoding, stages and sending on shard threads)`
      : f.workers > 1
        ? `${f.workers} pipeline threads`
        : 'stages in place (no pipeline threads)';
  const thread = f.shards !== undefined ? 'shard thread' : 'pipeline thread';
  const s = serialFraction(f);
  return [
    `k8s end to end (logs.source.api → logs.process → logs.write), ${f.entries.toLocaleString('en-US')} entries, ${threads}, ${f.cores} cores`,
    '',
    '| per entry | µs |',
    '|---|---:|',
    `| CPU, whole process (user + system) | ${perEntry(f.cpuSeconds)} |`,
    `| main thread busy (event-loop utilisation × wall) | ${perEntry(f.mainBusySeconds)} |`,
    ...(f.mainCpuSeconds === undefined ? [] : [`| main thread CPU | ${perEntry(f.mainCpuSeconds)} |`]),
    ...f.threadBusySeconds.map((busy, i) => `| ${thread} ${i + 1} busy | ${perEntry(busy)} |`),
    `| wall | ${perEntry(f.wallSeconds)} |`,
    '',
    `serial fraction: ${s.toFixed(2)}`,
    f.mainCpuSeconds === undefined ? '(s = main thread busy / process CPU)' : '(s = main thread CPU / process CPU)',
    'Amdahl projection 1 / (s + (1 − s)/N):',
    ...PROJECTED_CORES.map((n) => `  N = ${n}: ${amdahl(s, n).toFixed(2)}×`),
    `peak RSS: ${Math.round(f.peakRssMiB)} MiB`,
  ].join('\n');
}

/**
 * A mode beside the stages in place, measured in the same run: its CPU per entry and its
 * throughput (entries per wall second) as multiples of in place's.
 */
export function formatBeside(name: string, mode: CoresFigures, inPlace: CoresFigures): string {
  const cpu = mode.cpuSeconds / mode.entries / (inPlace.cpuSeconds / inPlace.entries);
  const throughput = mode.entries / mode.wallSeconds / (inPlace.entries / inPlace.wallSeconds);
  return `${name} beside in place: CPU per entry ${cpu.toFixed(2)}×, throughput ${throughput.toFixed(2)}×`;
}

/** One part of the per-entry cost table. */
export interface CostPart {
  readonly part: string;
  /** CPU seconds per entry. */
  readonly seconds: number;
  /** How it was isolated, in a few words. */
  readonly method: string;
}

/** The per-entry cost table in markdown: each part's µs of CPU, its share of the total, its method. */
export function formatCosts(parts: readonly CostPart[]): string {
  const total = parts.reduce((sum, p) => sum + p.seconds, 0);
  const us = (seconds: number) => (seconds * 1e6).toFixed(2);
  return [
    '| part | µs CPU per entry | share | measured as |',
    '|---|---:|---:|---|',
    ...parts.map((p) => `| ${p.part} | ${us(p.seconds)} | ${Math.round((p.seconds / total) * 100)} % | ${p.method} |`),
    `| total | ${us(total)} | 100 % | the whole pipeline |`,
  ].join('\n');
}

/** The lines around the README's per-entry cost table, which `npm run bench -- costs` rewrites. */
export const COSTS_BEGIN = '<!-- per-entry costs: written by `BENCH_COSTS_README=1 npm run bench -- costs` -->';
export const COSTS_END = '<!-- end of per-entry costs -->';

/**
 * `text` with what lies between the `begin` and `end` lines replaced by `body`; throws when the
 * lines are missing or out of order, so a README that lost them is not silently left stale.
 */
export function replaceBetween(text: string, begin: string, end: string, body: string): string {
  const from = text.indexOf(begin);
  const to = text.indexOf(end, from + begin.length);
  if (from < 0 || to < 0) throw new Error(`the lines "${begin}" and "${end}" are not both there, in that order`);
  return `${text.slice(0, from + begin.length)}\n${body}\n${text.slice(to)}`;
}
