import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingBytes, PendingClaim, SharedPendingBytes } from '../../../receivers/loki/pending.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('pending bytes bound in shared memory', () => {
  it('admits within the limit, says busy beside others and too large alone, as the plain bound does', () => {
    const pending = new SharedPendingBytes(100);
    expect(pending.tryAdmit(60, 0)).toBe('admitted');
    expect(pending.tryAdmit(50, 0)).toBe('busy');
    expect(pending.tryAdmit(40, 0)).toBe('admitted');
    expect(pending.hasRoom()).toBe(false);
    pending.release(100);
    expect(pending.hasRoom()).toBe(true);
    expect(pending.tryAdmit(101, 0)).toBe('too_large');
    expect(pending.tryAdmit(100, 0)).toBe('admitted');
    expect(pending.tryAdmit(1, 100)).toBe('too_large');
    expect([pending.bytes, pending.limit]).toEqual([100, 100]);
  });

  it('is one counter and one limit for every bound made on its memory', () => {
    const main = new SharedPendingBytes(100);
    const shard = new SharedPendingBytes(main.memory);
    expect(main.tryAdmit(70, 0)).toBe('admitted');
    expect(shard.bytes).toBe(70);
    expect(shard.tryAdmit(40, 0)).toBe('busy');
    main.resize(110);
    expect(shard.limit).toBe(110);
    expect(shard.tryAdmit(40, 0)).toBe('admitted');
    expect(main.bytes).toBe(110);
    shard.release(110);
    expect(main.bytes).toBe(0);
  });

  it('keeps limits and counts above 2 GiB exact', () => {
    const pending = new SharedPendingBytes(5 * 2 ** 30 + 1);
    expect(pending.tryAdmit(3 * 2 ** 30, 0)).toBe('admitted');
    expect(pending.tryAdmit(2 * 2 ** 30, 0)).toBe('admitted');
    expect(pending.bytes).toBe(5 * 2 ** 30);
    expect(pending.tryAdmit(2, 0)).toBe('busy');
    expect(pending.tryAdmit(1, 0)).toBe('admitted');
    expect(pending.tryAdmit(5 * 2 ** 30 + 1, 1)).toBe('too_large');
    expect([pending.bytes, pending.limit]).toEqual([5 * 2 ** 30 + 1, 5 * 2 ** 30 + 1]);
  });

  it('lets a claim hand what it holds to a claim on the other side, which gives it back', () => {
    const main = new SharedPendingBytes(100);
    const shard = new SharedPendingBytes(main.memory);
    const reading = new PendingClaim(main);
    expect(reading.take(30)).toBe('admitted');
    expect(reading.handOver()).toBe(30);
    expect(reading.held).toBe(0);
    const decoding = new PendingClaim(shard, 30);
    // Too large counts what the body holds already.
    expect(decoding.take(71)).toBe('too_large');
    expect(decoding.take(50)).toBe('admitted');
    decoding.shrinkTo(20);
    expect([decoding.held, main.bytes]).toEqual([20, 20]);
    reading.release();
    expect(main.bytes).toBe(20);
    decoding.release();
    expect(main.bytes).toBe(0);
  });

  it('admits and refuses from two sides exactly as one plain bound, never above the limit, and ends at 0', () => {
    type Op =
      | { kind: 'take'; request: number; bytes: number }
      | { kind: 'shrink'; request: number; to: number }
      | { kind: 'handOver'; request: number }
      | { kind: 'release'; request: number }
      | { kind: 'resize'; side: number; limit: number };
    const request = fc.integer({ min: 0, max: 3 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('take' as const), request, bytes: fc.integer({ min: 1, max: 120 }) }), weight: 4 },
      fc.record({ kind: fc.constant('shrink' as const), request, to: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ kind: fc.constant('handOver' as const), request }),
      fc.record({ kind: fc.constant('release' as const), request }),
      fc.record({ kind: fc.constant('resize' as const), side: fc.integer({ min: 0, max: 1 }), limit: fc.integer({ min: 50, max: 150 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const model = new PendingBytes(100);
        const sides = [new SharedPendingBytes(100)];
        sides.push(new SharedPendingBytes(sides[0]!.memory));
        // Each request's claim, on the side that holds it now (requests start on side 0, the main thread).
        const side = [0, 0, 0, 0];
        const claims = side.map((s) => new PendingClaim(sides[s]!));
        const modelClaims = side.map(() => new PendingClaim(model));
        for (const o of ops) {
          if (o.kind === 'take') {
            const admission = claims[o.request]!.take(o.bytes);
            expect(admission).toBe(modelClaims[o.request]!.take(o.bytes));
            // A smaller limit keeps what was admitted before it; what it admits stays within it.
            if (admission === 'admitted') expect(sides[0]!.bytes).toBeLessThanOrEqual(sides[0]!.limit);
          } else if (o.kind === 'shrink') {
            claims[o.request]!.shrinkTo(o.to);
            modelClaims[o.request]!.shrinkTo(o.to);
          } else if (o.kind === 'handOver') {
            const to = 1 - side[o.request]!;
            side[o.request] = to;
            claims[o.request] = new PendingClaim(sides[to]!, claims[o.request]!.handOver());
          } else if (o.kind === 'release') {
            claims[o.request]!.release();
            modelClaims[o.request]!.release();
          } else {
            sides[o.side]!.resize(o.limit);
            model.resize(o.limit);
          }
          expect(sides.map((s) => [s.bytes, s.limit])).toEqual([
            [model.bytes, model.limit],
            [model.bytes, model.limit],
          ]);
          expect(claims.map((c) => c.held)).toEqual(modelClaims.map((c) => c.held));
        }
        for (const claim of claims) claim.release();
        expect(sides[1]!.bytes).toBe(0);
      }),
      { numRuns },
    );
  });
});

/**
 * A worker thread that takes, shrinks and releases claims on the bound in `memory`, checking after
 * every step that the counter is within the limit; it starts when the main thread says so, so
 * both workers run at once.
 */
const HAMMER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { register } = await import(workerData.tsx);
  register();
  const { SharedPendingBytes, PendingClaim } = await import(workerData.pending);
  const pending = new SharedPendingBytes(workerData.memory);
  const start = new Int32Array(workerData.start);
  parentPort.postMessage('ready');
  Atomics.wait(start, 0, 0);
  let seed = workerData.seed;
  const random = (n) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const counts = { admitted: 0, busy: 0, tooLarge: 0, overLimit: 0 };
  const claims = [];
  for (let i = 0; i < workerData.ops; i++) {
    if (claims.length === 0 || (claims.length < 4 && random(3) === 0)) claims.push(new PendingClaim(pending));
    const claim = claims[random(claims.length)];
    const step = random(4);
    if (step < 2) {
      const admission = claim.take(1 + random(400));
      if (admission === 'admitted') counts.admitted++;
      else if (admission === 'busy') counts.busy++;
      else counts.tooLarge++;
    } else if (step === 2) claim.shrinkTo(random(100));
    else {
      claim.release();
      claims.splice(claims.indexOf(claim), 1);
    }
    if (pending.bytes > pending.limit) counts.overLimit++;
  }
  for (const claim of claims) claim.release();
  parentPort.postMessage(counts);
})();
`;

describe('pending bytes bound shared by two threads', () => {
  it('never passes the limit and ends at 0 while two threads take and give back hundreds of thousands of times', async () => {
    const bound = new SharedPendingBytes(1000);
    const start = new SharedArrayBuffer(4);
    const workers = [1, 2].map(
      (seed) =>
        new Worker(HAMMER, {
          eval: true,
          workerData: {
            tsx: import.meta.resolve('tsx/esm/api'),
            pending: new URL('../../../receivers/loki/pending.ts', import.meta.url).href,
            memory: bound.memory,
            start,
            seed,
            ops: 200_000,
          },
        }),
    );
    const message = (worker: Worker) =>
      new Promise<unknown>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    // Both wait on the flag once loaded, so neither runs its loop alone.
    expect(await Promise.all(workers.map(message))).toEqual(['ready', 'ready']);
    const counts = workers.map((worker) => message(worker) as Promise<Record<string, number>>);
    Atomics.store(new Int32Array(start), 0, 1);
    Atomics.notify(new Int32Array(start), 0);
    const results = await Promise.all(counts);
    await Promise.all(workers.map((worker) => worker.terminate()));
    expect(bound.bytes).toBe(0);
    for (const result of results) {
      expect(result.overLimit).toBe(0);
      expect(result.admitted).toBeGreaterThan(1000);
      expect(result.busy).toBeGreaterThan(0);
    }
  }, 30_000);
});
