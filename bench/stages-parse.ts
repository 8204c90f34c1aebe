import { Subject } from 'rxjs';
import { Registry } from 'prom-client';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { StageOperator, StageSpec } from '../core/stage.js';
import { cri, decolorize, docker, drop, json, labels, logfmt, luhn, output, pack } from '../operators/index.js';
import { compared, rate, scaled, type Timed } from './harness.js';
import type { BenchRow } from './types.js';

// Enough entries per measurement for a stable figure; each stays well under two seconds.
const ENTRIES = Number(process.env.BENCH_PARSE_ENTRIES ?? 50_000);
const MIB = 1024 * 1024;
const BASE_NS = 1_704_164_645_000_000_000n;

const LEVELS = ['info', 'info', 'info', 'warn', 'error', 'debug'];
const PATHS = ['/api/v1/push', '/api/v1/query_range', '/metrics', '/ready', '/api/v1/labels'];

function appJson(i: number): string {
  return JSON.stringify({
    ts: `2024-01-02T03:04:${String(i % 60).padStart(2, '0')}.${String(i % 1e9).padStart(9, '0')}Z`,
    level: LEVELS[i % LEVELS.length],
    msg: `request served in ${i % 977}ms`,
    method: i % 7 === 0 ? 'POST' : 'GET',
    path: PATHS[i % PATHS.length],
    status: i % 50 === 0 ? 500 : 200,
    duration_ms: (i % 977) + 0.25,
    user: { id: `u-${i % 1000}`, org: `org-${i % 13}` },
    trace_id: (i * 2654435761).toString(16).padStart(16, '0'),
  });
}

function appLogfmt(i: number): string {
  return `ts=2024-01-02T03:04:05.${String(i % 1e9).padStart(9, '0')}Z level=${LEVELS[i % LEVELS.length]} caller=handler.go:${i % 400} msg="request served" method=GET path=${PATHS[i % PATHS.length]} status=${i % 50 === 0 ? 500 : 200} duration=${i % 977}ms user=u-${i % 1000} trace_id=${(i * 2654435761).toString(16)}`;
}

/** Container runtime lines: mostly full JSON app lines, every tenth split into two partials. */
function criLines(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const ts = `2024-01-02T03:04:05.${String(i % 1e9).padStart(9, '0')}Z`;
    const line = appJson(i);
    if (i % 10 === 9) {
      const cut = line.length >> 1;
      out.push(`${ts} stdout P ${line.slice(0, cut)}`);
      out.push(`${ts} stdout F ${line.slice(cut)}`);
    } else {
      out.push(`${ts} ${i % 5 === 0 ? 'stderr' : 'stdout'} F ${line}`);
    }
  }
  return out.slice(0, count);
}

const ESC = '\u001b';
function colored(i: number): string {
  const colour = ['32', '33', '31', '36'][i % 4];
  return `${ESC}[2m2024-01-02 03:04:05.${i % 1000}${ESC}[0m ${ESC}[${colour}m${LEVELS[i % LEVELS.length]!.toUpperCase()}${ESC}[0m ${ESC}[1mserver${ESC}[22m: GET ${PATHS[i % PATHS.length]} (${i % 977} ms) 200`;
}

function withCards(i: number): string {
  const card = i % 4 === 0 ? '4532015112830366' : i % 4 === 1 ? '6011-1111-1111-1117' : `${1_000_000 + i}`;
  return `payment accepted order=${100000 + i} amount=${(i % 500) + 0.99} card=${card} customer=c-${i % 1000} ts=2024-01-02T03:04:05Z`;
}

interface Workload {
  readonly name: string;
  readonly stages: StageOperator[];
  readonly lines: string[];
  readonly labels: (i: number) => Record<string, string>;
  /** The same-run comparison: what the stage's work is measured against. */
  readonly baseline: { readonly name: string; readonly run: (line: string) => unknown };
}

const podLabels = (i: number) => ({
  namespace: 'prod',
  pod: `api-${i % 20}`,
  container: 'api',
  filename: `/var/log/pods/api-${i % 20}/0.log`,
});
const bareLoop = { name: 'bare per-entry loop', run: (line: string) => line.length };
const jsonParse = { name: 'JSON.parse of the line', run: (line: string) => JSON.parse(line) as unknown };

function workloads(): Workload[] {
  const range = (f: (i: number) => string) => Array.from({ length: ENTRIES }, (_, i) => f(i));
  return [
    { name: 'stage.cri', stages: [cri({})], lines: criLines(ENTRIES), labels: podLabels, baseline: bareLoop },
    {
      name: 'stage.docker',
      stages: [docker({})],
      lines: range((i) =>
        JSON.stringify({ log: `${appLogfmt(i)}\n`, stream: i % 5 === 0 ? 'stderr' : 'stdout', time: '2024-01-02T03:04:05.123456789Z' }),
      ),
      labels: podLabels,
      baseline: jsonParse,
    },
    {
      name: 'stage.json (4 expressions)',
      stages: [json({ expressions: { level: '', msg: '', user: 'user.id', duration: 'duration_ms' } })],
      lines: range(appJson),
      labels: podLabels,
      baseline: jsonParse,
    },
    {
      // Mixed logs: lines that are not JSON at all are passed on unchanged.
      name: 'stage.json on logfmt lines (not JSON, passed on)',
      stages: [json({ expressions: { level: '', msg: '' } })],
      lines: range(appLogfmt),
      labels: podLabels,
      baseline: bareLoop,
    },
    {
      name: 'stage.logfmt (4 keys)',
      stages: [logfmt({ mapping: { level: '', msg: '', status: '', duration: '' } })],
      lines: range(appLogfmt),
      labels: podLabels,
      baseline: bareLoop,
    },
    { name: 'stage.decolorize', stages: [decolorize({})], lines: range(colored), labels: podLabels, baseline: bareLoop },
    {
      name: 'stage.pack (3 labels)',
      stages: [pack({ labels: ['pod', 'container', 'namespace'], ingest_timestamp: false })],
      lines: range(appLogfmt),
      labels: podLabels,
      baseline: bareLoop,
    },
    {
      name: 'stage.luhn (delimiters " -")',
      stages: [luhn({ delimiters: ' -' })],
      lines: range(withCards),
      labels: podLabels,
      baseline: bareLoop,
    },
  ];
}

function makeEntry(line: string, labelSet: Record<string, string>, i: number): Entry {
  return { labels: labelSet, line, timestamp: BASE_NS + BigInt(i), structuredMetadata: [], extracted: {} };
}

/** Entries per second of `specs` over `lines`, through the fused function or the RxJS operator. */
function measure(specs: StageSpec[], lines: readonly string[], labelsOf: (i: number) => Record<string, string>): Timed {
  const built = buildPipeline(specs, { clock: new ManualClock(BASE_NS), registry: new Registry() });
  let sink = 0;
  const process = built.process;
  const perSecond = process
    ? rate(lines.length, () => {
        for (let i = 0; i < lines.length; i++) {
          const out = process(ingress(makeEntry(lines[i]!, labelsOf(i), i)));
          if (out) sink += out.line.length;
        }
      })
    : rate(lines.length, () => {
        const input = new Subject<Entry>();
        const sub = built.operator(input).subscribe((e) => (sink += e.line.length));
        for (let i = 0; i < lines.length; i++) input.next(ingress(makeEntry(lines[i]!, labelsOf(i), i)));
        input.complete();
        sub.unsubscribe();
      });
  built.dispose();
  if (sink === 0) throw new Error('the benchmark forwarded nothing');
  return perSecond;
}

function measureBaseline(run: (line: string) => unknown, lines: readonly string[], labelsOf: (i: number) => Record<string, string>): Timed {
  let sink = 0;
  const perSecond = rate(lines.length, () => {
    for (let i = 0; i < lines.length; i++) {
      const entry = ingress(makeEntry(lines[i]!, labelsOf(i), i));
      if (run(entry.line) !== undefined) sink++;
    }
  });
  if (sink === 0) throw new Error('the baseline did nothing');
  return perSecond;
}

function mibPerEntry(lines: readonly string[]): number {
  let bytes = 0;
  for (const line of lines) bytes += Buffer.byteLength(line);
  return bytes / lines.length / MIB;
}

/**
 * Throughput of the parsing stages (cri, docker, json, logfmt, decolorize, pack, luhn) on
 * realistic generated lines, each beside a baseline measured in the same run, plus two typical
 * pipelines: Kubernetes container logs and application logfmt logs.
 */
export async function benchParseStages(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const w of workloads()) {
    const specs = w.stages.map((s) => s.spec);
    const stageRate = measure(specs, w.lines, w.labels);
    const baseRate = measureBaseline(w.baseline.run, w.lines, w.labels);
    const mib = mibPerEntry(w.lines);
    rows.push(compared(`${w.name}`, stageRate, 'entries/s', w.baseline.name, baseRate));
    rows.push(compared(`${w.name}`, scaled(stageRate, mib), 'MiB/s', w.baseline.name, scaled(baseRate, mib)));
  }

  const k8sLines = criLines(ENTRIES);
  const k8s = [
    cri({}),
    json({ expressions: { level: '', msg: '', trace_id: '' } }),
    labels({ values: { level: '' } }),
    output({ source: 'msg' }),
  ].map((s) => s.spec);
  const k8sRate = measure(k8s, k8sLines, podLabels);
  const k8sBase = measureBaseline(bareLoop.run, k8sLines, podLabels);
  rows.push(compared('pipeline: Kubernetes cri → json → labels → output', k8sRate, 'entries/s', bareLoop.name, k8sBase));
  rows.push(
    compared(
      'pipeline: Kubernetes cri → json → labels → output',
      scaled(k8sRate, mibPerEntry(k8sLines)),
      'MiB/s',
      bareLoop.name,
      scaled(k8sBase, mibPerEntry(k8sLines)),
    ),
  );

  const appLines = Array.from({ length: ENTRIES }, (_, i) => appLogfmt(i));
  const app = [
    logfmt({ mapping: { level: '', status: '', msg: '' } }),
    labels({ values: { level: '' } }),
    drop({ source: 'level', value: 'debug' }),
  ].map((s) => s.spec);
  const appRate = measure(app, appLines, podLabels);
  const appBase = measureBaseline(bareLoop.run, appLines, podLabels);
  rows.push(compared('pipeline: app logs logfmt → labels → drop', appRate, 'entries/s', bareLoop.name, appBase));
  rows.push(
    compared(
      'pipeline: app logs logfmt → labels → drop',
      scaled(appRate, mibPerEntry(appLines)),
      'MiB/s',
      bareLoop.name,
      scaled(appBase, mibPerEntry(appLines)),
    ),
  );
  return rows;
}
