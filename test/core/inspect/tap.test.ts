import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_TAP_CLIENTS, TapHub, type TapHubOptions } from '../../../core/inspect/tap.js';
import { eventually, startFileInstance } from '../../support/running-instance.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-tap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A running file → echo graph behind a run server, as `rivulet run` builds it. */
async function startInstance(name: string, hubOptions: TapHubOptions = {}) {
  const run = await startFileInstance(dir, name, { sourceLabels: 'labels = { job = "tap", password = "s3cretPass" }' }, hubOptions);
  stops.push(run.stop);
  return run;
}

/** Reads a tap as lines until `count` arrived. */
async function readTap(url: string, count: number, trigger: () => void): Promise<{ lines: string[]; direction: string | null }> {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/x-ndjson');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  trigger();
  const deadline = Date.now() + 10_000;
  while (text.split('\n').length - 1 < count && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  return { lines: text.split('\n').filter(Boolean), direction: res.headers.get('x-tap-direction') };
}

describe('GET /api/v0/tap/<id>', () => {
  it("streams exactly the entries sent to a sink's receiver", async () => {
    const run = await startInstance('exact');
    const tapped = await readTap(`${run.url}/api/v0/tap/logs.echo.out`, 3, () => appendFileSync(run.input, 'a\nb\nc\n'));
    expect(tapped.direction).toBe('in');
    await eventually(() => run.outputLines().length === 3);
    expect(tapped.lines).toEqual(run.outputLines());
    expect(tapped.lines.map((l) => JSON.parse(l).line)).toEqual(['a', 'b', 'c']);
  });

  it('streams what a source sends on', async () => {
    const run = await startInstance('source');
    const tapped = await readTap(`${run.url}/api/v0/tap/logs.source.file.in`, 2, () => appendFileSync(run.input, 'x\ny\n'));
    expect(tapped.direction).toBe('out');
    expect(tapped.lines.map((l) => JSON.parse(l).line)).toEqual(['x', 'y']);
  });

  it('answers 404 for an unknown component and 400 for a bad rate', async () => {
    const run = await startInstance('unknown');
    const res = await fetch(`${run.url}/api/v0/tap/logs.echo.nope`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('unknown component "logs.echo.nope"\n');
    expect((await fetch(`${run.url}/api/v0/tap/logs.echo.out?rate=0`)).status).toBe(400);
  });

  it('never slows the pipeline: a tap client that never reads loses tap entries, counted, and every entry is written', async () => {
    const run = await startInstance('slow');
    // A client that sends its request and then never reads a byte.
    const socket = connect(Number(new URL(run.url).port), '127.0.0.1');
    socket.pause();
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('GET /api/v0/tap/logs.echo.out?rate=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    stops.push(async () => void socket.destroy());
    await new Promise((r) => setTimeout(r, 100));
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i} ${'x'.repeat(200)}`);
    const started = Date.now();
    appendFileSync(run.input, lines.join('\n') + '\n');
    await eventually(() => run.outputLines().length === 10_000, 'all 10000 entries written', 15_000);
    const took = Date.now() - started;
    expect(took).toBeLessThan(10_000);
    const metrics = await run.registry.metrics();
    const dropped = [...metrics.matchAll(/rivulet_tap_dropped_entries_total\{component_id="logs.echo.out",reason="(\w+)"\} (\d+)/g)];
    const total = dropped.reduce((n, m) => n + Number(m[2]), 0);
    // At most 1000 entries a second (after a first burst of 1000) reach the tap; the rest are counted as dropped.
    expect(total).toBeGreaterThanOrEqual(10_000 - 1000 * (Math.ceil(took / 1000) + 2));
    expect(total).toBeLessThan(10_000);
  });

  it('answers 429 beyond the most tap clients at a time, and serves a new client once one has closed', async () => {
    const run = await startInstance('cap', { maxClients: 2 });
    const url = `${run.url}/api/v0/tap/logs.echo.out`;
    const first = new AbortController();
    const second = new AbortController();
    expect((await fetch(url, { signal: first.signal })).status).toBe(200);
    expect((await fetch(`${run.url}/api/v0/tap/logs.source.file.in`, { signal: second.signal })).status).toBe(200);
    const refused = await fetch(url);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toBe('too many tap clients: at most 2 at a time; try again once one has closed\n');
    first.abort();
    const third = new AbortController();
    let status = 0;
    await eventually(async () => {
      const res = await fetch(url, { signal: third.signal });
      status = res.status;
      if (status === 429) await res.text();
      return status === 200;
    }, 'a tap after one closed');
    expect(status).toBe(200);
    second.abort();
    third.abort();
  });

  it('shows arguments with secrets hidden and the references in /api/v0/components', async () => {
    const run = await startInstance('components');
    const list = (await (await fetch(`${run.url}/api/v0/components`)).json()) as Array<Record<string, unknown>>;
    const source = list.find((c) => c.id === 'logs.source.file.in')!;
    expect(source.referencesTo).toEqual(['logs.echo.out']);
    expect(list.find((c) => c.id === 'logs.echo.out')!.referencedBy).toEqual(['logs.source.file.in']);
    const args = source.arguments as Record<string, unknown>;
    expect(args.labels).toEqual({ job: 'tap', password: 'xxxxx' });
    expect(args.forward_to).toEqual(['<receiver>']);
    expect(JSON.stringify(list)).not.toContain('s3cretPass');
  });
});

describe('TapHub', () => {
  const entry = { labels: {}, line: 'l', timestamp: 0n, structuredMetadata: [], extracted: {} };

  it('drops entries for a subscriber whose buffer is full and counts them as slow_client', async () => {
    const registry = new Registry();
    const hub = new TapHub(registry);
    const sub = hub.subscribe('c', 'in', { ratePerSecond: 1000, bufferEntries: 2 })!;
    hub.offer('c', 'in', [entry, entry, entry, entry]);
    const line = '{"labels":{},"line":"l","timestamp":"1970-01-01T00:00:00.000000000Z","structured_metadata":{}}\n';
    expect(sub.take()).toEqual([line, line]);
    expect(await registry.metrics()).toContain('rivulet_tap_dropped_entries_total{component_id="c",reason="slow_client"} 2');
    sub.close();
  });

  it(`admits at most ${DEFAULT_MAX_TAP_CLIENTS} subscribers at a time by default, and another once one leaves`, () => {
    const hub = new TapHub(new Registry());
    const subs = Array.from({ length: DEFAULT_MAX_TAP_CLIENTS }, (_, i) => hub.subscribe(`c${i % 3}`, 'in'));
    expect(subs.every((s) => s !== undefined)).toBe(true);
    expect(hub.subscribe('c0', 'out')).toBeUndefined();
    subs[0]!.close();
    expect(hub.subscribe('c0', 'out')).toBeDefined();
    expect(hub.subscribe('c0', 'out')).toBeUndefined();
  });
});
