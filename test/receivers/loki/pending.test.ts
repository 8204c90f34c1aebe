import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingBytes } from '../../../receivers/loki/pending.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('pending bytes bound', () => {
  it('admits within the limit, or one request alone, and refuses the rest', () => {
    const pending = new PendingBytes(100);
    expect(pending.tryAdmit(60, 0)).toBe(true);
    expect(pending.tryAdmit(50, 0)).toBe(false);
    expect(pending.tryAdmit(40, 0)).toBe(true);
    expect(pending.hasRoom()).toBe(false);
    pending.release(100);
    expect(pending.tryAdmit(500, 0)).toBe(true);
    expect(pending.tryAdmit(500, 500)).toBe(true);
    expect(pending.roomFor(1000, 5000)).toBe(5000);
  });

  it('never holds more than the limit unless a single request holds it all', () => {
    type Op = { kind: 'admit'; request: number; bytes: number } | { kind: 'release'; request: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('admit' as const), request: fc.integer({ min: 0, max: 4 }), bytes: fc.integer({ min: 1, max: 80 }) }),
      fc.record({ kind: fc.constant('release' as const), request: fc.integer({ min: 0, max: 4 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 50 }), (ops) => {
        const pending = new PendingBytes(100);
        const held = [0, 0, 0, 0, 0];
        for (const o of ops) {
          if (o.kind === 'admit') {
            if (pending.tryAdmit(o.bytes, held[o.request]!)) held[o.request]! += o.bytes;
          } else {
            pending.release(held[o.request]!);
            held[o.request] = 0;
          }
          const total = held.reduce((a, b) => a + b, 0);
          expect(pending.bytes).toBe(total);
          const holders = held.filter((h) => h > 0).length;
          if (holders > 1) expect(total).toBeLessThanOrEqual(100);
        }
      }),
      { numRuns },
    );
  });
});
