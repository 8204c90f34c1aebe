import { Subject } from 'rxjs';
import { Registry } from 'prom-client';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { StageSpec } from '../core/stage.js';
import {
  labelDrop,
  labelKeep,
  labels,
  output,
  staticLabels,
  structuredMetadata,
  structuredMetadataDrop,
  tenant,
} from '../operators/index.js';
import { compared, peakRssMiB, rate } from './harness.js';
import type { BenchRow } from './types.js';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000);

/** Ten stateless stages, the shape of a typical label-shaping pipeline. */
function tenStages(): StageSpec[] {
  return [
    staticLabels({ values: { env: 'prod', region: 'eu-1' } }),
    labels({ values: { app: '', pod: '' } }),
    tenant({ source: 'team' }),
    structuredMetadata({ values: { trace_id: '' } }),
    structuredMetadataDrop({ values: ['trace_id'] }),
    labelDrop({ values: ['pod'] }),
    output({ source: 'msg' }),
    staticLabels({ values: { pipeline: 'bench' } }),
    labels({ values: { level: '' } }),
    labelKeep({ values: ['app', 'env', 'level', 'region', 'pipeline', '__tenant_id__'] }),
  ].map((op) => op.spec);
}

function makeEntry(i: number): Entry {
  return {
    labels: { job: 'bench', app: `app-${i & 7}` },
    line: `request ${i} served`,
    timestamp: 1_700_000_000_000_000_000n + BigInt(i),
    structuredMetadata: [],
    extracted: { pod: `pod-${i & 15}`, team: 'core', trace_id: 'abc', msg: `served ${i}`, level: i % 10 === 0 ? 'warn' : 'info' },
  };
}

/** Built pipeline (Subject → fused operator) against the same per-entry functions in a plain loop. */
export async function benchPipeline(): Promise<BenchRow[]> {
  const specs = tenStages();
  const options = { clock: new ManualClock(0n), registry: new Registry() };

  const plain = buildPipeline(specs, options).process!;
  let sink = 0;
  const loopRate = rate(ENTRIES, () => {
    for (let i = 0; i < ENTRIES; i++) {
      const out = plain(ingress(makeEntry(i)));
      if (out) sink += out.line.length;
    }
  });

  const built = buildPipeline(specs, options);
  const pipelineRate = rate(ENTRIES, () => {
    const input = new Subject<Entry>();
    const sub = built.operator(input).subscribe((e) => (sink += e.line.length));
    for (let i = 0; i < ENTRIES; i++) input.next(ingress(makeEntry(i)));
    input.complete();
    sub.unsubscribe();
  });
  if (sink === 0) throw new Error('no output');
  return [
    compared('10-stage stateless pipeline (built, RxJS)', pipelineRate, 'entries/s', 'same functions in a plain loop', loopRate),
    { name: 'peak RSS after pipeline bench', value: peakRssMiB(), unit: 'MiB' },
  ];
}
