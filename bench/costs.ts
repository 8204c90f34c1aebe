/**
 * `npm run bench -- costs`: where the k8s end-to-end pipeline's CPU goes, in µs of CPU (user +
 * system) per entry, as a markdown table; with BENCH_COSTS_README=1 it also rewrites the table in the
 * README, between its COSTS_BEGIN and COSTS_END lines.
 *
 * Method: each part is isolated by running the same inputs with the part on and with it off and
 * taking the difference of CPU seconds. Three instances of `rivulet run` (the built CLI, stages in
 * place: `--workers 1`) take the end-to-end bench's Kubernetes pushes from a load generator and
 * fake Loki in another process, their CPU read from inside the instance (instance.ts):
 *
 *   A    logs.source.api forwarding nowhere                 (HTTP, decode, hand-off)
 *   P    A → logs.process with the six stages, forwarding nowhere
 *   F    the whole pipeline, P → logs.write → fake Loki     (+ batch, encode, send)
 *
 * The finer parts cannot be switched off inside an instance, so they are measured in this process
 * on the same entries, each result dropped as the instance drops it: decoding the push bodies
 * (decodePushBody, as logs.source.api does), the stages (the pipeline of the first k stages
 * through its operator, as logs.process runs it: stage k is run k − run k−1) and encoding batches
 * (encodeBatch on the pipeline's output, in batches of batch_size, 1 MiB). Then HTTP is A − decode,
 * the logs.process component is P − A − the stages, send is F − P − encode, and the parts add up
 * to F exactly. Instances and in-process runs are taken in BENCH_COSTS_ROUNDS rounds (default 3;
 * three times as many for the stage prefixes), each after an unmeasured pass, the instances and
 * the prefixes taking turns within a round, and the median of each is used; on a busy shared
 * machine a part of a few tenths of a µs is within the noise.
 */
import { buildPipeline, ingress } from '../core/pipeline.js';
import type { Entry } from '../core/entry.js';
import { loadStageList } from '../core/process.js';
import { decodePushBody } from '../receivers/loki/push-body.js';
import { encodeBatch, entryBytes, type QueuedEntry } from '../sinks/loki/batch.js';
import { ManualClock } from '../core/clock.js';
import { Registry } from 'prom-client';
import { Subject } from 'rxjs';
import { forwarderConfig } from '../test/e2e/configs.js';
import { workload } from './e2e.js';
import { measuredSync, median } from './harness.js';
import { startInstance, startLoad, type LoadProcess } from './instance.js';
import { COSTS_BEGIN, COSTS_END, formatCosts, replaceBetween, type CostPart } from './reports.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.env.BENCH_COSTS_ROUNDS ?? 3);
/** Rounds of the in-process stage prefixes: they are quick, and the stages' differences small. */
const STAGE_ROUNDS = 3 * ROUNDS;
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

/** CPU seconds per entry of one instance of `config` under the load, after an unmeasured pass. */
async function instanceCpuPerEntry(load: LoadProcess, config: string, delivered: boolean): Promise<number> {
  const instance = await startInstance(config, { workers: 1 });
  try {
    await load.pass(instance.apiUrl, delivered);
    const figures = await instance.measure(async () => {
      await load.pass(instance.apiUrl, delivered);
    });
    return figures.cpuSeconds / load.entries;
  } finally {
    await instance.stop();
  }
}

/** CPU seconds per entry of `run` over `entries` entries: median of ROUNDS runs after a warm-up. */
function cpuPerEntry(entries: number, run: () => void): number {
  run();
  return median(Array.from({ length: ROUNDS }, () => measuredSync(run).cpuSeconds)) / entries;
}

interface InProcessParts {
  readonly decode: number;
  /** CPU per entry of the first k stages, k = 0 … stages. */
  readonly stagesUpTo: readonly number[];
  readonly encode: number;
}

/** The parts measured in this process (see the header). */
function inProcessParts(stageBlocks: readonly string[]): InProcessParts {
  const { bodies, entries } = workload();
  const decodeBody = (body: Buffer) => decodePushBody(body, 'application/x-protobuf', undefined, 1 << 30);
  const decode = cpuPerEntry(entries, () => {
    for (const body of bodies) decodeBody(body);
  });
  const inputs: Entry[] = bodies.flatMap((body) =>
    decodeBody(body).streams.flatMap((stream) =>
      stream.entries.map((wire) => ({
        labels: stream.labels!,
        line: wire.line,
        timestamp: wire.timestampNs,
        structuredMetadata: [...wire.structuredMetadata],
        extracted: {},
      })),
    ),
  );
  /** Pushes every input through the first `k` stages; `each` sees what comes out. */
  const through = (k: number, each: (entry: Entry) => void) => {
    const pipeline = buildPipeline(loadStageList(stageBlocks.slice(0, k).join('\n'), 'costs.alloy'), {
      clock: new ManualClock(0n),
      registry: new Registry(),
    });
    return () => {
      const input = new Subject<Entry>();
      const sub = pipeline.operator(input).subscribe(each);
      for (const entry of inputs) input.next(ingress(entry));
      input.complete();
      sub.unsubscribe();
    };
  };
  let out = 0;
  // The prefixes take turns round by round, so a busy spell of the machine falls on all of them.
  const prefixes = Array.from({ length: stageBlocks.length + 1 }, (_, k) => through(k, () => out++));
  for (const run of prefixes) run(); // warm-up
  const samples = prefixes.map((): number[] => []);
  for (let round = 0; round < STAGE_ROUNDS; round++) prefixes.forEach((run, k) => samples[k]!.push(measuredSync(run).cpuSeconds));
  const stagesUpTo = samples.map((runs) => median(runs) / entries);

  const batches: QueuedEntry[][] = [[]];
  let bytes = 0;
  through(stageBlocks.length, (entry) => {
    const size = entryBytes(entry);
    if (bytes + size > BATCH_BYTES) {
      batches.push([]);
      bytes = 0;
    }
    batches.at(-1)!.push({ entry, tenant: '', bytes: size });
    bytes += size;
  })();
  if (batches.reduce((n, b) => n + b.length, 0) !== entries || out === 0) throw new Error('the stages did not pass every entry on');
  const encode = cpuPerEntry(entries, () => {
    for (const batch of batches) encodeBatch(batch, {});
  });
  return { decode, stagesUpTo, encode };
}

export async function benchCosts(): Promise<string> {
  const load = await startLoad();
  try {
    const { full, api, stages } = k8sConfig(load.sinkUrl);
    const { decode, stagesUpTo, encode } = inProcessParts(stages);
    const instances = [
      { config: api.replace('forward_to = [logs.process.k8s.receiver]', 'forward_to = []'), delivered: false, runs: [] as number[] },
      { config: processOnly(api, stages), delivered: false, runs: [] as number[] },
      { config: full, delivered: true, runs: [] as number[] },
    ];
    // Rounds, each running every instance once, so a busy spell of the machine falls on all.
    for (let round = 0; round < ROUNDS; round++)
      for (const instance of instances) instance.runs.push(await instanceCpuPerEntry(load, instance.config, instance.delivered));
    const [apiAlone, processed, whole] = instances.map((i) => median(i.runs)) as [number, number, number];
    const stageTotal = stagesUpTo.at(-1)! - stagesUpTo[0]!;
    const parts: CostPart[] = [
      { part: 'HTTP: accept, parse, read body, answer, hand on', seconds: apiAlone - decode, method: 'A − decode' },
      { part: 'decode: snappy, protobuf, labels', seconds: decode, method: 'decodePushBody alone' },
      { part: 'logs.process: hand-off, entry copy, operator', seconds: processed - apiAlone - stageTotal, method: 'P − A − stages' },
      ...stages.map((block, i) => ({
        part: block.trim().split(/\s/)[0]!,
        seconds: stagesUpTo[i + 1]! - stagesUpTo[i]!,
        method: `first ${i + 1} − first ${i} stages`,
      })),
      { part: 'batch and encode: streams, protobuf, snappy', seconds: encode, method: 'encodeBatch alone, 1 MiB batches' },
      { part: 'send: queue, HTTP client', seconds: whole - processed - encode, method: 'F − P − encode' },
    ];
    const report = `k8s end to end, ${load.entries.toLocaleString('en-US')} entries a pass, stages in place; µs of CPU (user + system) per entry\n\n${formatCosts(parts)}`;
    if (process.env.BENCH_COSTS_README === '1') {
      const readme = fileURLToPath(new URL('../README.md', import.meta.url));
      writeFileSync(readme, replaceBetween(readFileSync(readme, 'utf8'), COSTS_BEGIN, COSTS_END, `\n${report}\n`));
    }
    return report;
  } finally {
    await load.close();
  }
}
