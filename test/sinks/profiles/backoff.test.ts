import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { Backoff, backoffClockFrom, type BackoffClock } from '../../../sinks/profiles/backoff.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

function recording(random: () => number): BackoffClock & { waits: number[] } {
  const waits: number[] = [];
  return { waits, random, sleep: async (ms) => void waits.push(ms) };
}

/** The reference's retry loop around a call that always fails; returns the attempts made. */
async function attemptsUntilGivingUp(backoff: Backoff, limit = 1_000): Promise<number> {
  let attempts = 0;
  for (;;) {
    attempts++;
    await backoff.wait();
    if (!backoff.ongoing() || attempts >= limit) return attempts;
  }
}

describe('Backoff', () => {
  it('allows exactly max_retries attempts, with one wait fewer', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        async (maxRetries, minMs, r) => {
          const clock = recording(() => r);
          const backoff = new Backoff({ minMs, maxMs: minMs * 8, maxRetries }, new AbortController().signal, clock);
          expect(await attemptsUntilGivingUp(backoff)).toBe(maxRetries);
          expect(clock.waits).toHaveLength(maxRetries - 1);
          expect(backoff.numRetries()).toBe(maxRetries);
        },
      ),
      { numRuns },
    );
  });

  it('draws each wait from a window that starts at [min, 2·min) and doubles up to max', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 64 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        async (minMs, factor, r) => {
          const maxMs = minMs * factor;
          const clock = recording(() => r);
          const backoff = new Backoff({ minMs, maxMs, maxRetries: 12 }, new AbortController().signal, clock);
          await attemptsUntilGivingUp(backoff);
          let low = minMs;
          let high = Math.min(2 * minMs, maxMs);
          for (const wait of clock.waits) {
            if (low >= high) expect(wait).toBe(low);
            else {
              expect(wait).toBeGreaterThanOrEqual(low);
              expect(wait).toBeLessThan(high);
            }
            if (high < maxMs) {
              low = Math.min(low * 2, maxMs);
              high = Math.min(high * 2, maxMs);
            }
          }
        },
      ),
      { numRuns },
    );
  });

  it('goes on without limit when max_retries is 0, until the caller gives up', async () => {
    const controller = new AbortController();
    const clock: BackoffClock = { random: () => 0, sleep: async () => {} };
    const backoff = new Backoff({ minMs: 1, maxMs: 2, maxRetries: 0 }, controller.signal, clock);
    for (let i = 0; i < 50; i++) {
      await backoff.wait();
      expect(backoff.ongoing()).toBe(true);
    }
    controller.abort();
    expect(backoff.ongoing()).toBe(false);
  });

  it('does not wait once the caller has given up', async () => {
    const controller = new AbortController();
    controller.abort();
    const clock = recording(() => 0);
    const backoff = new Backoff({ minMs: 100, maxMs: 200, maxRetries: 5 }, controller.signal, clock);
    await backoff.wait();
    expect(clock.waits).toEqual([]);
    expect(backoff.ongoing()).toBe(false);
  });

  it('waits on a component clock, so virtual time paces retries', async () => {
    const manual = new ManualClock(0n);
    const clock = backoffClockFrom(manual);
    let woke = false;
    const sleeping = clock.sleep(500, new AbortController().signal).then(() => (woke = true));
    manual.advanceBy(499);
    await Promise.resolve();
    expect(woke).toBe(false);
    manual.advanceBy(1);
    await sleeping;
    expect(woke).toBe(true);
  });
});
