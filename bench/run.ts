import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLinearTimeFallback } from '../core/regex';
import { formatRows } from './harness';
import type { BenchRow } from './types';

ensureLinearTimeFallback();
const here = dirname(fileURLToPath(import.meta.url));

/** Every bench module and the function it exports; each runs only if its file exists. */
const suites: Array<[file: string, exportName: string]> = [
  ['pipeline.ts', 'benchPipeline'],
  ['regex.ts', 'benchRegex'],
  ['template.ts', 'benchTemplate'],
  ['time.ts', 'benchTime'],
  ['stages.ts', 'benchStages'],
  ['flow.ts', 'benchFlow'],
];

const only = process.argv.slice(2);
for (const [file, exportName] of suites) {
  if (only.length > 0 && !only.some((o) => file.startsWith(o))) continue;
  if (!existsSync(join(here, file))) continue;
  const mod = (await import(`./${file}`)) as Record<string, () => Promise<BenchRow[]>>;
  const rows = await mod[exportName]!();
  console.log(`\n## ${file.replace(/\.ts$/, '')}\n${formatRows(rows)}`);
}
