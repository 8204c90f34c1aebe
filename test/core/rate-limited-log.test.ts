import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { FAILURE_LOG_INTERVAL_MS, rateLimitedDebug } from '../../core/rate-limited-log.js';

/** A rate-limited log on a virtual clock, with what it wrote. */
function setup(intervalMs?: number) {
  const clock = new ManualClock(0n);
  const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const log = rateLimitedDebug({ clock, debug: (message, fields) => lines.push({ message, fields }) }, 'it failed', intervalMs);
  return { clock, lines, log };
}

describe('rateLimitedDebug', () => {
  it('logs the first occurrence at once', () => {
    const { lines, log } = setup();
    log({ error: 'e1' });
    expect(lines).toEqual([{ message: 'it failed', fields: { error: 'e1', occurrences: 1 } }]);
  });

  it('stays quiet for the interval, then logs with the number of occurrences since the previous line', () => {
    const { clock, lines, log } = setup();
    log({ error: 'e1' });
    for (let i = 2; i <= 1000; i++) log({ error: `e${i}` });
    clock.advanceBy(FAILURE_LOG_INTERVAL_MS - 1);
    log({ error: 'e1001' });
    expect(lines).toHaveLength(1);
    clock.advanceBy(1);
    log({ error: 'e1002' });
    expect(lines).toEqual([
      { message: 'it failed', fields: { error: 'e1', occurrences: 1 } },
      { message: 'it failed', fields: { error: 'e1002', occurrences: 1001 } },
    ]);
  });

  it('counts from the last line, not from the first', () => {
    const { clock, lines, log } = setup(1000);
    log();
    clock.advanceBy(1500);
    log();
    clock.advanceBy(600);
    log();
    clock.advanceBy(400);
    log();
    expect(lines.map((l) => l.fields?.occurrences)).toEqual([1, 1, 2]);
  });

  it('logs at most once per 10 seconds by default', () => {
    expect(FAILURE_LOG_INTERVAL_MS).toBe(10_000);
  });
});
