import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-process-'));

function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function runCli(argv: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(argv, { stdin: Readable.from([stdin]), stdout, stderr });
  return { code, stdout: out, stderr: err };
}

describe('rivulet process', () => {
  it('prints each forwarded entry as one JSON line with a 9-digit UTC timestamp and extracted values', async () => {
    const config = configFile('a.alloy', 'stage.static_labels { values = { env = "prod" } }\n');
    const input =
      '{"line":"hello","labels":{"app":"api"},"timestamp":"2024-05-06T07:08:09.123+02:00","structured_metadata":{"trace":"t1"},"extracted":{"n":1.5}}\n';
    const result = await runCli(['process', '--config', config], input);
    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout:
        '{"labels":{"app":"api","env":"prod"},"line":"hello","timestamp":"2024-05-06T05:08:09.123000000Z","structured_metadata":{"trace":"t1"},"extracted":{"n":1.5,"app":"api"}}\n',
    });
  });

  it('accepts one logs.process block and ignores its forward_to', async () => {
    const config = configFile('b.alloy', 'logs.process "default" {\n  stage.output { source = "app" }\n  forward_to = []\n}\n');
    const result = await runCli(
      ['process', '--config', config, '--now', '2024-01-01T00:00:00Z'],
      '{"line":"x","labels":{"app":"api"},"timestamp":null}\n',
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      labels: { app: 'api' },
      line: 'api',
      timestamp: '2024-01-01T00:00:00.000000000Z',
      structured_metadata: {},
      extracted: { app: 'api' },
    });
  });

  it('reads plain lines with --input text', async () => {
    const config = configFile('c.alloy', 'stage.static_labels { values = { src = "text" } }\n');
    const result = await runCli(['process', '--config', config, '--input', 'text', '--now', '2024-01-01T00:00:00Z'], 'one\ntwo\n');
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).line),
    ).toEqual(['one', 'two']);
  });

  it('prints the entry without extracted values with --output entry, and the line alone with --output line', async () => {
    const config = configFile(
      'o.alloy',
      'stage.regex { expression = "^(?P<method>\\\\S+) (?P<path>\\\\S+)" }\nstage.output { source = "path" }\n',
    );
    const input = 'GET /a\nPOST /b\n';
    const now = ['--input', 'text', '--now', '2024-01-01T00:00:00Z'];
    expect(await runCli(['process', '--config', config, ...now, '--output', 'line'], input)).toEqual({
      code: 0,
      stderr: '',
      stdout: '/a\n/b\n',
    });
    expect((await runCli(['process', '--config', config, ...now, '--output', 'entry'], input)).stdout).toBe(
      '{"labels":{},"line":"/a","timestamp":"2024-01-01T00:00:00.000000000Z","structured_metadata":{}}\n' +
        '{"labels":{},"line":"/b","timestamp":"2024-01-01T00:00:00.000000000Z","structured_metadata":{}}\n',
    );
  });

  it('exits 1 naming the choices for an unknown --output', async () => {
    const config = configFile('o2.alloy', 'stage.output { source = "x" }\n');
    expect(await runCli(['process', '--config', config, '--output', 'yaml'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'rivulet process: --output must be json, entry or line, got "yaml"\n',
    });
  });

  it('exits 2 with FILE:LINE:COL errors and prints nothing on stdout for an invalid config', async () => {
    const config = configFile('bad.alloy', 'stage.output {\n  source = ""\n}\nstage.nope { }\n');
    const result = await runCli(['process', '--config', config], '{"line":"x"}\n');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `${config}:2:3: stage.output: output source value is required\n${config}:4:1: unrecognized block name "stage.nope"\n`,
    );
  });

  it('reports a malformed input line with its number and keeps going', async () => {
    const config = configFile('d.alloy', 'stage.static_labels { values = { a = "1" } }\n');
    const result = await runCli(
      ['process', '--config', config, '--now', '2024-01-01T00:00:00Z'],
      '{"line":"ok1"}\nnot json\n{"line":"ok2"}\n',
    );
    expect(result.code).toBe(0);
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).line),
    ).toEqual(['ok1', 'ok2']);
    expect(result.stderr).toMatch(/^stdin:2: invalid JSON: /);
  });

  it('writes every metric in Prometheus text form with --metrics', async () => {
    const config = configFile('e.alloy', 'stage.static_labels { values = { a = "1" } }\n');
    const metrics = join(dir, 'metrics.txt');
    const result = await runCli(['process', '--config', config, '--metrics', metrics], '{"line":"x"}\n');
    expect(result.code).toBe(0);
    expect(readFileSync(metrics, 'utf8')).toContain('# TYPE logs_process_dropped_lines_total counter');
  });

  it('shows what each stage changed with --inspect', async () => {
    const config = configFile('f.alloy', 'stage.static_labels { values = { env = "prod" } }\nstage.output { source = "app" }\n');
    const result = await runCli(['process', '--config', config, '--inspect'], '{"line":"x","labels":{"app":"api"}}\n');
    expect(result.stderr).toBe('entry 1 stage.static_labels: labels +env="prod"\nentry 1 stage.output: line "x" -> "api"\n');
  });

  it('exits 1 with a usage message when --config is missing', async () => {
    const result = await runCli(['process']);
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'rivulet process: process needs --config FILE\n' });
  });

  it('works through the installed bin as a separate process', async () => {
    const config = configFile('g.alloy', 'stage.static_labels { values = { env = "prod" } }\n');
    const child = execFile('node', ['bin/rivulet.mjs', 'process', '--config', config, '--now', '2024-01-01T00:00:00Z']);
    child.stdin!.end('{"line":"hi"}\n');
    let stdout = '';
    child.stdout!.on('data', (c) => (stdout += c));
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    expect(code).toBe(0);
    expect(stdout).toBe(
      '{"labels":{"env":"prod"},"line":"hi","timestamp":"2024-01-01T00:00:00.000000000Z","structured_metadata":{},"extracted":{}}\n',
    );
  });
});

void promisify;
