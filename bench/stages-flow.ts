/**
 * Flow-control stages (match, drop, sampling, truncate, metrics) on generated application logs,
 * each beside the bare pipeline (ingress copy, no stage) measured in the same run. The match rows
 * grow from 1 to 500 selector blocks that mostly do not match, to show the cost per block.
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
const APPS = ['checkout', 'cart', 'search', 'auth', 'billing', 'profile', 'gateway', 'mailer'];
const LEVELS = ['info', 'info', 'info', 'debug', 'warn', 'error'];

/** A deterministic generator so every run measures the same input. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

/** logfmt-style service logs with labels and a few extracted values, as after a parsing stage. */
function serviceEntries(count: number): Entry[] {
  const next = random(11);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const app = pick(APPS);
    const level = pick(LEVELS);
    const duration = Math.round(next() * 2000) / 1000;
    const bytes = Math.floor(next() * 64_000);
    const line = `ts=2024-01-25T14:00:${String(i % 60).padStart(2, '0')}Z level=${level} app=${app} msg="request served" path=/api/v1/items/${i % 997} status=${level === 'error' ? 500 : 200} duration=${duration}s bytes=${bytes} trace_id=${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}`;
    entries.push({
      labels: { job: 'services', app, namespace: 'prod', pod: `${app}-${i % 5}` },
      line,
      timestamp: 1_700_000_000_000_000_000n + BigInt(i),
      structuredMetadata: [{ name: 'trace_id', value: ((i * 2654435761) >>> 0).toString(16) }],
      extracted: { level, duration: `${duration}s`, bytes },
    });
  }
  return entries;
}

let sink = 0;

/** entries/s of a built per-entry pipeline over the inputs, cycled. */
function measure(inputs: readonly Entry[], run: (entry: Entry) => Entry | null): Timed {
  const step = (i: number) => {
    const out = run(ingress(inputs[i % inputs.length]!));
    if (out) sink += out.line.length;
  };
  const count = calibrate(step, 500);
  return rate(count, () => {
    for (let i = 0; i < count; i++) step(i);
  });
}

function built(specs: readonly StageSpec[]): (entry: Entry) => Entry | null {
  const pipeline = buildPipeline(specs, {
    clock: new ManualClock(1_700_000_000_000_000_000n),
    registry: new Registry(),
    random: random(3),
  });
  if (!pipeline.process) throw new Error('expected a per-entry pipeline');
  return pipeline.process;
}

/** `count` keep blocks; block k selects an app that does not exist unless k < APPS.length. */
function matchBlocks(count: number): string {
  const blocks: string[] = [];
  for (let k = 0; k < count; k++) {
    const app = k === 0 ? 'checkout' : `app-${k}`;
    blocks.push(
      `stage.match {\n  selector = "{app=\\"${app}\\", namespace=~\\"prod|staging\\"} |= \\"status=500\\""\n  stage.static_labels {\n    values = { alert = "block-${k}" }\n  }\n}`,
    );
  }
  return blocks.join('\n');
}

const FLOW_CONFIGS: ReadonlyArray<readonly [name: string, config: string]> = [
  ['stage.drop (longer_than + expression)', 'stage.drop {\n  longer_than = "150B"\n  expression = "level=debug"\n}'],
  ['stage.drop (source + value)', 'stage.drop {\n  source = "level"\n  value = "debug"\n}'],
  ['stage.sampling (rate 0.5)', 'stage.sampling { rate = 0.5 }'],
  [
    'stage.truncate (line 96B + labels 8B)',
    'stage.truncate {\n  rule {\n    limit = "96B"\n    suffix = "…"\n  }\n  rule {\n    limit = "8B"\n    source_type = "label"\n  }\n}',
  ],
  [
    'stage.metrics (3 metrics: counter, gauge, histogram)',
    'stage.metrics {\n  metric.counter {\n    name = "lines_total"\n    match_all = true\n    action = "inc"\n  }\n  metric.gauge {\n    name = "last_bytes"\n    source = "bytes"\n    action = "set"\n  }\n  metric.histogram {\n    name = "duration_seconds"\n    source = "duration"\n    buckets = [0.1, 0.5, 1, 2]\n  }\n}',
  ],
];

export async function benchFlowStages(): Promise<BenchRow[]> {
  const inputs = serviceEntries(4_096);
  const meanBytes = inputs.reduce((sum, e) => sum + Buffer.byteLength(e.line), 0) / inputs.length;
  const mib = (perSecond: Timed) => scaled(perSecond, meanBytes / (1024 * 1024));
  const bare = measure(inputs, built([]));
  const out: BenchRow[] = [];

  for (const [name, config] of FLOW_CONFIGS) {
    const value = measure(inputs, built(loadStageList(config, 'bench.alloy')));
    out.push(compared(name, value, 'entries/s', 'bare pipeline', bare));
    out.push(compared(`${name} (throughput)`, mib(value), 'MiB/s', 'bare pipeline', mib(bare)));
  }

  const blockRates: Array<[number, Timed]> = [];
  for (const blocks of [1, 10, 500]) {
    const value = measure(inputs, built(loadStageList(matchBlocks(blocks), 'bench.alloy')));
    blockRates.push([blocks, value]);
    out.push(compared(`stage.match × ${blocks} (keep, selector + line filter)`, value, 'entries/s', 'bare pipeline', bare));
  }
  // The slope between 10 and 500 blocks: what one more (mostly non-matching) block costs an entry.
  const [[fewBlocks, fewRate], [manyBlocks, manyRate]] = [blockRates[1]!, blockRates[2]!];
  out.push({
    name: 'stage.match cost per additional block',
    value: ((1 / manyRate.cpu - 1 / fewRate.cpu) / (manyBlocks - fewBlocks)) * 1e9,
    wall: ((1 / manyRate.wall - 1 / fewRate.wall) / (manyBlocks - fewBlocks)) * 1e9,
    unit: 'ns/entry/block',
  });

  if (sink === 0) throw new Error('no output');
  out.push({ name: 'peak RSS after flow-stage bench', value: peakRssMiB(), unit: 'MiB' });
  return out;
}
