import fc from 'fast-check';
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Backoff, backoffClockOn, retryAfterMs, type BackoffClock, type BackoffConfig } from '../../lib/backoff.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

function recording(random: () => number): BackoffClock & { waits: number[] } {
  const waits: number[] = [];
  return { waits, random, sleep: async (ms) => void waits.push(ms) };
}

function delays(config: BackoffConfig, random: () => number, count: number): number[] {
  const backoff = new Backoff(config, recording(random));
  return Array.from({ length: count }, () => backoff.nextDelay());
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
          const backoff = new Backoff({ minMs, maxMs: minMs * 8, maxRetries }, clock, new AbortController().signal);
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
          const backoff = new Backoff({ minMs, maxMs, maxRetries: 12 }, clock);
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

  it('keeps the window where it is once its top reaches max', () => {
    const config = { minMs: 100, maxMs: 1000, maxRetries: 0 };
    expect(delays(config, () => 0, 6)).toEqual([100, 200, 400, 800, 800, 800]);
    expect(delays(config, () => 0.999, 6)).toEqual([199, 399, 799, 999, 999, 999]);
  });

  it('with floorRisesToMax, keeps doubling the floor until every wait is max', () => {
    const config = { minMs: 100, maxMs: 1000, maxRetries: 0, floorRisesToMax: true };
    expect(delays(config, () => 0, 6)).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(delays(config, () => 0.999, 5)).toEqual([199, 399, 799, 999, 1000]);
  });

  it('waits min every time when max is not above it', () => {
    expect(delays({ minMs: 300, maxMs: 300, maxRetries: 0 }, () => 0.5, 3)).toEqual([300, 300, 300]);
    expect(delays({ minMs: 300, maxMs: 100, maxRetries: 0, floorRisesToMax: true }, () => 0.5, 3)).toEqual([300, 300, 300]);
  });

  it('keeps every wait within [min, max] whatever the jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.boolean(),
        fc.array(fc.double({ min: 0, max: 0.9999, noNaN: true }), { maxLength: 20 }),
        (minMs, extra, floorRisesToMax, draws) => {
          const maxMs = minMs + extra;
          let i = 0;
          const random = () => draws[i++ % Math.max(1, draws.length)] ?? 0;
          for (const d of delays({ minMs, maxMs, maxRetries: 0, floorRisesToMax }, random, draws.length)) {
            expect(d).toBeGreaterThanOrEqual(minMs);
            expect(d).toBeLessThanOrEqual(maxMs);
          }
        },
      ),
      { numRuns },
    );
  });

  it('goes on without limit when max_retries is 0, until the caller gives up', async () => {
    const controller = new AbortController();
    const clock: BackoffClock = { random: () => 0, sleep: async () => {} };
    const backoff = new Backoff({ minMs: 1, maxMs: 2, maxRetries: 0 }, clock, controller.signal);
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
    const backoff = new Backoff({ minMs: 100, maxMs: 200, maxRetries: 5 }, clock, controller.signal);
    await backoff.wait();
    expect(clock.waits).toEqual([]);
    expect(backoff.ongoing()).toBe(false);
  });
});

describe('backoffClockOn', () => {
  it('waits on its scheduler, so virtual time paces retries', async () => {
    const scheduler = new VirtualTimeScheduler();
    const clock = backoffClockOn(scheduler);
    let woke = false;
    const sleeping = clock.sleep(500, new AbortController().signal).then(() => (woke = true));
    scheduler.maxFrames = 499;
    scheduler.flush();
    await Promise.resolve();
    expect(woke).toBe(false);
    scheduler.maxFrames = 500;
    scheduler.flush();
    await sleeping;
    expect(woke).toBe(true);
  });

  it('stops waiting when the signal aborts, and cancels its timer', async () => {
    const scheduler = new VirtualTimeScheduler();
    const controller = new AbortController();
    const sleeping = backoffClockOn(scheduler).sleep(500, controller.signal);
    expect(scheduler.actions).toHaveLength(1);
    controller.abort();
    await sleeping;
    expect(scheduler.actions).toHaveLength(0);
  });
});

describe('retryAfterMs', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('3', 0)).toBe(3000);
    expect(retryAfterMs(' 0 ', 0)).toBe(0);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(retryAfterMs('soon', 0)).toBeUndefined();
    expect(retryAfterMs(null, 0)).toBeUndefined();
  });
});
