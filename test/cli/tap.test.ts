import { EventEmitter } from 'node:events';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { tapCommand } from '../../cli/tap.js';
import { capture, eventually, startRunCli } from '../support/running-instance.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-tap-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rivulet tap', () => {
  it('prints the entries sent to a component of a running instance, and exits 2 for an unknown one', async () => {
    const run = await startRunCli(dir, { stages: ['stage.static_labels { values = { env = "prod" } }'] });
    const { addr, input } = run;
    try {
      const out = capture();
      const tapSignals = new EventEmitter();
      const tapped = tapCommand(
        ['logs.echo.out', '--server.http.listen-addr', addr],
        { stdin: Readable.from([]), stdout: out.stream, stderr: new PassThrough() },
        tapSignals,
      );
      await new Promise((r) => setTimeout(r, 200));
      appendFileSync(input, 'hello\nworld\n');
      await eventually(() => out.text().split('\n').length > 2, 'tapped entries', 15_000);
      const entries = out
        .text()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(entries.map((e) => [e.line, e.labels])).toEqual([
        ['hello', { env: 'prod', filename: input }],
        ['world', { env: 'prod', filename: input }],
      ]);
      tapSignals.emit('SIGINT');
      expect(await tapped).toBe(0);

      const err = capture();
      expect(
        await tapCommand(['logs.echo.nope', '--server.http.listen-addr', addr], {
          stdin: Readable.from([]),
          stdout: new PassThrough(),
          stderr: err.stream,
        }),
      ).toBe(2);
      expect(err.text()).toBe('rivulet tap: unknown component "logs.echo.nope"\n');
    } finally {
      run.terminate();
    }
    expect(await run.exited).toBe(0);
  }, 40_000);

  it('prints why an instance refuses a tap beyond its most clients, and exits 2', async () => {
    const refusing = createHttpServer((_req, res) => {
      res
        .writeHead(429, { 'Content-Type': 'text/plain' })
        .end('too many tap clients: at most 100 at a time; try again once one has closed\n');
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (refusing.address() as { port: number }).port;
      const err = capture();
      const code = await tapCommand(['logs.echo.out', '--server.http.listen-addr', `127.0.0.1:${port}`], {
        stdin: Readable.from([]),
        stdout: new PassThrough(),
        stderr: err.stream,
      });
      expect(code).toBe(2);
      expect(err.text()).toBe('rivulet tap: too many tap clients: at most 100 at a time; try again once one has closed\n');
    } finally {
      refusing.closeAllConnections();
      await new Promise((resolve) => refusing.close(resolve));
    }
  });

  it('exits 3 when nothing answers', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const err = capture();
    expect(
      await tapCommand(['logs.echo.out', '--server.http.listen-addr', `127.0.0.1:${port}`], {
        stdin: Readable.from([]),
        stdout: new PassThrough(),
        stderr: err.stream,
      }),
    ).toBe(3);
    expect(err.text()).toContain('cannot reach 127.0.0.1');
  });
});
