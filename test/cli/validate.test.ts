import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-validate-'));

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
    expect(result.stderr).toBe(
      `${file}:2:22: logs.process "p" > stage.label_drop: labeldrop stage config cannot be empty\n` +
        `${file}:3:17: logs.process "p": component "logs.echo.nope.receiver" does not exist or is out of scope\n`,
    );
  });

  it('reports every error of a graph in one pass, in source order', async () => {
    const file = join(dir, 'four.alloy');
    writeFileSync(
      file,
      [
        'logs.process "app" {',
        '  forward_to = [logs.write.out.receiver]',
        '  stage.regex {',
        '    expression = "level=(?P<level>\\\\w+"',
        '  }',
        '  stage.lables {',
        '    values = { level = "" }',
        '  }',
        '  stage.multiline {',
        '    firstline     = "^\\\\d"',
        '    max_wait_time = "3 seconds"',
        '  }',
        '}',
        'logs.write "default" {',
        '  endpoint { url = "http://127.0.0.1:1/loki/api/v1/push" }',
        '}',
        '',
      ].join('\n'),
    );
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')).toEqual([
      `${file}:2:17: logs.process "app": component "logs.write.out.receiver" does not exist or is out of scope`,
      `${file}:4:25: logs.process "app" > stage.regex: could not compile regular expression: error parsing regexp: missing closing ): \`level=(?P<level>\\w+\``,
      `${file}:6:3: logs.process "app": unrecognized block name "stage.lables" (did you mean "stage.labels"?)`,
      `${file}:11:21: logs.process "app" > stage.multiline: attribute "max_wait_time": time: unknown unit " seconds" in duration "3 seconds"`,
      '',
    ]);
  });

  it('points a regex error inside the pattern, through the literal escapes', async () => {
    const file = join(dir, 'escapes.alloy');
    const cases: Array<[literal: string, col: number]> = [
      [String.raw`"a\\\\(b"`, 24], // the pattern a\\(b: the ( after an escaped backslash
      [String.raw`"\u00e9\t(x"`, 27], // é and a tab written as escapes, then the (
      [String.raw`${'`'}\d+(x${'`'}`, 22], // a raw string has no escapes
      [String.raw`"x\\qy"`, 20], // a bad escape: at its backslash
      [String.raw`"\x41(x"`, 18], // a byte escape before it: the literal's start
    ];
    for (const [literal, col] of cases) {
      writeFileSync(file, `stage.regex {\n  expression =   ${literal}\n}\n`);
      const result = await runCli(['validate', file]);
      expect(result.stderr.startsWith(`${file}:2:${col}: stage.regex: could not compile regular expression: `), result.stderr).toBe(true);
    }
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
    expect(result.stderr).toBe(
      `${file}:3:19: logs.process "p" > stage.regex: could not compile regular expression: error parsing regexp: missing closing ): \`(?P<a>x\`\n`,
    );
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
