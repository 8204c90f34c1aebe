import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-validate-precision-'));

function config(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Runs validate with a stdout that says it is a terminal. */
async function validateOnTerminal(argv: string[]) {
  const stdout = Object.assign(new PassThrough(), { isTTY: true });
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(['validate', ...argv], { stdin: Readable.from([]), stdout, stderr });
  return { code, stdout: out, stderr: err };
}

const PIPELINE = [
  'logs.process "x" {',
  '  forward_to = [logs.echo.out.receiver]',
  '}',
  '',
  'logs.source.api "in" {',
  '  http {',
  '    listen_port = 0',
  '  }',
  '  forward_to = [logs.process.x.reciever]',
  '}',
  '',
  'logs.echo "out" { }',
  '',
].join('\n');

describe('validate reports causes, not knock-on errors', () => {
  it('reports one wrong attribute in a required nested block, not also the block as missing', async () => {
    const file = config(
      'write.alloy',
      'logs.write "out" {\n  endpoint {\n    url        = "http://127.0.0.1:1/loki/api/v1/push"\n    batch_wait = 5\n  }\n}\n',
    );
    expect(await runCli(['validate', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${file}:4:18: logs.write "out" > endpoint: attribute "batch_wait": expected duration, got number\n`,
    });
    const unknown = config(
      'write-unknown.alloy',
      'logs.write "out" {\n  endpoint {\n    url = "http://127.0.0.1:1"\n    bogus = 1\n  }\n}\n',
    );
    expect(await runCli(['validate', unknown])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${unknown}:4:5: logs.write "out" > endpoint: unrecognized attribute name "bogus"\n`,
    });
  });

  it('still reports a required nested block that is not written', async () => {
    const file = config('write-none.alloy', 'logs.write "out" { }\n');
    expect(await runCli(['validate', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${file}:1:1: logs.write "out": missing required block "endpoint"\n`,
    });
  });

  it('reports a misspelt export at the reference, with the component and the export it probably meant', async () => {
    const file = config('export.alloy', PIPELINE);
    expect(await runCli(['validate', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${file}:9:17: logs.source.api "in": component "logs.process.x" has no export "reciever" (did you mean "receiver"?)\n`,
    });
  });

  it('lists a misspelt export with the other errors of the file, in source order', async () => {
    const file = config(
      'export-and-more.alloy',
      PIPELINE.replace('forward_to = [logs.echo.out.receiver]', 'forward_to = [logs.echo.out.receiver]\n  stage.lables { }').replace(
        'logs.echo "out" { }',
        'logs.echo "out" {\n  format = "yaml"\n}',
      ),
    );
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')).toEqual([
      `${file}:3:3: logs.process "x": unrecognized block name "stage.lables" (did you mean "stage.labels"?)`,
      `${file}:10:17: logs.source.api "in": component "logs.process.x" has no export "reciever" (did you mean "receiver"?)`,
      expect.stringMatching(new RegExp(`^${file.replaceAll('.', '\\.')}:14:3: logs\\.echo "out": `)),
      '',
    ]);
  });

  it('names the exports when none is close, or says the component has none', async () => {
    const far = config('export-far.alloy', 'logs.process "x" {\n  forward_to = [logs.echo.out.output]\n}\nlogs.echo "out" { }\n');
    expect(await runCli(['validate', far])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${far}:2:17: logs.process "x": component "logs.echo.out" has no export "output"; it exports "receiver"\n`,
    });
    const none = config(
      'export-none.alloy',
      'logs.source.api "in" {\n  http {\n    listen_port = 0\n  }\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" {\n  path = logs.source.api.in.path\n}\n',
    );
    expect(await runCli(['validate', none])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${none}:8:10: logs.echo "out": component "logs.source.api.in" has no export "path"; it exports nothing\n`,
    });
  });

  it('reports the missing component an attribute refers to, not what validation says of its stand-in value', async () => {
    const file = config('stand-in.alloy', 'logs.write "out" {\n  endpoint {\n    url = nope.x\n  }\n}\n');
    expect(await runCli(['validate', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${file}:3:11: logs.write "out": component "nope.x" does not exist or is out of scope\n`,
    });
  });

  it('reports an expression that fails to evaluate in a required nested block once, at its cause', async () => {
    const file = config('evaluate.alloy', 'logs.write "out" {\n  endpoint {\n    url = string.join(1, ",")\n  }\n}\n');
    expect(await runCli(['validate', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${file}:3:23: string.join: argument 1 must be an array, got number\n`,
    });
  });
});

describe('validate on a terminal', () => {
  it('says ok and how many components or stages it checked, unless --quiet', async () => {
    const graph = config('ok.alloy', 'logs.process "p" {\n  forward_to = [logs.echo.out.receiver]\n}\nlogs.echo "out" { }\n');
    expect(await validateOnTerminal([graph])).toEqual({ code: 0, stdout: 'ok: 2 components\n', stderr: '' });
    expect(await validateOnTerminal([graph, '--quiet'])).toEqual({ code: 0, stdout: '', stderr: '' });
    const one = config('one.alloy', 'logs.echo "out" { }\n');
    expect(await validateOnTerminal([one])).toEqual({ code: 0, stdout: 'ok: 1 component\n', stderr: '' });
    const stages = config(
      'stages.alloy',
      'stage.json {\n  expressions = { level = "" }\n}\nstage.labels {\n  values = { level = "" }\n}\n',
    );
    expect(await validateOnTerminal([stages])).toEqual({ code: 0, stdout: 'ok: 2 stages\n', stderr: '' });
  });

  it('says nothing on success when its output is not a terminal', async () => {
    const graph = config('piped.alloy', 'logs.echo "out" { }\n');
    expect(await runCli(['validate', graph])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('says nothing on stdout when the config is invalid', async () => {
    const bad = config('bad-terminal.alloy', 'logs.echo "out" {\n  format = 1\n}\n');
    const result = await validateOnTerminal([bad]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  });
});

describe('json_path and constants.version in a config', () => {
  it('reads a value out of a JSON string and the version into labels', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const file = config(
      'json-path.alloy',
      [
        'stage.static_labels {',
        '  values = {',
        '    team    = json_path("{\\"owners\\": [{\\"team\\": \\"infra\\", \\"primary\\": true}, {\\"team\\": \\"web\\"}]}", "$.owners[?(@.primary)].team")[0],',
        '    version = constants.version,',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c) => (out += c));
    const code = await main(['process', '--config', file, '--input', 'text', '--output', 'entry', '--now', '2026-01-01T00:00:00Z'], {
      stdin: Readable.from(['hello\n']),
      stdout,
      stderr: new PassThrough(),
    });
    expect(code).toBe(0);
    expect(JSON.parse(out).labels).toEqual({ team: 'infra', version: `v${version}` });
  });
});
