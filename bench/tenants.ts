/**
 * logs.write with many tenants: the same entries sent to its receiver once spread over 20,000
 * tenants (round robin, so every batch holds a single tenant's share) and once as one tenant,
 * delivered to a loopback endpoint in another process. Each tenant's batch is its own request
 * (the endpoint's queue holds about six entries of each tenant at a time here), so the rate with
 * many tenants is that of requests sent one at a time; forming the batches must not cost more as
 * tenants grow. Rates are per CPU second of this process (user + system; the endpoint is another
 * process) with wall beside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { systemClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { gatheredFamilies } from '../core/metrics.js';
import type { LogsReceiver } from '../core/receiver.js';
import { ComponentGraph } from '../core/runtime/graph.js';
import '../index.js';
import { compared, measured, perSecond, type Measured } from './harness.js';
import type { BenchRow } from './types.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 20_000);
const ENTRIES = Number(process.env.BENCH_TENANT_ENTRIES ?? 200_000);
const PER_SEND = 1000;

/** ENTRIES entries over `tenants` tenants, round robin, in sends of PER_SEND. */
function sends(tenants: number): Entry[][] {
  const out: Entry[][] = [];
  for (let from = 0; from < ENTRIES; from += PER_SEND) {
    const batch: Entry[] = [];
    for (let i = from; i < Math.min(ENTRIES, from + PER_SEND); i++) {
      batch.push({
        labels: { app: 'web', __tenant_id__: `tenant-${i % tenants}` },
        line: `GET /api/v1/items/${i} 200 ${'x'.repeat(60)}`,
        timestamp: BigInt(i),
        structuredMetadata: [],
        extracted: {},
      });
    }
    out.push(batch);
  }
  return out;
}

/**
 * A push endpoint in a process of its own, as Loki would be, answering 204 to everything, so the
 * figures are the instance's alone; delivery is read from logs_write_sent_entries_total.
 */
async function discardingEndpoint(): Promise<{ url: string; child: ChildProcess }> {
  const script = `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); })
  .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the endpoint exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/loki/api/v1/push`, child };
}

/** Sends every batch to a logs.write with the default queue (capacity 10MiB, batch_size 1MiB) and waits until all are delivered. */
async function throughWrite(batches: readonly Entry[][], url: string): Promise<Measured> {
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }));
  graph.load(`logs.write "out" {\n  endpoint {\n    url = ${JSON.stringify(url)}\n    batch_wait = "100ms"\n  }\n}\n`, 'tenants.alloy');
  await graph.start();
  const receiver = (graph.component('logs.write.out')!.exports.receiver as { value: LogsReceiver }).value;
  // The component's series are its own registry's, served with the graph's (see componentRegistry).
  const delivered = async () =>
    (await gatheredFamilies(registry)).find((f) => f.name === 'logs_write_sent_entries_total')?.values.reduce((n, v) => n + v.value, 0) ??
    0;
  const result = await measured(async () => {
    for (const batch of batches) await receiver.send(batch);
    while ((await delivered()) < ENTRIES) await new Promise((r) => setTimeout(r, 5));
  });
  await graph.stop();
  return result;
}

export async function benchTenants(): Promise<BenchRow[]> {
  const many = sends(TENANTS);
  const one = sends(1);
  const endpoint = await discardingEndpoint();
  // One unmeasured turn of one tenant warms the code both share; then one measured turn each
  // (a turn of 20,000 tenants lasts long enough to warm itself).
  await throughWrite(one, endpoint.url);
  const oneBest = await throughWrite(one, endpoint.url);
  const manyBest = await throughWrite(many, endpoint.url);
  endpoint.child.kill();
  return [
    compared(
      `logs.write: ${TENANTS.toLocaleString('en-US')} tenants (${ENTRIES.toLocaleString('en-US')} entries)`,
      perSecond(ENTRIES, manyBest),
      'entries/s',
      'one tenant',
      perSecond(ENTRIES, oneBest),
    ),
  ];
}
