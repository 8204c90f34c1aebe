import { EventEmitter } from 'node:events';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { tapCommand } from '../../cli/tap.js';
import { capture, eventually, startRunCli } from '../support/running-instance.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-tap-direction-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rivulet tap --direction', () => {
  it('prints what a logs.process forwards (the default, after its stages) or what it is sent (--direction in)', async () => {
    const run = await startRunCli(dir, {
      stages: ['stage.drop { expression = "^debug" }', 'stage.static_labels { values = { env = "prod" } }'],
    });
    const { addr, input } = run;
    try {
      const tap = (extra: string[]) => {
        const out = capture();
        const signals = new EventEmitter();
        const exited = tapCommand(
          ['logs.process.p', '--server.http.listen-addr', addr, ...extra],
          { stdin: Readable.from([]), stdout: out.stream, stderr: new PassThrough() },
          signals,
        );
        return { out, stop: () => signals.emit('SIGINT'), exited };
      };
      const out = tap([]);
      const into = tap(['--direction', 'in']);
      await new Promise((r) => setTimeout(r, 200));
      appendFileSync(input, 'debug noise\nhello\n');
      await eventually(() => out.out.text().split('\n').length > 1 && into.out.text().split('\n').length > 2, 'tapped entries', 15_000);
      const entries = (text: string) =>
        text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
          .map((e) => [e.line, e.labels]);
      expect(entries(out.out.text())).toEqual([['hello', { env: 'prod', filename: input }]]);
      expect(entries(into.out.text())).toEqual([
        ['debug noise', { filename: input }],
        ['hello', { filename: input }],
      ]);
      out.stop();
      into.stop();
      expect([await out.exited, await into.exited]).toEqual([0, 0]);

      const err = capture();
      expect(
        await tapCommand(['logs.echo.out', '--direction', 'out', '--server.http.listen-addr', addr], {
          stdin: Readable.from([]),
          stdout: new PassThrough(),
          stderr: err.stream,
        }),
      ).toBe(2);
      expect(err.text()).toBe('rivulet tap: component "logs.echo.out" forwards nothing: tap what it receives (in)\n');
    } finally {
      run.terminate();
    }
    expect(await run.exited).toBe(0);
  }, 40_000);

  it('refuses a direction other than in or out', async () => {
    await expect(
      tapCommand(['logs.process.p', '--direction', 'both'], {
        stdin: Readable.from([]),
        stdout: new PassThrough(),
        stderr: new PassThrough(),
      }),
    ).rejects.toThrow('invalid --direction "both", expected in or out');
  });
});
