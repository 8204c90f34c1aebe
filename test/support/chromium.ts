/** Debian's chromium for the browser suites, started the same way by each. */
import { type Browser, chromium } from 'playwright-core';
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
