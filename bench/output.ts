import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Entry } from '../core/entry.js';
import { entryToJson } from '../core/entry-json.js';
import { formatRFC3339Nano } from '../lib/time/rfc3339.js';
import { timedNode } from './child-cpu.js';
import { calibrate, compared, comparedRuns, faster, rate, type Measured, type Timed } from './harness.js';
import type { BenchRow } from './types.js';

/** The JSON form as it was first written (a view object through JSON.stringify with a replacer): the baseline. */
function viewJson(entry: Entry): string {
  const labels: Record<string, string> = {};
  for (const name of Object.keys(entry.labels).sort()) labels[name] = entry.labels[name]!;
  const view = {
    labels,
    line: entry.line,
    timestamp: formatRFC3339Nano(entry.timestamp),
    structured_metadata: Object.fromEntries(entry.structuredMetadata.map((p) => [p.name, p.value])),
    extracted: entry.extracted,
  };
  return JSON.stringify(view, (_key, value) => (typeof value === 'bigint' ? Number(value) : value));
}

/**
 * `rivulet process` output serialization on Kubernetes-shaped entries (four labels, one metadata
 * pair, a JSON line and its extracted fields), 1,000 distinct entries a millisecond apart.
 */
export async function benchOutput(): Promise<BenchRow[]> {
  const entries: Entry[] = Array.from({ length: 1000 }, (_, i) => ({
    labels: { namespace: 'shop', pod: `checkout-${i % 7}`, container: 'app', level: i % 5 === 0 ? 'warn' : 'info' },
    line: `{"level":"info","msg":"order ${i} placed","duration_ms":${i % 97},"trace_id":"${(i * 7919).toString(16)}"}`,
    timestamp: 1_764_061_200_000_000_000n + BigInt(i) * 1_000_000n,
    structuredMetadata: [{ name: 'trace_id', value: (i * 7919).toString(16) }],
    extracted: { level: 'info', msg: `order ${i} placed`, duration_ms: i % 97, namespace: 'shop', pod: `checkout-${i % 7}` },
  }));
  let sink = 0;
  const per = (fn: (e: Entry) => string) => (i: number) => {
    sink += fn(entries[i % entries.length]!).length;
  };
  const n = calibrate(per(viewJson));
  const baselineRepeat = () => {
    for (let i = 0; i < n; i++) per(viewJson)(i);
  };
  const jsonRepeat = () => {
    for (let i = 0; i < n; i++) per((e) => entryToJson(e, true))(i);
  };
  // Repeats interleaved, best of three each, so a burst of load elsewhere falls on both alike.
  let baseline: Timed = { cpu: 0, wall: 0 };
  let json: Timed = { cpu: 0, wall: 0 };
  for (let r = 0; r < 3; r++) {
    baseline = faster(baseline, rate(n, baselineRepeat, 1));
    json = faster(json, rate(n, jsonRepeat, 1));
  }
  if (sink < 0) console.log(sink);
  return [compared('process output --output json (entryToJson)', json, 'entries/s', 'JSON.stringify of a view object', baseline)];
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PROCESS_LINES = Number(process.env.BENCH_PROCESS_LINES ?? 300_000);
const PROCESS_RUNS = 3;

/** The stage list both runs go through: CRI split, JSON fields, a label from them. */
const PROCESS_CONFIG = `stage.cri { }

stage.json {
  expressions = {
    level       = "",
    msg         = "",
    duration_ms = "",
    trace_id    = "",
  }
}

stage.labels {
  values = {
    level = "",
  }
}
`;

/** Kubernetes CRI lines with JSON bodies, three to a millisecond, as `--input text` reads them. */
function criLines(count: number): string {
  const startMs = Date.UTC(2025, 10, 25, 9, 0, 0);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const ms = startMs + Math.floor(i / 3);
    const fraction = String((ms % 1000) * 1_000_000 + (i % 3) * 1000).padStart(9, '0');
    const body = JSON.stringify({
      level: i % 10 === 0 ? 'warn' : 'info',
      msg: `GET /api/v1/items/${i} 200`,
      duration_ms: i % 250,
      trace_id: `t${i % 97}`,
      user: `u${i % 13}`,
    });
    lines.push(`${new Date(ms).toISOString().slice(0, 19)}.${fraction}Z ${i % 4 === 0 ? 'stderr' : 'stdout'} F ${body}`);
  }
  return `${lines.join('\n')}\n`;
}

/** CPU and wall seconds of one `rivulet process` run of the built CLI over `inputFile`, its output discarded. */
function processRun(bin: string, configFile: string, inputFile: string, output: 'json' | 'line'): Measured {
  return timedNode([bin, 'process', '--config', configFile, '--input', 'text', '--output', output], { stdinFile: inputFile });
}

/**
 * `rivulet process --output json` end to end beside `--output line` on the same input (CRI +
 * JSON + labels over BENCH_PROCESS_LINES lines): what printing the whole entry costs over printing
 * its line. Three runs each, taken in turns so both see the same machine load; the median CPU
 * seconds (wall beside) and the median per-pair ratio. Start-up is in both.
 */
export async function benchProcessOutput(): Promise<BenchRow[]> {
  const bin = join(ROOT, 'dist/bin/rivulet.js');
  if (!existsSync(bin)) throw new Error('dist/bin/rivulet.js is missing: run `npm run build` first');
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-bench-output-'));
  try {
    const configFile = join(dir, 'k8s.alloy');
    const inputFile = join(dir, 'cri.log');
    writeFileSync(configFile, PROCESS_CONFIG);
    writeFileSync(inputFile, criLines(PROCESS_LINES));
    const pairs: (readonly [Measured, Measured])[] = [];
    for (let r = 0; r < PROCESS_RUNS; r++)
      pairs.push([processRun(bin, configFile, inputFile, 'json'), processRun(bin, configFile, inputFile, 'line')]);
    return [
      comparedRuns(
        'rivulet process --output json, end to end',
        'lines/s',
        'rivulet process --output line',
        pairs,
        (seconds) => PROCESS_LINES / seconds,
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
