/**
 * Render rate of a typical `stage.template` template (a piped custom function and an if/else on
 * a comparison) over 200k renders, beside plain JavaScript string building that produces the
 * same text (the ceiling).
 */
import { parseTemplate, referenceFuncs } from '../lib/template/index.js';
import { compared, rate } from './harness.js';
import type { BenchRow } from './types.js';

const RENDERS = 200_000;
const TEMPLATE = '{{ .app | ToUpper }}-{{ if eq .level "error" }}E{{ else }}{{ .level }}{{ end }}';

const DATA: readonly Record<string, string>[] = [
  { app: 'loki', level: 'error', Value: 'x', Entry: 'line one' },
  { app: 'alloy', level: 'info', Value: 'y', Entry: 'line two' },
  { app: 'mimir', level: 'warn', Value: 'z', Entry: 'line three' },
  { app: 'tempo', level: 'debug', Value: 'w', Entry: 'line four' },
];

export async function benchTemplate(): Promise<BenchRow[]> {
  const template = parseTemplate(TEMPLATE, { funcs: referenceFuncs });
  let sink = 0;

  const renderAll = (): void => {
    for (let i = 0; i < RENDERS; i++) sink += template.execute(DATA[i & 3]).length;
  };
  const buildAll = (): void => {
    for (let i = 0; i < RENDERS; i++) {
      const d = DATA[i & 3]!;
      sink += `${d['app']!.toUpperCase()}-${d['level'] === 'error' ? 'E' : d['level']}`.length;
    }
  };

  // Warm both paths up so the comparison is between optimised code.
  renderAll();
  buildAll();
  const templateRate = rate(RENDERS, renderAll);
  const baselineRate = rate(RENDERS, buildAll);
  if (sink < 0) throw new Error('unreachable');
  return [compared('stage.template render (pipe + if/eq/else)', templateRate, 'renders/s', 'JS string building', baselineRate)];
}
