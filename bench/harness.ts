import type { BenchRow } from './types.js';

/** Runs `fn` for `iterations` items and returns items per second (best of `repeats`). */
export function rate(iterations: number, fn: () => void, repeats = 3): number {
  let best = 0;
  for (let r = 0; r < repeats; r++) {
    const start = process.hrtime.bigint();
    fn();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    best = Math.max(best, iterations / seconds);
  }
  return best;
}

/** A row measured beside its baseline, with the ratio value / baseline. */
export function compared(name: string, value: number, unit: string, baselineName: string, baseline: number): BenchRow {
  return { name, value, unit, baseline: { name: baselineName, value: baseline }, ratio: value / baseline };
}

export interface Measured {
  readonly wallSeconds: number;
  /** CPU seconds of this process, user + system. */
  readonly cpuSeconds: number;
}

/** Wall and CPU (user + system) seconds of `run`. */
export async function measured(run: () => Promise<void>): Promise<Measured> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await run();
  const used = process.cpuUsage(cpu);
  return { wallSeconds: Number(process.hrtime.bigint() - started) / 1e9, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** Peak resident memory in MiB so far (high-water mark of this process). */
export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

export function formatRows(rows: readonly BenchRow[]): string {
  const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
  return rows
    .map((r) => {
      const base = r.baseline ? `   baseline ${r.baseline.name}: ${fmt(r.baseline.value)} ${r.unit}   ratio ${r.ratio?.toFixed(2)}×` : '';
      return `${r.name.padEnd(58)} ${fmt(r.value).padStart(14)} ${r.unit}${base}`;
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
