/**
 * `npm run bench -- costs`: where the k8s end-to-end pipeline's CPU goes, in µs of CPU (user +
 * system) per entry, as a markdown table for the README.
 *
 * Method: each part is isolated by running the same pushes (the end-to-end bench's Kubernetes
 * workload, from a load generator and fake Loki in another process) through `rivulet run` of the
 * built CLI with the part on and with it off, and taking the difference of the instance's CPU
 * seconds (read from inside it, instance.ts), stages in place (`--workers 1`). The instances:
 *
 *   A    logs.source.api forwarding nowhere             (HTTP, decode, hand-off)
 *   P0   A → logs.process without stages               (+ the component)
 *   Pk   A → logs.process with the first k stages      (+ stage k, for k = 1 … 6)
 *   F    the whole pipeline, P6 → logs.write → fake Loki (+ batch, encode, send)
 *
 * Two parts cannot be switched off inside an instance, so they are measured on their own in this
 * process on the same inputs: decoding the push bodies (decodePushBody, as logs.source.api does)
 * and encoding batches (encodeBatch on the pipeline's output, in batches of batch_size, 1 MiB).
 * HTTP is then A − decode and send is F − P6 − encode, and the parts add up to F exactly.
 * Each instance gets one unmeasured pass of the load first; differences of a few tenths of a µs
 * are within the noise of a shared machine (BENCH_COSTS_ROUNDS > 1 takes the median of rounds).
 */
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { Entry } from '../core/entry.js';
import { loadStageList } from '../core/process.js';
import { decodePushBody } from '../receivers/loki/push-body.js';
import { encodeBatch, entryBytes, type QueuedEntry } from '../sinks/loki/batch.js';
import { ManualClock } from '../core/clock.js';
import { Registry } from 'prom-client';
import { forwarderConfig } from '../test/e2e/configs.js';
import { workload } from './e2e.js';
import { measuredSync, median } from './harness.js';
import { startInstance, startLoad, type LoadProcess } from './instance.js';
import { formatCosts, type CostPart } from './reports.js';

const ROUNDS = Number(process.env.BENCH_COSTS_ROUNDS ?? 1);
const BATCH_BYTES = 1 << 20;

const PROCESS_OPEN = 'logs.process "k8s" {\n';
const PROCESS_CLOSE = '  forward_to = [logs.write.out.receiver]\n}\n';

/** The end-to-end instance's config cut into its API block, its stage blocks and the whole. */
function k8sConfig(sinkUrl: string): { full: string; api: string; stages: string[] } {
  const full = forwarderConfig(sinkUrl, { write: { batch_wait: '"20ms"' } });
  const open = full.indexOf(PROCESS_OPEN);
  const close = full.indexOf(PROCESS_CLOSE, open);
  if (open < 0 || close < 0) throw new Error('the end-to-end config no longer has the logs.process block this bench cuts');
  const stages = full
    .slice(open + PROCESS_OPEN.length, close)
    .split(/\n(?= {2}stage\.)/)
    .map((s) => s.trimEnd())
    .filter((s) => s !== '');
  return { full, api: full.slice(0, open), stages };
}

/** The API block followed by a logs.process of `stages` that forwards nowhere. */
const processOnly = (api: string, stages: readonly string[]) =>
  `${api}${PROCESS_OPEN}${stages.map((s) => `${s}\n`).join('')}  forward_to = []\n}\n`;

/** CPU seconds per entry of `config` under the load (median of ROUNDS instances). */
async function cpuPerEntry(load: LoadProcess, config: string, delivered: boolean): Promise<number> {
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const instance = await startInstance(config, 1);
    try {
      await load.pass(instance.apiUrl, delivered);
      const figures = await instance.measure(async () => {
        await load.pass(instance.apiUrl, delivered);
      });
      rounds.push(figures.cpuSeconds / load.entries);
    } finally {
      await instance.stop();
    }
  }
  return median(rounds);
}

/** Decoding every push body as logs.source.api does, and the entries the stages then produce. */
function inProcessParts(stageBlocks: readonly string[]): { decode: number; encode: number } {
  const { bodies, entries } = workload();
  const decode = () => bodies.map((body) => decodePushBody(body, 'application/x-protobuf', undefined, 1 << 30));
  decode(); // warm-up
  let decoded: ReturnType<typeof decode> = [];
  const decodeSeconds = median([0, 1, 2].map(() => measuredSync(() => (decoded = decode())).cpuSeconds));

  const stages = buildPipeline(loadStageList(stageBlocks.join('\n'), 'costs.alloy'), {
    clock: new ManualClock(0n),
    registry: new Registry(),
  }).process!;
  const batches: QueuedEntry[][] = [[]];
  let bytes = 0;
  for (const push of decoded)
    for (const stream of push.streams)
      for (const wire of stream.entries) {
        const entry: Entry = stages(
          ingress({
            labels: stream.labels!,
            line: wire.line,
            timestamp: wire.timestampNs,
            structuredMetadata: [...wire.structuredMetadata],
            extracted: {},
          }),
        )!;
        const size = entryBytes(entry);
        if (bytes + size > BATCH_BYTES) {
          batches.push([]);
          bytes = 0;
        }
        batches.at(-1)!.push({ entry, tenant: '', bytes: size });
        bytes += size;
      }
  const encode = () => {
    for (const batch of batches) encodeBatch(batch, {});
  };
  encode(); // warm-up
  const encodeSeconds = median([0, 1, 2].map(() => measuredSync(encode).cpuSeconds));
  return { decode: decodeSeconds / entries, encode: encodeSeconds / entries };
}

export async function benchCosts(): Promise<string> {
  const load = await startLoad();
  try {
    const { full, api, stages } = k8sConfig(load.sinkUrl);
    const apiAlone = await cpuPerEntry(load, api.replace('forward_to = [logs.process.k8s.receiver]', 'forward_to = []'), false);
    const withStages: number[] = [];
    for (let k = 0; k <= stages.length; k++) withStages.push(await cpuPerEntry(load, processOnly(api, stages.slice(0, k)), false));
    const whole = await cpuPerEntry(load, full, true);
    const { decode, encode } = inProcessParts(stages);
    const parts: CostPart[] = [
      { part: 'HTTP: accept, parse, read body, answer, hand on', seconds: apiAlone - decode, method: 'A − decode' },
      { part: 'decode: snappy, protobuf, labels', seconds: decode, method: 'decodePushBody alone' },
      { part: 'logs.process without stages', seconds: withStages[0]! - apiAlone, method: 'P0 − A' },
      ...stages.map((block, i) => ({
        part: block.trim().split(/\s/)[0]!,
        seconds: withStages[i + 1]! - withStages[i]!,
        method: `P${i + 1} − P${i}`,
      })),
      { part: 'batch and encode: streams, protobuf, snappy', seconds: encode, method: 'encodeBatch alone, 1 MiB batches' },
      { part: 'send: queue, HTTP client', seconds: whole - withStages.at(-1)! - encode, method: `F − P${stages.length} − encode` },
    ];
    return `k8s end to end, ${load.entries.toLocaleString('en-US')} entries a pass, stages in place; µs of CPU (user + system) of the Rivulet process per entry\n\n${formatCosts(parts)}`;
  } finally {
    await load.close();
  }
}
