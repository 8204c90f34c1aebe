import { PassThrough } from 'node:stream';
import type { Browser, Page } from 'playwright-core';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openRunPage } from '../support/chromium.js';
import { needs } from '../support/system-binaries.js';
import { systemClock } from '../../core/clock.js';
import type { LogsReceiver } from '../../core/receiver.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { startRunServer } from '../../cli/run-server.js';
import '../../index.js';
import { appEntry, defineDiscardSink, meteredProcess } from '../support/metered-process.js';

/**
 * The run server page's Counters for logs.process components, in Debian's chromium: each lists
 * the series its pipeline registered (read from /metrics by component_id and component_path),
 * those two labels left out, two components' same-named series apart, one inside a module too.
 */
const chromiumProgram = needs('chromium');
defineDiscardSink();

const CONFIG = `${meteredProcess('a', '[test.discard.out.receiver]')}${meteredProcess('b', '[test.discard.out.receiver]')}
declare "pipeline" {
  argument "forward_to" { }
  ${meteredProcess('main', 'argument.forward_to.value')}
}
pipeline "default" {
  forward_to = [test.discard.out.receiver]
}
test.discard "out" { }
`;

let browser: Browser;
let graph: ComponentGraph;
let server: Awaited<ReturnType<typeof startRunServer>>;

beforeAll(async () => {
  if (chromiumProgram.skip) return;
  const registry = new Registry();
  graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: new PassThrough(), log: () => {} }));
  graph.load(CONFIG, 'counters.alloy');
  server = await startRunServer({ host: '127.0.0.1', port: 0, registry, graph, reload: async () => [] });
  await graph.start();
  const send = (id: string, lines: string[]) =>
    (graph.component(id)!.exports.receiver as { value: LogsReceiver }).value.send(lines.map(appEntry));
  await send('logs.process.a', ['noise 1', 'noise 2', 'kept']);
  await send('logs.process.b', ['noise 3']);
  await send('pipeline.default/logs.process.main', ['kept', 'kept', 'noise 4', 'kept']);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await graph?.stop();
  await server?.close();
});

/** The Counters rows shown once `id` is chosen, series and value, polled until they are `expected`. */
async function expectCounters(page: Page, id: string, expected: string[]): Promise<void> {
  await page.locator(`#nodes .node[data-id="${id}"] rect`).click();
  await expect.poll(() => page.locator('#selected').textContent(), { timeout: 10_000 }).toBe(`${id} (logs.process)`);
  const rows = () =>
    page
      .locator('#counters tr')
      .evaluateAll((trs) => trs.map((r) => `${r.getAttribute('data-series')} ${r.querySelector('td.value')!.textContent}`));
  await expect.poll(rows, { timeout: 10_000 }).toEqual(expected);
}

describe.skipIf(chromiumProgram.skip)(chromiumProgram.title('the run server page, Counters of a logs.process'), () => {
  it("lists each component's own series", async () => {
    const { page, errors } = await openRunPage(browser, server.url);
    // Every logs.process registers the shared drop counters first, its stage.metrics series after.
    await expectCounters(page, 'logs.process.a', [
      'logs_process_dropped_lines_total{reason="noise"} 2',
      'logs_process_custom_lines{app="a"} 3',
    ]);
    await expectCounters(page, 'logs.process.b', [
      'logs_process_dropped_lines_total{reason="noise"} 1',
      'logs_process_custom_lines{app="a"} 1',
    ]);
    await expectCounters(page, 'pipeline.default/logs.process.main', [
      'logs_process_dropped_lines_total{reason="noise"} 1',
      'logs_process_custom_lines{app="a"} 4',
    ]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
