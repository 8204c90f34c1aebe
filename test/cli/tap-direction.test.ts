import { EventEmitter } from 'node:events';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../cli/run.js';
import { tapCommand } from '../../cli/tap.js';
import '../../index.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-tap-direction-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c) => (text += c));
  return { stream, text: () => text };
}

async function until(check: () => boolean, what: string): Promise<void> {
  // Generous: starting an instance under a loaded machine takes seconds.
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('rivulet tap --direction', () => {
  it('prints what a logs.process forwards (the default, after its stages) or what it is sent (--direction in)', async () => {
    const input = join(dir, 'in.log');
    writeFileSync(input, '');
    const file = join(dir, 'run.alloy');
    writeFileSync(
      file,
      `logs.source.file "in" {
  path = ${JSON.stringify(input)}
  file_watch {
    min_poll_frequency = "10ms"
    max_poll_frequency = "20ms"
  }
  forward_to = [logs.process.p.receiver]
}
logs.process "p" {
  stage.drop { expression = "^debug" }
  stage.static_labels { values = { env = "prod" } }
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { path = ${JSON.stringify(join(dir, 'out.jsonl'))} }
`,
    );
    const runErr = capture();
    const runSignals = new EventEmitter();
    const done = runCommand(
      [file, '--server.http.listen-addr', '127.0.0.1:0'],
      { stdin: Readable.from([]), stdout: new PassThrough(), stderr: runErr.stream },
      runSignals,
    );
    try {
      await until(() => /addr="([^"]+)"/.test(runErr.text()) && runErr.text().includes('running'), 'the run server');
      const addr = new URL(/addr="([^"]+)"/.exec(runErr.text())![1]!).host;
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
      await until(() => out.out.text().split('\n').length > 1 && into.out.text().split('\n').length > 2, 'tapped entries');
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
      runSignals.emit('SIGTERM');
    }
    expect(await done).toBe(0);
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
