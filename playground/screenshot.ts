/**
 * Takes the README's screenshot of the playground (`docs/playground.png`) with the system's
 * chromium: `npx tsx playground/screenshot.ts [OUT.png]`. The Kubernetes sample is shown with
 * the entry that took the match branch selected.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { chromium } from 'playwright-core';
import { startPlaygroundServer } from './server.js';

const out = process.argv[2] ?? 'docs/playground.png';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

const server = await startPlaygroundServer({ port: 0 });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1180 }, deviceScaleFactor: 1 });
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#output tbody tr[data-output="1"]');
  await page.locator('#output tbody tr[data-output="1"]').blur();
  mkdirSync(dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  console.log(`saved ${out}`);
} finally {
  await browser.close();
  await server.close();
}
