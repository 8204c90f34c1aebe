import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-validate-'));

async function runCli(argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(argv, { stdin: Readable.from([]), stdout, stderr });
  return { code, stdout: out, stderr: err };
}

describe('rivulet validate and fmt', () => {
  it('exits 0 for a valid config', async () => {
    const file = join(dir, 'ok.alloy');
    writeFileSync(
      file,
      'logs.process "p" {\n  stage.static_labels { values = { a = "1" } }\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n',
    );
    expect(await runCli(['validate', file])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('exits 2 with one positioned line per error', async () => {
    const file = join(dir, 'bad.alloy');
    writeFileSync(file, 'logs.process "p" {\n  stage.label_drop { values = [] }\n  forward_to = [logs.echo.nope.receiver]\n}\n');
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${file}:3:17: logs.process "p": component "logs.echo.nope.receiver" does not exist or is out of scope\n`);
  });

  it('prints the canonical form with fmt', async () => {
    const file = join(dir, 'fmt.alloy');
    writeFileSync(file, 'logs.echo "out" {\n}\n');
    const result = await runCli(['fmt', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^logs\.echo "out" \{\s*\}\n$/);
  });
});
