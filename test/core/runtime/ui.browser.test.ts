import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { chromium, type Browser } from 'playwright-core';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs, requireBinary } from '../../support/system-binaries.js';
import { systemClock } from '../../../core/clock.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import { startRunServer } from '../../../core/runtime/server.js';
import { TapHub } from '../../../core/runtime/tap.js';
import '../../../index.js';

/** The run server's page in Debian's chromium, against a running file → echo graph. */
const ARTIFACTS = join('test-artifacts', 'run-ui');
const chromiumProgram = needs('chromium');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

const dir = mkdtempSync(join(tmpdir(), 'rivulet-run-ui-'));
const input = join(dir, 'app.log');
let browser: Browser;
let graph: ComponentGraph;
let server: Awaited<ReturnType<typeof startRunServer>>;

beforeAll(async () => {
  if (chromiumProgram.skip) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(input, 'first\n');
  const registry = new Registry();
  const taps = new TapHub(registry);
  const clock = systemClock();
  graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: new PassThrough(), log: () => {} }), taps.wrapExport);
  graph.load(
    `logs.source.file "in" {
  path = ${JSON.stringify(input)}
  file_watch {
    min_poll_frequency = "10ms"
    max_poll_frequency = "20ms"
  }
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { path = ${JSON.stringify(join(dir, 'out.jsonl'))} }
`,
    'ui.alloy',
  );
  server = await startRunServer({ host: '127.0.0.1', port: 0, registry, graph, reload: async () => [], taps });
  await graph.start();
  browser = await chromium.launch({ executablePath: requireBinary('chromium'), args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await graph?.stop();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(chromiumProgram.skip)(chromiumProgram.title('the run server page'), () => {
  it('shows the graph, live counters and tapped entries', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 10_000 });
    expect(await page.locator('#nodes .node').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-id')))).toEqual([
      'logs.echo.out',
      'logs.source.file.in',
    ]);
    expect(
      await page.locator('#edges path').evaluateAll((p) => p.map((e) => `${e.getAttribute('data-from')}>${e.getAttribute('data-to')}`)),
    ).toEqual(['logs.source.file.in>logs.echo.out']);
    expect(await page.locator('#summary').textContent()).toBe('2 components, all healthy');

    await page.locator('#nodes .node[data-id="logs.source.file.in"] rect').click();
    const counter = page.locator(`#counters tr[data-series='logs_source_file_read_lines_total{path="${input}"}'] td.value`);
    await expect.poll(() => counter.textContent(), { timeout: 10_000 }).toBe('1');
    expect(await page.locator('#arguments').textContent()).toContain('"forward_to": [\n    "<receiver>"\n  ]');
    appendFileSync(input, 'second\nthird\n');
    await expect.poll(() => counter.textContent(), { timeout: 10_000 }).toBe('3');

    await page.locator('#nodes .node[data-id="logs.echo.out"] rect').click();
    await page.locator('#tap-toggle').click();
    await expect.poll(() => page.locator('#tap-status').textContent(), { timeout: 10_000 }).toBe('streaming (in)');
    appendFileSync(input, 'tapped line\n');
    await expect.poll(() => page.locator('#tap').textContent(), { timeout: 10_000 }).toContain('"line":"tapped line"');
    await page.screenshot({ path: join(ARTIFACTS, 'run-ui.png'), fullPage: true });
    await page.locator('#tap-toggle').click();
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
