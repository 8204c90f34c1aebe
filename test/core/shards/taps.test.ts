/**
 * Live taps of a sharded run: the run server's clients, on the main thread, see the entries that
 * flow on the shards, which relay the lines of what passes a tapped component there for as long
 * as a client taps it, and no longer.
 */
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FromShard, ToShard } from '../../../core/shards/shard-messages.js';
import { ShardedRun } from '../../../core/shards/sharded-run.js';
import type { WireStream } from '../../../lib/loki/wire.js';
import { eventually } from '../../support/running-instance.js';
import { pushProcessEcho } from './pipelines.js';
import { push, runConfig, type CommandRun } from './support.js';

const API = 'logs.source.api.in';
const BASE_NS = 1_700_000_000_000_000_000n;

// A stateful stage (limit, by app) so each entry goes to the shard owning its app's stream.
const CONFIG = pushProcessEcho([
  'stage.limit {\n    rate          = 1000\n    burst         = 1000\n    by_label_name = "app"\n    drop          = true\n  }',
  'stage.static_labels {\n    values = { tier = "web" }\n  }',
]);

/** What the shards relay to the main thread, each message with the thread it came from. */
const relayed: Array<{ thread: number; lines: readonly string[] }> = [];
/** What the main thread tells the shards about taps, each message with the thread it went to. */
const told: Array<{ thread: number; message: ToShard & { kind: 'tap' } }> = [];

/** Runs CONFIG on two shards, the messages about taps between the threads recorded. */
async function startSharded(): Promise<CommandRun> {
  const prototype = ShardedRun.prototype as unknown as { receive(thread: { worker: Worker }, message: FromShard): void };
  const receive = prototype.receive;
  vi.spyOn(prototype, 'receive').mockImplementation(function (this: unknown, thread, message) {
    if (message.kind === 'tap') relayed.push({ thread: thread.worker.threadId, lines: message.lines });
    receive.call(this, thread, message);
  });
  const postMessage = Worker.prototype.postMessage;
  vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker, message, transfer) {
    if ((message as ToShard).kind === 'tap') told.push({ thread: this.threadId, message: message as ToShard & { kind: 'tap' } });
    postMessage.call(this, message, transfer);
  });
  return runConfig(CONFIG, ['--shards', '2'], [API]);
}

/** A tap client reading in the background: its lines so far, and how to close it. */
async function openTap(url: string): Promise<{ lines: string[]; direction: string | null; close(): Promise<void> }> {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  expect(res.status).toBe(200);
  const lines: string[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        rest += decoder.decode(value, { stream: true });
        const parts = rest.split('\n');
        rest = parts.pop()!;
        lines.push(...parts);
      }
    } catch {
      // Aborted by close().
    }
  })();
  return {
    lines,
    direction: res.headers.get('x-tap-direction'),
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

/** Four pushes, each of two streams (apps a<push>, b<push>) of `perStream` entries, numbered on. */
function pushes(perStream: number): WireStream[][] {
  let n = 0;
  return Array.from({ length: 4 }, (_, p) =>
    ['a', 'b'].map((app) => ({
      labels: `{app="${app}${p}"}`,
      entries: Array.from({ length: perStream }, () => {
        const k = n++;
        return { timestampNs: BASE_NS + BigInt(k), line: `line ${k}`, structuredMetadata: [] };
      }),
    })),
  );
}

/** The tap line of the k-th pushed entry, with `labels` (JSON text). */
function tapLine(k: number, labels: string): string {
  return `{"labels":${labels},"line":"line ${k}","timestamp":"2023-11-14T22:13:20.${String(k).padStart(9, '0')}Z","structured_metadata":{}}`;
}

/** The tap lines of every pushed entry as `pushes` numbers them, in order. */
function expectedLines(perStream: number, extra: string): string[] {
  const out: string[] = [];
  for (let p = 0; p < 4; p++) {
    for (const [s, app] of ['a', 'b'].entries()) {
      for (let i = 0; i < perStream; i++) out.push(tapLine(p * 2 * perStream + s * perStream + i, `{"app":"${app}${p}"${extra}}`));
    }
  }
  return out;
}

/** The lines logs.echo printed so far. */
function echoedLines(run: CommandRun): string[] {
  return run.stdout().split('\n').filter(Boolean);
}

/** The sum of /metrics' dropped tap entries for the process (the shards' with the main thread's). */
async function droppedTotal(run: CommandRun): Promise<number> {
  const text = await (await fetch(`${run.runUrl}/metrics`)).text();
  const found = [...text.matchAll(/^rivulet_tap_dropped_entries_total\{component_id="logs\.process\.p",reason="\w+"\} (\d+)$/gm)];
  return found.reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('a tap of a sharded run', () => {
  let run: CommandRun;
  beforeAll(async () => {
    run = await startSharded();
  }, 60_000);
  afterAll(async () => {
    expect(await run.stop()).toBe(0);
    vi.restoreAllMocks();
  });
  let dropped = 0;
  let echoed = 0;
  beforeEach(async () => {
    relayed.length = 0;
    told.length = 0;
    dropped = await droppedTotal(run);
    echoed = echoedLines(run).length;
  });

  it("shows every entry of both shards, what a logs.process is sent and what it sends on, as the echo's own lines", {
    timeout: 60_000,
  }, async () => {
    const base = `${run.runUrl}/api/v0/tap/logs.process.p?rate=1000`;
    const tapIn = await openTap(`${base}&direction=in`);
    const tapOut = await openTap(base);
    expect([tapIn.direction, tapOut.direction]).toEqual(['in', 'out']);
    for (const streams of pushes(3)) expect((await push(run.apiUrls.get(API)!, streams)).status).toBe(204);
    await eventually(() => tapIn.lines.length >= 24 && tapOut.lines.length >= 24, 'every line on both taps', 15_000);
    await eventually(() => echoedLines(run).length === echoed + 24, 'every entry echoed', 15_000);
    await tapIn.close();
    await tapOut.close();
    await eventually(() => told.filter((t) => t.message.clients === 0).length === 4, 'both shards told to stop both taps', 10_000);

    expect([...tapIn.lines].sort()).toEqual(expectedLines(3, '').sort());
    expect([...tapOut.lines].sort()).toEqual(expectedLines(3, ',"tier":"web"').sort());
    expect([...tapOut.lines].sort()).toEqual(echoedLines(run).slice(echoed).sort());
    // Both shards saw entries and relayed them.
    expect(new Set(relayed.map((r) => r.thread)).size).toBe(2);
    expect(relayed.reduce((n, r) => n + r.lines.length, 0)).toBe(48);
    expect(await droppedTotal(run)).toBe(dropped);
  });

  it('holds a client to its rate, the shards relaying at most that rate and counting what they leave out', {
    timeout: 60_000,
  }, async () => {
    const opened = performance.now();
    const tap = await openTap(`${run.runUrl}/api/v0/tap/logs.process.p?rate=5&direction=in`);
    for (const streams of pushes(5)) expect((await push(run.apiUrls.get(API)!, streams)).status).toBe(204);
    // Every entry is either shown or counted as dropped, once (one client), on a shard or the main thread.
    await eventually(async () => (await droppedTotal(run)) - dropped + tap.lines.length === 40, 'every entry shown or counted', 15_000);
    const seconds = (performance.now() - opened) / 1000;
    await tap.close();
    await eventually(() => told.filter((t) => t.message.clients === 0).length === 2, 'both shards told to stop', 10_000);

    // A burst of 5, then 5 a second.
    expect(tap.lines.length).toBeGreaterThanOrEqual(5);
    expect(tap.lines.length).toBeLessThanOrEqual(5 + Math.floor(5 * seconds));
    const all = new Set(expectedLines(5, ''));
    for (const line of tap.lines) expect(all.has(line)).toBe(true);
    // Each shard relays at most the client's rate: a burst of 5 and 5 a second.
    for (const thread of new Set(relayed.map((r) => r.thread))) {
      const lines = relayed.filter((r) => r.thread === thread).reduce((n, r) => n + r.lines.length, 0);
      expect(lines).toBeLessThanOrEqual(5 + Math.floor(5 * seconds));
    }
    expect(told.map((t) => t.message)).toContainEqual({
      kind: 'tap',
      component: 'logs.process.p',
      direction: 'in',
      clients: 1,
      ratePerSecond: 5,
    });
  });

  it('tells the shards to stop once the last client leaves, and they then relay and count nothing', { timeout: 60_000 }, async () => {
    const first = await openTap(`${run.runUrl}/api/v0/tap/logs.process.p?rate=1&direction=in`);
    const second = await openTap(`${run.runUrl}/api/v0/tap/logs.process.p?rate=2&direction=in`);
    const tapMessages = (clients: number) =>
      told.filter((t) => t.message.clients === clients).map((t) => ({ thread: t.thread, rate: t.message.ratePerSecond }));
    const threads = [...new Set(told.map((t) => t.thread))].sort((a, b) => a - b);
    expect(threads).toHaveLength(2);
    expect(tapMessages(2).sort((a, b) => a.thread - b.thread)).toEqual(threads.map((thread) => ({ thread, rate: 2 })));
    // While tapped, each shard relays a burst of the fastest rate's 2 lines (and 2 a second after).
    for (const streams of pushes(1)) expect((await push(run.apiUrls.get(API)!, streams)).status).toBe(204);
    const relayedBy = (thread: number) => relayed.filter((r) => r.thread === thread).reduce((n, r) => n + r.lines.length, 0);
    await eventually(() => threads.every((thread) => relayedBy(thread) >= 2), 'two lines from each shard', 10_000);
    // Past any flush a relay had waiting.
    await new Promise((r) => setTimeout(r, 200));
    relayed.length = 0;

    await second.close();
    await eventually(() => tapMessages(1).length === 4, 'the shards told of one client left', 10_000);
    expect(
      tapMessages(1)
        .slice(2)
        .sort((a, b) => a.thread - b.thread),
    ).toEqual(threads.map((thread) => ({ thread, rate: 1 })));
    await first.close();
    await eventually(() => tapMessages(0).length === 2, 'the shards told that no client is left', 10_000);
    expect(told.filter((t) => t.message.clients === 0).map((t) => t.message)).toEqual([
      { kind: 'tap', component: 'logs.process.p', direction: 'in', clients: 0, ratePerSecond: 0 },
      { kind: 'tap', component: 'logs.process.p', direction: 'in', clients: 0, ratePerSecond: 0 },
    ]);

    const droppedBefore = await droppedTotal(run);
    const echoedBefore = echoedLines(run).length;
    for (const streams of pushes(5)) expect((await push(run.apiUrls.get(API)!, streams)).status).toBe(204);
    await eventually(() => echoedLines(run).length === echoedBefore + 40, 'every entry echoed', 15_000);
    // Past any flush a relay had waiting.
    await new Promise((r) => setTimeout(r, 200));
    expect(relayed).toEqual([]);
    expect(await droppedTotal(run)).toBe(droppedBefore);
  });
});
