/** Debian's chromium for the browser suites, started the same way by each. */
import { type Browser, chromium, type Page } from 'playwright-core';
import { requireBinary } from './system-binaries.js';

/**
 * Flags for a headless chromium in a container: no sandbox (it runs as root there), no GPU, and none of the
 * background traffic (updates, sync, QUIC) that would reach out of the machine during a test.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Launches the installed chromium with {@link CHROMIUM_ARGS}; throws the missing reason when it is not installed. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: requireBinary('chromium'), args: CHROMIUM_ARGS });
}

/**
 * Opens the run server page at `url` at 1280×800 and waits until it says it is ready; `errors` collects the
 * page's uncaught errors and console errors from before it loads, for a test to expect none.
 */
export async function openRunPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 10_000 });
  return { page, errors };
}
