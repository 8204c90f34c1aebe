/**
 * Stages built on the Go engines (stage.template and stage.replace on the text/template port,
 * stage.timestamp on the Go time layouts) over generated access logs, each beside the bare
 * pipeline (ingress copy, no stage) measured in the same run.
 */
import { Buffer } from 'node:buffer';
import { Registry } from 'prom-client';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { loadStageList } from '../core/process.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { StageSpec } from '../core/stage.js';
import '../operators/index.js';
import { calibrate, compared, peakRssMiB, rate, scaled, type Timed } from './harness.js';
import type { BenchRow } from './types.js';

/** Target duration of one timed repeat; `rate` keeps the best of three. */
const START_NS = 1_700_000_000_000_000_000n;
const USERS = ['frank', 'alice', 'bob', 'carol', 'dave', '-'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A deterministic generator so every run measures the same input. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * Combined-format access lines with the values an earlier parsing stage would have extracted:
 * the time in several spellings (RFC 3339 with nanoseconds, the access-log layout, syslog
 * without a year, Unix seconds with a fraction), the user, method, path and status.
 */
function accessEntries(count: number): Entry[] {
  const next = random(7);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const seconds = 1_700_000_000 + i * 3 + Math.floor(next() * 3);
    const nanos = Math.floor(next() * 1e9);
    const date = new Date(seconds * 1000);
    const [y, mo, d, h, mi, s] = [
      date.getUTCFullYear(),
      date.getUTCMonth(),
      date.getUTCDate(),
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
    ];
    const user = pick(USERS);
    const method = pick(METHODS);
    const path = `/api/v1/items/${i % 997}?page=${i % 7}`;
    const status = next() < 0.9 ? '200' : '503';
    const accessTime = `${pad(d)}/${MONTHS[mo]}/${y}:${pad(h)}:${pad(mi)}:${pad(s)} +0000`;
    const line = `10.0.${i % 256}.${(i * 7) % 256} - ${user} [${accessTime}] "${method} ${path} HTTP/1.1" ${status} ${Math.floor(next() * 64_000)} "-" "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/121.0" password=${(i * 2654435761) >>> 0}`;
    entries.push({
      labels: { job: 'nginx', host: `web-${i % 4}`, namespace: 'prod' },
      line,
      timestamp: START_NS + BigInt(i),
      structuredMetadata: [],
      extracted: {
        rfc3339: `${y}-${pad(mo + 1)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}.${pad(nanos, 9)}Z`,
        access_time: accessTime,
        syslog_time: `${MONTHS[mo]} ${String(d).padStart(2, ' ')} ${pad(h)}:${pad(mi)}:${pad(s)}`,
        unix: `${seconds}.${pad(Math.floor(nanos / 1000), 6)}`,
        user,
        method,
        path,
        status,
      },
    });
  }
  return entries;
}

let sink = 0;

/** entries/s of a built per-entry pipeline over the inputs, cycled. */
function measure(inputs: readonly Entry[], run: (entry: Entry) => Entry | null): Timed {
  const step = (i: number) => {
    const out = run(ingress(inputs[i % inputs.length]!));
    if (out) sink += out.line.length + Number(out.timestamp & 0xffn);
  };
  const count = calibrate(step, 500);
  return rate(count, () => {
    for (let i = 0; i < count; i++) step(i);
  });
}

function built(specs: readonly StageSpec[]): (entry: Entry) => Entry | null {
  const pipeline = buildPipeline(specs, { clock: new ManualClock(START_NS), registry: new Registry() });
  if (!pipeline.process) throw new Error('expected a per-entry pipeline');
  return pipeline.process;
}

const quoted = (text: string) => JSON.stringify(text);

const TEMPLATE_CONFIGS: ReadonlyArray<readonly [name: string, config: string]> = [
  [
    'stage.template render (.Value | ToUpper)',
    `stage.template {\n  source = "method"\n  template = ${quoted('{{ .Value | ToUpper }}')}\n}`,
  ],
  [
    'stage.template render (if/eq, 3 keys, printf)',
    `stage.template {\n  source = "summary"\n  template = ${quoted('{{ if eq .status "200" }}ok{{ else }}fail{{ end }} {{ .method }} {{ printf "%.20s" .path }} by {{ .user }}')}\n}`,
  ],
  [
    'stage.template render (Hash .Value "salt")',
    `stage.template {\n  source = "user"\n  template = ${quoted('{{ Hash .Value "salt" }}')}\n}`,
  ],
  [
    'stage.replace render (mask one group per line)',
    `stage.replace {\n  expression = ${quoted('password=(\\S+)')}\n  replace = "*****"\n}`,
  ],
  [
    'stage.replace render (template per group, 3 groups)',
    `stage.replace {\n  expression = ${quoted('"(\\S+) (\\S+) (HTTP/[0-9.]+)"')}\n  replace = ${quoted('{{ .Value | ToLower }}')}\n}`,
  ],
];

const TIMESTAMP_CONFIGS: ReadonlyArray<readonly [name: string, config: string]> = [
  ['stage.timestamp parse (RFC3339Nano)', 'stage.timestamp {\n  source = "rfc3339"\n  format = "RFC3339Nano"\n}'],
  [
    'stage.timestamp parse (02/Jan/2006:15:04:05 -0700)',
    'stage.timestamp {\n  source = "access_time"\n  format = "02/Jan/2006:15:04:05 -0700"\n}',
  ],
  [
    'stage.timestamp parse (no year, America/New_York)',
    'stage.timestamp {\n  source = "syslog_time"\n  format = "Jan _2 15:04:05"\n  location = "America/New_York"\n}',
  ],
  ['stage.timestamp parse (Unix with fraction)', 'stage.timestamp {\n  source = "unix"\n  format = "Unix"\n}'],
  [
    'stage.timestamp parse (2 failing fallbacks first)',
    'stage.timestamp {\n  source = "rfc3339"\n  format = "UnixMs"\n  fallback_formats = ["02/Jan/2006:15:04:05 -0700", "RFC3339Nano"]\n}',
  ],
];

export async function benchGoStages(): Promise<BenchRow[]> {
  const inputs = accessEntries(4_096);
  const meanBytes = inputs.reduce((sum, e) => sum + Buffer.byteLength(e.line), 0) / inputs.length;
  const mib = (perSecond: Timed) => scaled(perSecond, meanBytes / (1024 * 1024));
  const bare = measure(inputs, built([]));
  const out: BenchRow[] = [];

  for (const [name, config] of [...TEMPLATE_CONFIGS, ...TIMESTAMP_CONFIGS]) {
    const value = measure(inputs, built(loadStageList(config, 'bench.alloy')));
    out.push(compared(name, value, 'entries/s', 'bare pipeline', bare));
    out.push(compared(`${name} (throughput)`, mib(value), 'MiB/s', 'bare pipeline', mib(bare)));
  }

  if (sink === 0) throw new Error('no output');
  out.push({ name: 'peak RSS after Go-engine stage bench', value: peakRssMiB(), unit: 'MiB' });
  return out;
}
