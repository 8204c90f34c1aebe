/**
 * What every bench module measures with. Ratios are of CPU seconds (user + system of this process,
 * or of the measured child), because on a shared machine a wall-clock ratio mostly says how busy
 * the machine was; the wall-clock figures are printed beside them.
 */
import type { BenchRow } from './types.js';

/** A figure in both clocks: from CPU seconds (user + system) and from wall seconds. */
export interface Timed {
  readonly cpu: number;
  readonly wall: number;
}

export interface Measured {
  readonly wallSeconds: number;
  /** CPU seconds of this process, user + system. */
  readonly cpuSeconds: number;
}

const cpuSecondsSince = (from: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
};

/** Wall and CPU (user + system) seconds of a synchronous `run`. */
export function measuredSync(run: () => void): Measured {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  run();
  return { cpuSeconds: cpuSecondsSince(cpu), wallSeconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** Wall and CPU (user + system) seconds of `run`. */
export async function measured(run: () => Promise<void>): Promise<Measured> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await run();
  return { cpuSeconds: cpuSecondsSince(cpu), wallSeconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** `count` items over `m`: items per CPU second and per wall second. */
export function perSecond(count: number, m: Measured): Timed {
  return { cpu: count / m.cpuSeconds, wall: count / m.wallSeconds };
}

/** Both clocks' figures times `factor` (entries/s to MiB/s, say). */
export function scaled(t: Timed, factor: number): Timed {
  return { cpu: t.cpu * factor, wall: t.wall * factor };
}

/** The higher of two rates in each clock. */
export function faster(a: Timed, b: Timed): Timed {
  return { cpu: Math.max(a.cpu, b.cpu), wall: Math.max(a.wall, b.wall) };
}

/**
 * Runs `fn` for `iterations` items `repeats` times: the best items per CPU second and the best
 * items per wall second (a busy spell of the machine only ever lowers either).
 */
export function rate(iterations: number, fn: () => void, repeats = 3): Timed {
  let best: Timed = { cpu: 0, wall: 0 };
  for (let r = 0; r < repeats; r++) best = faster(best, perSecond(iterations, measuredSync(fn)));
  return best;
}

/** The middle value of `values` (the upper middle for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

/**
 * A row measured beside its baseline. Given Timed figures, the value and the ratio are the CPU
 * ones and the wall ones go beside; given plain numbers (a size), the ratio is of those.
 */
export function compared(name: string, value: Timed | number, unit: string, baselineName: string, baseline: Timed | number): BenchRow {
  if (typeof value === 'number' || typeof baseline === 'number') {
    const [v, b] = [typeof value === 'number' ? value : value.cpu, typeof baseline === 'number' ? baseline : baseline.cpu];
    return { name, value: v, unit, baseline: { name: baselineName, value: b }, ratio: v / b };
  }
  return {
    name,
    value: value.cpu,
    wall: value.wall,
    unit,
    baseline: { name: baselineName, value: baseline.cpu, wall: baseline.wall },
    ratio: value.cpu / baseline.cpu,
    wallRatio: value.wall / baseline.wall,
  };
}

/**
 * A row from runs of a subject and its baseline taken in turns (`pairs[i]` = the subject's and
 * the baseline's run of round i). `figure` turns seconds into what the row shows (entries/s,
 * µs per entry, or the seconds themselves). Each side shows its median run; the ratio is the
 * median of the per-pair ratios, so a busy spell that falls on one round weighs on that pair alone.
 */
export function comparedRuns(
  name: string,
  unit: string,
  baselineName: string,
  pairs: readonly (readonly [subject: Measured, baseline: Measured])[],
  figure: (seconds: number) => number,
): BenchRow {
  const side = (i: 0 | 1, clock: keyof Measured) => median(pairs.map((p) => figure(p[i][clock])));
  const ratio = (clock: keyof Measured) => median(pairs.map(([s, b]) => figure(s[clock]) / figure(b[clock])));
  return {
    name,
    value: side(0, 'cpuSeconds'),
    wall: side(0, 'wallSeconds'),
    unit,
    baseline: { name: baselineName, value: side(1, 'cpuSeconds'), wall: side(1, 'wallSeconds') },
    ratio: ratio('cpuSeconds'),
    wallRatio: ratio('wallSeconds'),
  };
}

/** Peak resident memory in MiB so far (high-water mark of this process). */
export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));

/**
 * One line a row: the CPU figure (wall beside it in brackets), the baseline's, and the CPU ratio
 * with the wall ratio beside it.
 */
export function formatRows(rows: readonly BenchRow[]): string {
  const withWall = (value: number, wall: number | undefined) => `${fmt(value)}${wall === undefined ? '' : ` (wall ${fmt(wall)})`}`;
  return rows
    .map((r) => {
      const clock = r.wall === undefined ? '' : ' CPU';
      const ratio = r.wallRatio === undefined ? `${r.ratio?.toFixed(2)}×` : `${r.ratio?.toFixed(2)}× CPU (wall ${r.wallRatio.toFixed(2)}×)`;
      const base = r.baseline
        ? `   baseline ${r.baseline.name}: ${withWall(r.baseline.value, r.baseline.wall)} ${r.unit}   ratio ${ratio}`
        : '';
      return `${r.name.padEnd(58)} ${fmt(r.value).padStart(14)} ${r.unit}${clock}${r.wall === undefined ? '' : ` (wall ${fmt(r.wall)})`}${base}`;
    })
    .join('\n');
}

/** How long one repeat of a calibrated measurement should last (BENCH_REPEAT_SECONDS). */
export const REPEAT_SECONDS = Number(process.env.BENCH_REPEAT_SECONDS ?? 0.5);

/** How many calls of `perEntry` make one repeat last about REPEAT_SECONDS, from a short probe. */
export function calibrate(perEntry: (i: number) => void, probe = 2_000): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < probe; i++) perEntry(i);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return Math.max(probe, Math.round((probe * REPEAT_SECONDS) / Math.max(seconds, 1e-6)));
}
