import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLinearTimeFallback } from '../lib/regex/index.js';
import { formatRows } from './harness.js';
import type { BenchRow } from './types.js';

// Set before any user pattern is compiled, as every Rivulet entry point does.
ensureLinearTimeFallback();
const here = dirname(fileURLToPath(import.meta.url));
const support = new Set(['child-cpu.ts', 'harness.ts', 'instance.ts', 'load-child.ts', 'pushes.ts', 'reports.ts', 'run.ts', 'types.ts']);

/**
 * Runs every bench module in this folder (each exports `bench…(): Promise<BenchRow[] | string>`:
 * rows, or a report printed as it is), or only those whose file name starts with one of the
 * arguments: `npm run bench -- pipeline regex`, `npm run bench -- cores`.
 */
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !support.has(f))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort((a, b) => (a === 'pipeline.ts' ? -1 : b === 'pipeline.ts' ? 1 : a.localeCompare(b)));

for (const file of files) {
  const mod = (await import(`./${file}`)) as Record<string, unknown>;
  for (const [name, fn] of Object.entries(mod)) {
    if (!name.startsWith('bench') || typeof fn !== 'function') continue;
    const result = (await (fn as () => Promise<BenchRow[] | string>)()) ?? [];
    console.log(`\n## ${file.replace(/\.ts$/, '')} — ${name}\n${typeof result === 'string' ? result : formatRows(result)}`);
  }
}
