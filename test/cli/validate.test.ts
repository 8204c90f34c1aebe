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

  it('checks a file of bare stages as the stage list rivulet process reads, every error at its place', async () => {
    const file = join(dir, 'stages.alloy');
    writeFileSync(
      file,
      'stage.label { values = { a = "" } }\nstage.json {\n  expresions = { a = "" }\n}\nstage.regex {\n  expression = "(a"\n}\n',
    );
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(`${file}:1:1: unrecognized block name "stage.label" (did you mean "stage.labels"?)`);
    expect(result.stderr).toContain(`${file}:3:3: stage.json: unrecognized attribute name "expresions" (did you mean "expressions"?)`);
  });

  it('checks one logs.process block without forward_to as a stage list, building its stages', async () => {
    const file = join(dir, 'process.alloy');
    writeFileSync(file, 'logs.process "p" {\n  stage.regex {\n    expression = "(?P<a>x"\n  }\n}\n');
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${file}:3:5: logs.process "p" > stage.regex: could not compile regular expression: missing ): (?P<a>x\n`);
    writeFileSync(file, 'logs.process "p" {\n  stage.regex {\n    expression = "(?P<a>x)"\n  }\n}\n');
    expect(await runCli(['validate', file])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('validates the custom-stage example with its stages.import block', async () => {
    expect(await runCli(['validate', 'examples/custom-stages/pipeline.alloy'])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('suggests the component a reference probably meant', async () => {
    const file = join(dir, 'ref.alloy');
    writeFileSync(
      file,
      'logs.process "p" {\n  stage.static_labels { values = { a = "1" } }\n  forward_to = [loki.write.out.receiver]\n}\nlogs.write "out" {\n  endpoint { url = "http://127.0.0.1:1/loki/api/v1/push" }\n}\n',
    );
    const result = await runCli(['validate', file]);
    expect(result.stderr).toBe(
      `${file}:3:17: logs.process "p": component "loki.write.out.receiver" does not exist or is out of scope (did you mean "logs.write.out.receiver"?)\n`,
    );
  });

  it('suggests the flag a mistyped one probably meant', async () => {
    expect(await runCli(['process', '--config', 'x', '--ouput', 'line'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'rivulet process: unknown flag --ouput (did you mean --output?)\n',
    });
  });

  it('prints the canonical form with fmt', async () => {
    const file = join(dir, 'fmt.alloy');
    writeFileSync(file, 'logs.echo "out" {\n}\n');
    const result = await runCli(['fmt', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^logs\.echo "out" \{\s*\}\n$/);
  });
});
