import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defaultTapDirection } from '../../../cli/run-server.js';
import { eventually, startFileInstance } from '../../support/running-instance.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-tap-direction-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A running file → logs.process → echo graph behind a run server, as `rivulet run` builds it. */
async function startInstance(name: string) {
  const run = await startFileInstance(dir, name, {
    stages: ['stage.drop { expression = "^drop" }', 'stage.static_labels { values = { env = "prod" } }'],
  });
  stops.push(run.stop);
  return run;
}

/** An open tap: its direction header, and the entries (line and labels) it streamed so far. */
async function openTap(url: string) {
  const controller = new AbortController();
  stops.push(async () => controller.abort());
  const res = await fetch(url, { signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // aborted at the end of the test
    }
  })();
  return {
    direction: res.headers.get('x-tap-direction'),
    entries: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const e = JSON.parse(l) as { line: string; labels: Record<string, string> };
          return [e.line, e.labels.env ?? null];
        }),
  };
}

describe('tap directions', () => {
  it('shows what a logs.process forwards by default (after its stages), and what it is sent with direction=in', async () => {
    const run = await startInstance('process');
    const out = await openTap(`${run.url}/api/v0/tap/logs.process.p`);
    const into = await openTap(`${run.url}/api/v0/tap/logs.process.p?direction=in`);
    const sink = await openTap(`${run.url}/api/v0/tap/logs.echo.out`);
    expect([out.direction, into.direction, sink.direction]).toEqual(['out', 'in', 'in']);
    appendFileSync(run.input, 'keep 1\ndrop me\nkeep 2\n');
    await eventually(() => out.entries().length === 2 && into.entries().length === 3 && sink.entries().length === 2, 'tapped entries');
    expect(into.entries()).toEqual([
      ['keep 1', null],
      ['drop me', null],
      ['keep 2', null],
    ]);
    expect(out.entries()).toEqual([
      ['keep 1', 'prod'],
      ['keep 2', 'prod'],
    ]);
    expect(sink.entries()).toEqual(out.entries());

    // Every logs component's entries in and out, counted where the graph joins them.
    await eventually(() => run.outputLines().length === 2, 'the written entries');
    const flow = (await run.registry.metrics())
      .split('\n')
      .filter((l) => l.startsWith('rivulet_component_'))
      .sort();
    expect(flow).toEqual([
      'rivulet_component_received_entries_total{component_id="logs.echo.out"} 2',
      'rivulet_component_received_entries_total{component_id="logs.process.p"} 3',
      'rivulet_component_sent_entries_total{component_id="logs.process.p"} 2',
      'rivulet_component_sent_entries_total{component_id="logs.source.file.in"} 3',
    ]);
  });

  it('answers 400 for a direction a component does not have, or an unknown one', async () => {
    const run = await startInstance('refused');
    const answer = async (path: string) => {
      const res = await fetch(`${run.url}/api/v0/tap/${path}`);
      return [res.status, await res.text()];
    };
    expect(await answer('logs.source.file.in?direction=in')).toEqual([
      400,
      'component "logs.source.file.in" has no receiver: tap what it sends on (out)\n',
    ]);
    expect(await answer('logs.echo.out?direction=out')).toEqual([
      400,
      'component "logs.echo.out" forwards nothing: tap what it receives (in)\n',
    ]);
    expect(await answer('logs.process.p?direction=sideways')).toEqual([400, 'direction must be in or out\n']);
  });

  it('defaults to out for a component that forwards or has no receiver, in for a sink', () => {
    expect(defaultTapDirection(true, true)).toBe('out');
    expect(defaultTapDirection(false, true)).toBe('out');
    expect(defaultTapDirection(false, false)).toBe('out');
    expect(defaultTapDirection(true, false)).toBe('in');
  });
});
