/**
 * One measured figure, optionally beside a baseline measured in the same run. `value` and
 * `baseline.value` come from CPU time (user + system) wherever the bench can read it, and `ratio`
 * is their ratio (per pair of runs where runs take turns); `wall` and `wallRatio` are the same
 * figures from wall-clock time, printed beside. A row with neither clock (a size, a count) has
 * `value` alone.
 */
export type BenchRow = {
  name: string;
  value: number;
  unit: string;
  wall?: number;
  baseline?: { name: string; value: number; wall?: number };
  ratio?: number;
  wallRatio?: number;
};
