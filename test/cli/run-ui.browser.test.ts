import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openRunPage } from '../support/chromium.js';
import { needs } from '../support/system-binaries.js';
import { type FileInstance, startFileInstance } from '../support/running-instance.js';

/** The run server's page in Debian's chromium, against a running file → echo graph. */
const ARTIFACTS = join('test-artifacts', 'run-ui');
const chromiumProgram = needs('chromium');
const dir = mkdtempSync(join(tmpdir(), 'rivulet-run-ui-'));
const input = join(dir, 'app.log');
let browser: Browser;
let run: FileInstance;

beforeAll(async () => {
  if (chromiumProgram.skip) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  run = await startFileInstance(dir, 'app');
  appendFileSync(run.input, 'first\n');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await run?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(chromiumProgram.skip)(chromiumProgram.title('the run server page'), () => {
  it('shows the graph, live counters and tapped entries', async () => {
    const { page, errors } = await openRunPage(browser, run.url);
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
