import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import type { LogsReceiver } from '../../../core/receiver.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import { startRunServer } from '../../../cli/run-server.js';
import { TapHub } from '../../../core/inspect/tap.js';
import '../../../index.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

const CONFIG = `declare "sink" {
  logs.echo "out" { }
  export "receiver" {
    value = logs.echo.out.receiver
  }
}
sink "s" { }
logs.process "p" {
  forward_to = [sink.s.receiver]
}
`;

const entry = (line: string): Entry => ({ labels: {}, line, timestamp: 1_000_000_000n, structuredMetadata: [], extracted: {} });

describe('the run server and components inside a custom component instance', () => {
  it('lists them by their full id and taps them with the id URL-encoded', async () => {
    const registry = new Registry();
    const taps = new TapHub(registry);
    const clock = systemClock();
    const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: new PassThrough(), log: () => {} }), taps.wrapExport);
    graph.load(CONFIG, 'tap-modules.alloy');
    const server = await startRunServer({ host: '127.0.0.1', port: 0, registry, graph, reload: async () => [], taps });
    await graph.start();
    stops.push(async () => {
      await graph.stop();
      await server.close();
    });

    const listed = (await (await fetch(`${server.url}/api/v0/components`)).json()) as Array<{ id: string }>;
    expect(listed.map((c) => c.id)).toEqual(['sink.s/logs.echo.out', 'logs.process.p']);

    const controller = new AbortController();
    const res = await fetch(`${server.url}/api/v0/tap/${encodeURIComponent('sink.s/logs.echo.out')}`, { signal: controller.signal });
    expect(res.status).toBe(200);
    const receiver = (graph.component('logs.process.p')!.exports.receiver as { value: LogsReceiver }).value;
    const reader = res.body!.getReader();
    await receiver.send([entry('tapped')]);
    const { value } = await reader.read();
    controller.abort();
    expect(JSON.parse(new TextDecoder().decode(value).split('\n')[0]!).line).toBe('tapped');
  });
});
