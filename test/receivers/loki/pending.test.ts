import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingBytes, PendingClaim } from '../../../receivers/loki/pending.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

describe('pending bytes bound', () => {
  it('admits within the limit, says busy beside others and too large alone', () => {
    const pending = new PendingBytes(100);
    expect(pending.tryAdmit(60, 0)).toBe('admitted');
    expect(pending.tryAdmit(50, 0)).toBe('busy');
    expect(pending.tryAdmit(40, 0)).toBe('admitted');
    expect(pending.hasRoom()).toBe(false);
    pending.release(100);
    // The first request is bound too: nothing else is pending, and it still does not fit.
    expect(pending.tryAdmit(101, 0)).toBe('too_large');
    expect(pending.tryAdmit(100, 0)).toBe('admitted');
    expect(pending.tryAdmit(1, 100)).toBe('too_large');
    expect(pending.bytes).toBe(100);
  });

  it('lets a claim give back all but what stays alive', () => {
    const pending = new PendingBytes(100);
    const claim = new PendingClaim(pending);
    expect(claim.take(70)).toBe('admitted');
    expect(claim.take(40)).toBe('too_large');
    claim.shrinkTo(30);
    expect([claim.held, pending.bytes]).toEqual([30, 30]);
    claim.shrinkTo(50);
    expect(claim.held).toBe(30);
    claim.release();
    expect([claim.held, pending.bytes]).toEqual([0, 0]);
  });

  it('never holds more than the limit', () => {
    type Op = { kind: 'admit'; request: number; bytes: number } | { kind: 'release'; request: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('admit' as const), request: fc.integer({ min: 0, max: 4 }), bytes: fc.integer({ min: 1, max: 120 }) }),
      fc.record({ kind: fc.constant('release' as const), request: fc.integer({ min: 0, max: 4 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 50 }), (ops) => {
        const pending = new PendingBytes(100);
        const held = [0, 0, 0, 0, 0];
        for (const o of ops) {
          if (o.kind === 'admit') {
            const admission = pending.tryAdmit(o.bytes, held[o.request]!);
            if (admission === 'admitted') held[o.request]! += o.bytes;
            // Too large means alone too large: retrying later can never help.
            if (admission === 'too_large') expect(held[o.request]! + o.bytes).toBeGreaterThan(100);
          } else {
            pending.release(held[o.request]!);
            held[o.request] = 0;
          }
          const total = held.reduce((a, b) => a + b, 0);
          expect(pending.bytes).toBe(total);
          expect(total).toBeLessThanOrEqual(100);
        }
      }),
      { numRuns },
    );
  });
});
