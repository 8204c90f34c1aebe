import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatRFC3339Nano } from '../../lib/time/rfc3339.js';
import { forwarderConfig, receiverConfig } from './configs.js';
import { criStream, echoedEntries, pushWithRetry, startInProcess } from './support.js';

const TOTAL = Number(process.env.E2E_ENTRIES ?? 100_000);
const PODS = 20;
const PER_PUSH = 1000;
const BASE_NS = 1_714_557_600_000_000_000n;
/** The CRI time criStream writes for entry `seq` (2024-05-01T10:00:00 plus seq nanoseconds). */
const criTime = (seq: number) => formatRFC3339Nano(BASE_NS + BigInt(seq % 1e9));

describe('client → A (push API → k8s pipeline → logs.write) → B (push API → echo)', () => {
  it(`delivers ${TOTAL.toLocaleString('en-US')} entries exactly once, each stream in order, with labels, times and metadata`, {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-e2e-'));
    const echoFile = join(dir, 'b.jsonl');
    const b = await startInProcess(receiverConfig(echoFile), 'b.alloy');
    const a = await startInProcess(forwarderConfig(`${b.apiUrl('logs.source.api.in')}/loki/api/v1/push`), 'a.alloy');
    try {
      const perPod = TOTAL / PODS;
      const podsPerWorker = PODS / 4;
      const chunk = PER_PUSH / podsPerWorker;
      // Four concurrent clients, each owning five pods, so every pod's pushes stay in order.
      const workers = Array.from({ length: 4 }, async (_, w) => {
        for (let from = 0; from < perPod; from += chunk) {
          const streams = Array.from({ length: podsPerWorker }, (_, k) =>
            criStream(`pod-${w * podsPerWorker + k}`, from, Math.min(chunk, perPod - from), BASE_NS),
          );
          const outcome = await pushWithRetry(a.apiUrl('logs.source.api.in'), streams);
          expect(outcome.status).toBe(204);
        }
      });
      const began = Date.now();
      await Promise.all(workers);
      console.log(`pushed ${TOTAL} entries through A in ${Date.now() - began} ms`);
    } finally {
      await a.stop();
      await b.stop();
    }

    const received = echoedEntries(echoFile);
    expect(received.length).toBe(TOTAL);
    // Per stream (pod and level), entries arrive in the order they were sent. Problems are
    // collected and compared once: a hundred thousand separate assertions would dominate the run.
    const lastSeq = new Map<string, number>();
    const perPod = new Map<string, Set<number>>();
    const problems: string[] = [];
    for (const entry of received) {
      const body = JSON.parse(entry.line) as { seq: number; pod: string; level: string; trace_id: string };
      const stream = JSON.stringify(entry.labels);
      if (body.seq <= (lastSeq.get(stream) ?? -1)) problems.push(`${stream}: ${body.seq} after ${lastSeq.get(stream)}`);
      lastSeq.set(stream, body.seq);
      const seqs = perPod.get(body.pod) ?? new Set<number>();
      seqs.add(body.seq);
      perPod.set(body.pod, seqs);
      const labels = JSON.stringify({ cluster: 'eu-1', level: body.level, namespace: 'prod', pod: body.pod, stream: 'stdout' });
      if (stream !== labels) problems.push(`labels ${stream}, expected ${labels}`);
      if (entry.timestamp !== criTime(body.seq)) problems.push(`timestamp ${entry.timestamp} of ${body.seq}`);
      if (JSON.stringify(entry.structured_metadata) !== JSON.stringify({ trace_id: body.trace_id }))
        problems.push(`metadata ${JSON.stringify(entry.structured_metadata)}`);
      if (problems.length > 5) break;
    }
    expect(problems).toEqual([]);
    expect(perPod.size).toBe(PODS);
    expect([...perPod.values()].map((seqs) => seqs.size)).toEqual(Array.from({ length: PODS }, () => TOTAL / PODS));
  });
});
