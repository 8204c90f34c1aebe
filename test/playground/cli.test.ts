import { EventEmitter } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { playgroundCommand } from '../../cli/playground.js';
import type { Assets } from '../../playground/assets.js';
import { startPlaygroundServer, type PlaygroundServerOptions } from '../../playground/server.js';

// The bundle itself is built and driven by the browser tests; here a stand-in page is enough.
const assets: Assets = new Map([
  ['/index.html', { body: '<!doctype html><title>Rivulet playground</title>', type: 'text/html; charset=utf-8' }],
]);
const startWithStandIn = (options: PlaygroundServerOptions) => startPlaygroundServer({ ...options, assets });

function io() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out = { stdout: '', stderr: '' };
  stdout.on('data', (c) => (out.stdout += c));
  stderr.on('data', (c) => (out.stderr += c));
  return { io: { stdin: Readable.from([]), stdout, stderr }, out };
}

describe('rivulet playground', () => {
  it('serves the playground on 127.0.0.1, prints its URL and stops on SIGINT', async () => {
    const { io: streams, out } = io();
    const signals = new EventEmitter();
    const exit = playgroundCommand(['--port', '0'], streams, signals, startWithStandIn);
    for (let i = 0; i < 600 && !out.stdout.includes('\n'); i++) await new Promise((r) => setTimeout(r, 50));
    const match = /^playground listening on (http:\/\/127\.0\.0\.1:\d+)\n$/.exec(out.stdout);
    expect(match).not.toBeNull();
    const page = await fetch(match![1]!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Rivulet playground</title>');
    signals.emit('SIGINT');
    expect(await exit).toBe(0);
  });

  it('gives runs host access only with --allow-host-access', async () => {
    const asked: (boolean | undefined)[] = [];
    for (const argv of [
      ['--port', '0'],
      ['--port', '0', '--allow-host-access'],
    ]) {
      const { io: streams, out } = io();
      const signals = new EventEmitter();
      const exit = playgroundCommand(argv, streams, signals, (options) => {
        asked.push(options.allowHostAccess);
        return startWithStandIn(options);
      });
      for (let i = 0; i < 600 && !out.stdout.includes('\n'); i++) await new Promise((r) => setTimeout(r, 50));
      signals.emit('SIGINT');
      expect(await exit).toBe(0);
    }
    expect(asked).toEqual([false, true]);
  });

  it('says so when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const { io: streams, out } = io();
      expect(await playgroundCommand(['--port', String(port)], streams, new EventEmitter(), startWithStandIn)).toBe(1);
      expect(out).toEqual({
        stdout: '',
        stderr: `rivulet playground: port ${port} is in use; choose another with --port N (0 picks a free one)\n`,
      });
    } finally {
      blocker.close();
    }
  });

  it('rejects a port that is not a number', async () => {
    const { io: streams, out } = io();
    expect(await main(['playground', '--port', 'eighty'], streams)).toBe(1);
    expect(out.stderr).toBe('rivulet playground: --port must be a number from 0 to 65535, got "eighty"\n');
  });

  it('is listed in the usage text', async () => {
    const { io: streams, out } = io();
    expect(await main(['help'], streams)).toBe(0);
    expect(out.stdout).toContain('  playground                  serve the pipeline playground on 127.0.0.1 (default port 8580)\n');
    const help = { io: io() };
    expect(await main(['playground', '--help'], help.io.io)).toBe(0);
    expect(help.io.out.stdout).toContain('--allow-host-access');
  });
});
