import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Browser } from 'playwright-core';
import { Counter, Histogram, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openRunPage } from '../support/chromium.js';
import { systemClock } from '../../core/clock.js';
import { ComponentGraph } from '../../core/runtime/graph.js';
import { startRunServer } from '../../cli/run-server.js';
import { TapHub } from '../../core/inspect/tap.js';
import '../../index.js';

/**
 * The run server's page in Debian's chromium at 1280×800 against a graph five columns wide (wider
 * than its panel): the graph scrolls rather than being cut off, a histogram is one row, label
 * sets read without a double comma, and the tap follows the chosen direction.
 */
const ARTIFACTS = join('test-artifacts', 'run-ui');
const dir = mkdtempSync(join(tmpdir(), 'rivulet-run-ui-views-'));
const input = join(dir, 'app.log');
let browser: Browser;
let graph: ComponentGraph;
let server: Awaited<ReturnType<typeof startRunServer>>;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(input, '');
  const registry = new Registry();
  // Series of a component as a component could register them: a histogram, and a counter whose
  // component_id sits between two other labels.
  const latency = new Histogram({
    name: 'test_request_duration_seconds',
    help: 'Request durations.',
    labelNames: ['component_id', 'host'],
    buckets: [0.1, 0.5, 1],
    registers: [registry],
  });
  latency.observe({ component_id: 'logs.process.a', host: 'h1' }, 0.05);
  latency.observe({ component_id: 'logs.process.a', host: 'h1' }, 0.3);
  new Counter({ name: 'test_labelled_total', help: 'Labelled.', labelNames: ['a', 'component_id', 'b'], registers: [registry] }).inc(
    { a: '1', component_id: 'logs.process.a', b: '2' },
    4,
  );
  const taps = new TapHub(registry);
  const clock = systemClock();
  graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: new PassThrough(), log: () => {} }), taps.wrapExport);
  const stage = (name: string, next: string) => `logs.process "${name}" {
  stage.static_labels { values = { step = "${name}" } }
  forward_to = [${next}.receiver]
}
`;
  graph.load(
    `logs.source.file "in" {
  path = ${JSON.stringify(input)}
  file_watch {
    min_poll_frequency = "10ms"
    max_poll_frequency = "20ms"
  }
  forward_to = [logs.process.a.receiver]
}
${stage('a', 'logs.process.b')}${stage('b', 'logs.process.c')}${stage('c', 'logs.echo.out')}logs.echo "out" { path = ${JSON.stringify(join(dir, 'out.jsonl'))} }
`,
    'ui-views.alloy',
  );
  server = await startRunServer({ host: '127.0.0.1', port: 0, registry, graph, reload: async () => [], taps });
  await graph.start();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await graph?.stop();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const openPage = () => openRunPage(browser, server.url);

describe('the run server page at 1280×800', () => {
  it('scrolls a graph wider than its panel instead of cutting it off, and the page itself does not overflow', async () => {
    const { page, errors } = await openPage();
    expect(await page.locator('#nodes .node').count()).toBe(5);
    const fit = await page.evaluate(() => {
      const panel = document.getElementById('graph')!.parentElement!;
      panel.scrollLeft = panel.scrollWidth;
      const box = panel.getBoundingClientRect();
      const last = document.querySelector('#nodes .node[data-id="logs.echo.out"] rect')!.getBoundingClientRect();
      return {
        pageOverflows: document.documentElement.scrollWidth > 1280,
        panelScrolls: panel.scrollWidth > panel.clientWidth && getComputedStyle(panel).overflowX === 'auto',
        lastNodeShown: last.left >= box.left && last.right <= box.right,
        svgWidth: document.getElementById('graph')!.getAttribute('width'),
      };
    });
    expect(fit).toEqual({ pageOverflows: false, panelScrolls: true, lastNodeShown: true, svgWidth: '1150' });
    await page.screenshot({ path: join(ARTIFACTS, 'run-ui-wide-graph.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("lists a component's histogram as one row and its label sets without a double comma", async () => {
    const { page, errors } = await openPage();
    await page.locator('#nodes .node[data-id="logs.process.a"] rect').click();
    const rows = page.locator('#counters tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const table = await rows.evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-kind'), ...[...tr.children].map((td) => td.textContent)]),
    );
    expect(table.filter(([, series]) => series!.startsWith('test_'))).toEqual([
      ['histogram', 'test_request_duration_seconds{host="h1"}', 'count 2, sum 0.35'],
      ['counter', 'test_labelled_total{a="1",b="2"}', '4'],
    ]);
    expect(table.filter(([, series]) => /_bucket|,,|\{,|,\}|\{\}/.test(series!))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('taps what a logs.process forwards by default, and what it is sent once "in" is chosen', async () => {
    const { page, errors } = await openPage();
    await page.locator('#nodes .node[data-id="logs.process.b"] rect').click();
    await page.locator('#tap-toggle').click();
    await expect.poll(() => page.locator('#tap-status').textContent(), { timeout: 10_000 }).toBe('streaming (out)');
    appendFileSync(input, 'first\n');
    await expect.poll(() => page.locator('#tap').textContent(), { timeout: 10_000 }).toContain('"line":"first"');
    expect(await page.locator('#tap').textContent()).toContain('"step":"b"');

    await page.locator('#tap-direction').selectOption('in');
    await expect.poll(() => page.locator('#tap-status').textContent(), { timeout: 10_000 }).toBe('streaming (in)');
    expect(await page.locator('#tap').textContent()).toBe('');
    appendFileSync(input, 'second\n');
    await expect.poll(() => page.locator('#tap').textContent(), { timeout: 10_000 }).toContain('"line":"second"');
    expect(await page.locator('#tap').textContent()).toContain('"step":"a"');
    expect(await page.locator('#tap').textContent()).not.toContain('"step":"b"');
    await page.locator('#tap-toggle').click();
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
