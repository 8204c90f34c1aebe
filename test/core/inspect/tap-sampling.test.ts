import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { logsReceiverCapsule, type LogsReceiver } from '../../../core/receiver.js';
import { TAP_FLUSH_MS, TapHub } from '../../../core/inspect/tap.js';

/** Counts every serialization of an entry to JSON, wherever it happens. */
const encodings = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../core/entry-json.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../core/entry-json.js')>();
  return {
    ...actual,
    entryToJson: (...args: Parameters<typeof actual.entryToJson>) => {
      encodings.count++;
      return actual.entryToJson(...args);
    },
  };
});

beforeEach(() => {
  encodings.count = 0;
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

/** A receiver wrapped as the graph wraps one component's export for another, and what reached it. */
function tapped(hub: TapHub) {
  const received: string[] = [];
  const inner: LogsReceiver = {
    send: async (batch) => {
      received.push(...batch.map((e) => e.line));
    },
  };
  const capsule = hub.wrapExport(logsReceiverCapsule(inner), 'logs.echo.out', 'logs.process.p') as { value: LogsReceiver };
  return { send: (batch: Entry[]) => capsule.value.send(batch), received };
}

/** An output that takes writes until told it is full, then waits for `drain`. */
class FakeOutput extends EventEmitter {
  readonly chunks: Buffer[] = [];
  full = false;
  write(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return !this.full;
  }
}

async function metric(registry: Registry, reason: string): Promise<number> {
  const text = await registry.metrics();
  const found = new RegExp(`rivulet_tap_dropped_entries_total\\{component_id="logs.echo.out",reason="${reason}"\\} (\\d+)`).exec(text);
  return found ? Number(found[1]) : 0;
}

describe('tap sampling with many clients', () => {
  it('serializes an entry once however many clients take it, and never when none does', async () => {
    const registry = new Registry();
    const hub = new TapHub(registry, { maxClients: 200 });
    const subs = Array.from({ length: 200 }, () => hub.subscribe('logs.echo.out', 'in', { ratePerSecond: 10 })!);
    const pipeline = tapped(hub);

    // Every client has a burst of 10: the first 10 entries are sampled, once each.
    pipeline.send(entries(0, 10));
    expect(encodings.count).toBe(10);
    const first = subs[0]!.take();
    expect(first).toHaveLength(10);
    for (const sub of subs.slice(1)) {
      const lines = sub.take();
      expect(lines).toHaveLength(10);
      lines.forEach((line, i) => expect(line).toBe(first[i]));
    }

    // Out of tokens: nothing is sampled, so nothing is serialized; each client counts its drops.
    pipeline.send(entries(10, 5));
    expect(encodings.count).toBe(10);
    expect(await metric(registry, 'rate_limited')).toBe(200 * 5);

    // A tenth of a second later each client has one token: one more entry sampled, serialized once.
    vi.advanceTimersByTime(100);
    pipeline.send(entries(15, 3));
    expect(encodings.count).toBe(11);
    for (const sub of subs)
      expect(sub.take()).toEqual([
        `${JSON.stringify({ labels: { n: '15' }, line: 'line 15', timestamp: '1970-01-01T00:00:00.000000000Z', structured_metadata: {} })}\n`,
      ]);
    expect(await metric(registry, 'rate_limited')).toBe(200 * 5 + 200 * 2);

    // The pipeline got every entry, in order.
    expect(pipeline.received).toEqual(entries(0, 18).map((e) => e.line));
    for (const sub of subs) sub.close();
  });

  it('writes the same bytes to every client holding the same lines, and leaves a full client behind without holding the pipeline', async () => {
    const registry = new Registry();
    const hub = new TapHub(registry);
    const outputs = [new FakeOutput(), new FakeOutput(), new FakeOutput()];
    const subs = outputs.map((output, i) => {
      const sub = hub.subscribe('logs.echo.out', 'in', { ratePerSecond: 100, bufferEntries: i === 2 ? 4 : 10 })!;
      sub.attach(output);
      return sub;
    });
    const pipeline = tapped(hub);
    outputs[2]!.full = true;

    pipeline.send(entries(0, 3));
    expect(outputs.every((o) => o.chunks.length === 0)).toBe(true);
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(outputs.map((o) => o.chunks.length)).toEqual([1, 1, 1]);
    expect(outputs[1]!.chunks[0]).toBe(outputs[0]!.chunks[0]);
    expect(outputs[2]!.chunks[0]).toBe(outputs[0]!.chunks[0]);
    expect(
      outputs[0]!.chunks[0]!.toString()
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l).line),
    ).toEqual(['line 0', 'line 1', 'line 2']);

    // The third client's socket is full: its lines wait (up to its buffer), the others go on.
    pipeline.send(entries(3, 6));
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(outputs.map((o) => o.chunks.length)).toEqual([2, 2, 1]);
    expect(subs[2]!.lines).toHaveLength(4);
    expect(await metric(registry, 'slow_client')).toBe(2);
    expect(pipeline.received).toHaveLength(9);

    // Once it drains, it gets what it kept.
    outputs[2]!.full = false;
    outputs[2]!.emit('drain');
    vi.advanceTimersByTime(TAP_FLUSH_MS);
    expect(outputs[2]!.chunks).toHaveLength(2);
    expect(
      outputs[2]!.chunks[1]!.toString()
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l).line),
    ).toEqual(['line 3', 'line 4', 'line 5', 'line 6']);
    for (const sub of subs) sub.close();
  });
});
