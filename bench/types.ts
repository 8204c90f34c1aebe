/** One measured figure, optionally beside a baseline measured in the same run. */
export type BenchRow = { name: string; value: number; unit: string; baseline?: { name: string; value: number }; ratio?: number };
