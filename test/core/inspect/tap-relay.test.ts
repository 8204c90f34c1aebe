import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { TAP_FLUSH_MS, TapHub, type TapDirection } from '../../../core/inspect/tap.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance', 'setTimeout', 'clearTimeout'], now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

const entries = (from: number, count: number): Entry[] =>
  Array.from({ length: count }, (_, i) => ({
    labels: { n: String(from + i) },
    line: `line ${from + i}`,
    timestamp: 0n,
    structuredMetadata: [],
    extracted: {},
  }));

const lineOf = (n: number) =>
  `${JSON.stringify({ labels: { n: String(n) }, line: `line ${n}`, timestamp: '1970-01-01T00:00:00.000000000Z', structured_metadata: {} })}\n`;
const linesOf = (from: number, count: number) => Array.from({ length: count }, (_, i) => lineOf(from + i));

async function dropped(registry: Registry, reason: string): Promise<number> {
  const text = await registry.metrics();
  const found = new RegExp(`rivulet_tap_dropped_entries_total\\{component_id="logs.process.p",reason="${reason}"\\} (\\d+)`).exec(text);
  return found ? Number(found[1]) : 0;
}

/** An output that takes every write. */
class Output extends EventEmitter {
  readonly chunks: string[] = [];
  write(chunk: Buffer): boolean {
    this.chunks.push(chunk.toString());
    return true;
  }
}

describe('the main thread of a sharded run: TapHub feeds', () => {
  it('are told how many clients tap each component and direction and the fastest rate, and 0 once the last leaves', () => {
    const hub = new TapHub(new Registry());
    const told: Array<[string, TapDirection, number, number]> = [];
    const early = hub.subscribe('logs.echo.out', 'in', { ratePerSecond: 7 })!;
    hub.feedFrom({ tapped: (...args) => void told.push(args) });
    // What was tapped before the feeds came.
    expect(told).toEqual([['logs.echo.out', 'in', 1, 7]]);

    const slow = hub.subscribe('logs.process.p', 'out', { ratePerSecond: 5 })!;
    const fast = hub.subscribe('logs.process.p', 'out', { ratePerSecond: 50 })!;
    fast.close();
    slow.close();
    early.close();
    expect(told.slice(1)).toEqual([
      ['logs.process.p', 'out', 1, 5],
      ['logs.process.p', 'out', 2, 50],
      ['logs.process.p', 'out', 1, 5],
      ['logs.process.p', 'out', 0, 0],
      ['logs.echo.out', 'in', 0, 0],
    ]);
    hub.feedFrom(undefined);
    hub.subscribe('logs.echo.out', 'in')!.close();
    expect(told).toHaveLength(6);
  });

  it('gives relayed lines to each client at its own rate and buffer, counting what each leaves out', async () => {
    const registry = new Registry();
    const hub = new TapHub(registry);
    const slow = hub.subscribe('logs.process.p', 'out', { ratePerSecond: 2 })!;
    const small = hub.subscribe('logs.process.p', 'out', { ratePerSecond: 100, bufferEntries: 3 })!;
    const outputs = [new Output(), new Output()];
    slow.attach(outputs[0]!);
    small.attach(outputs[1]!);

    hub.offerLines('logs.process.p', 'out', linesOf(0, 5));
    // Lines of a component and direction no one taps are let go.
    hub.offerLines('logs.process.p', 'in', linesOf(5, 5));
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(outputs.map((o) => o.chunks)).toEqual([[linesOf(0, 2).join('')], [linesOf(0, 3).join('')]]);
    expect(await dropped(registry, 'rate_limited')).toBe(3);
    expect(await dropped(registry, 'slow_client')).toBe(2);

    // Half a second on, the slow client has one more token.
    vi.advanceTimersByTime(500 - TAP_FLUSH_MS);
    hub.offerLines('logs.process.p', 'out', linesOf(10, 2));
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(outputs.map((o) => o.chunks.slice(1))).toEqual([[lineOf(10)], [linesOf(10, 2).join('')]]);
    expect(await dropped(registry, 'rate_limited')).toBe(4);
    slow.close();
    small.close();
  });
});

describe('a shard: TapHub.relay', () => {
  it('sends at most the rate a second, batched every TAP_FLUSH_MS, and counts what it leaves out for each client', async () => {
    const registry = new Registry();
    const hub = new TapHub(registry);
    const sent: string[][] = [];
    hub.relay('logs.process.p', 'out', 3, 4, (lines) => sent.push(lines));

    hub.offer('logs.process.p', 'out', entries(0, 3));
    hub.offer('logs.process.p', 'out', entries(3, 3));
    hub.offer('logs.process.p', 'in', entries(100, 3));
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(sent).toEqual([linesOf(0, 4)]);
    // Two entries left out, for each of the three clients.
    expect(await dropped(registry, 'rate_limited')).toBe(6);

    // A quarter of a second brings one token; a faster client joining brings its larger burst.
    vi.advanceTimersByTime(250 - TAP_FLUSH_MS);
    hub.offer('logs.process.p', 'out', entries(6, 2));
    hub.relay('logs.process.p', 'out', 4, 8, (lines) => sent.push(lines));
    hub.offer('logs.process.p', 'out', entries(8, 6));
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(sent.slice(1)).toEqual([[lineOf(6), ...linesOf(8, 4)]]);
    expect(await dropped(registry, 'rate_limited')).toBe(6 + 3 * 1 + 4 * 2);
  });

  it('stops with no client left: nothing more is sent or counted', async () => {
    const registry = new Registry();
    const hub = new TapHub(registry);
    const sent: string[][] = [];
    hub.relay('logs.process.p', 'in', 1, 1, (lines) => sent.push(lines));
    hub.offer('logs.process.p', 'in', entries(0, 3));
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(sent).toEqual([[lineOf(0)]]);
    expect(await dropped(registry, 'rate_limited')).toBe(2);

    hub.offer('logs.process.p', 'in', entries(3, 2));
    hub.relay('logs.process.p', 'in', 0, 0, (lines) => sent.push(lines));
    vi.advanceTimersByTime(2000);
    hub.offer('logs.process.p', 'in', entries(5, 5));
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(sent).toEqual([[lineOf(0)]]);
    expect(await dropped(registry, 'rate_limited')).toBe(4);
    // A relay is no client: the hub still admits its most clients.
    const subs = Array.from({ length: hub.maxClients }, () => hub.subscribe('c', 'in'));
    expect(subs.every((s) => s !== undefined)).toBe(true);
  });
});
