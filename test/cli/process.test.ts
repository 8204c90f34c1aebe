import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-process-'));

function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
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
      `${config}:2:3: stage.output: output source value is required if output is specified\n${config}:4:1: unrecognized block name "stage.nope"\n`,
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

  it('writes every metric with a sample in Prometheus text form with --metrics, as the reference exposes them', async () => {
    const config = configFile('e.alloy', 'stage.drop {\n  expression = "^x"\n}\n');
    const metrics = join(dir, 'metrics.txt');
    const result = await runCli(['process', '--config', config, '--metrics', metrics], '{"line":"x"}\n{"line":"y"}\n');
    expect(result.code).toBe(0);
    expect(readFileSync(metrics, 'utf8')).toBe(
      '# HELP logs_process_dropped_lines_total A count of all log lines dropped as a result of a pipeline stage\n' +
        '# TYPE logs_process_dropped_lines_total counter\n' +
        'logs_process_dropped_lines_total{reason="drop_stage"} 1\n\n',
    );
    // Nothing dropped, no cri stage: no family has a sample, and none is written.
    const quiet = configFile('q.alloy', 'stage.static_labels { values = { a = "1" } }\n');
    expect((await runCli(['process', '--config', quiet, '--metrics', metrics], '{"line":"x"}\n')).code).toBe(0);
    expect(readFileSync(metrics, 'utf8')).toBe('');
  });

  describe('--inspect', () => {
    const NOW = '2024-05-01T12:00:00Z';
    const inspect = (config: string, stdin: string, input = 'jsonl') =>
      runCli(['process', '--config', config, '--input', input, '--now', NOW, '--inspect'], stdin);

    it("tells each entry's fate, what each stage changed (named with its line) and a summary, without colour off a terminal", async () => {
      const config = configFile(
        'f.alloy',
        'stage.static_labels { values = { env = "prod" } }\nstage.json { expressions = { level = "" } }\nstage.output { source = "app" }\n',
      );
      const result = await inspect(config, '{"line":"x","labels":{"app":"api"}}\n');
      expect(result.stderr).toBe(
        'entry 1 (stdin:1): forwarded as output 1\n' +
          '  stage.static_labels@1: labels +env="prod"\n' +
          '  stage.output@3: line "x" -> "api"\n' +
          'summary: 1 entry in, 1 out\n',
      );
      expect(result.stderr).not.toContain('\x1b[');
    });

    it('leaves stdout exactly as without it', async () => {
      const config = configFile(
        'f2.alloy',
        'stage.cri {}\nstage.drop { expression = ".*debug.*" }\nstage.static_labels { values = { a = "1" } }\n',
      );
      const input = [
        '2024-05-01T10:00:00Z stdout F one',
        '2024-05-01T10:00:01Z stdout P tw',
        '2024-05-01T10:00:02Z stdout F o',
        'debug',
      ].join('\n');
      const plain = await runCli(['process', '--config', config, '--input', 'text', '--now', NOW], input);
      const inspected = await inspect(config, input, 'text');
      expect(inspected.stdout).toBe(plain.stdout);
      expect(inspected.code).toBe(0);
    });

    it('shows the labels and timestamp stage.cri sets on a full line, the timestamp in RFC 3339', async () => {
      const config = configFile('cri1.alloy', 'stage.cri {}\n');
      const result = await inspect(config, '2024-05-01T10:00:00.5Z stdout F hello\n', 'text');
      expect(result.stderr).toBe(
        'entry 1 (stdin:1): forwarded as output 1\n' +
          '  stage.cri@1: labels +stream="stdout"; line "2024-05-01T10:00:00.5Z stdout F hello" -> "hello"; ' +
          'timestamp 2024-05-01T12:00:00.000000000Z -> 2024-05-01T10:00:00.500000000Z; ' +
          'extracted +flags="F"; extracted +stream="stdout"; extracted +content="hello"; extracted +time="2024-05-01T10:00:00.5Z"\n' +
          'summary: 1 entry in, 1 out\n',
      );
    });

    it('tells which entries stage.cri joined partial lines into, and which it still held at the end', async () => {
      const config = configFile('cri2.alloy', 'stage.cri {}\n');
      const input = [
        '2024-05-01T10:00:01Z stdout P part one ',
        '2024-05-01T10:00:02Z stdout P part two ',
        '2024-05-01T10:00:03Z stdout F end',
        '2024-05-01T10:00:04Z stderr P lost',
      ].join('\n');
      const result = await inspect(config, input, 'text');
      expect(result.stdout).toContain('"line":"part one part two end"');
      expect(result.stderr.split('\n')).toEqual([
        'entry 1 (stdin:1): joined into entry 3 by stage.cri@1',
        '  stage.cri@1: held',
        'entry 2 (stdin:2): joined into entry 3 by stage.cri@1',
        '  stage.cri@1: held',
        'entry 3 (stdin:3): forwarded as output 1',
        expect.stringMatching(
          /^ {2}stage\.cri@1: joined from entries 1 and 2; labels \+stream="stdout"; line "2024-05-01T10:00:03Z stdout F end" -> "part one part two end"; timestamp 2024-05-01T12:00:00\.000000000Z -> 2024-05-01T10:00:03\.000000000Z; /,
        ),
        'entry 4 (stdin:4): still held by stage.cri@1 at end of input, not forwarded',
        '  stage.cri@1: held',
        'summary: 4 entries in, 1 out, 2 joined into other entries, 1 still held at end of input',
        '',
      ]);
    });

    it('words why an entry was dropped as the playground does, and counts drops by stage and reason', async () => {
      const config = configFile(
        'drop.alloy',
        'stage.drop {\n  expression = ".*debug.*"\n  drop_counter_reason = "noise"\n}\nstage.match {\n  selector = "{app=\\"x\\"}"\n  action = "drop"\n}\n',
      );
      const result = await inspect(config, '{"line":"a debug line"}\n{"line":"ok","labels":{"app":"x"}}\n{"line":"ok"}\n');
      expect(result.stderr).toBe(
        'entry 1 (stdin:1): dropped by stage.drop@1: every condition held: the line matches ".*debug.*" (counted as reason "noise")\n' +
          '  stage.drop@1: dropped\n' +
          'entry 2 (stdin:2): dropped by stage.match@5: matched selector {app="x"} with action "drop" (counted as reason "match_stage")\n' +
          '  stage.match@5: dropped\n' +
          'entry 3 (stdin:3): forwarded as output 1, no stage changed it\n' +
          'summary: 3 entries in, 1 out, 2 dropped (1 by stage.drop@1, reason "noise"; 1 by stage.match@5, reason "match_stage")\n',
      );
    });

    it('shows the metric series stage.metrics updated', async () => {
      const config = configFile(
        'metrics.alloy',
        [
          'stage.metrics {',
          '  metric.counter {',
          '    name = "lines_total"',
          '    match_all = true',
          '    action = "inc"',
          '  }',
          '  metric.gauge {',
          '    name = "size"',
          '    source = "n"',
          '    action = "set"',
          '  }',
          '}',
          '',
        ].join('\n'),
      );
      const result = await inspect(config, '{"line":"x","labels":{"app":"api"},"extracted":{"n":3.5}}\n{"line":"y"}\n');
      expect(result.stderr).toBe(
        'entry 1 (stdin:1): forwarded as output 1\n' +
          '  stage.metrics@1: counter logs_process_custom_lines_total{app="api"} +1; gauge logs_process_custom_size{app="api"} set 3.5\n' +
          'entry 2 (stdin:2): forwarded as output 2\n' +
          '  stage.metrics@1: counter logs_process_custom_lines_total +1\n' +
          'summary: 2 entries in, 2 out\n',
      );
    });

    it('tells two blocks of the same stage apart by their line, and indents the stages inside a match', async () => {
      const config = configFile(
        'same.alloy',
        [
          'stage.static_labels { values = { a = "1" } }',
          'stage.match {',
          '  selector = "{a=\\"1\\"}"',
          '  stage.static_labels { values = { b = "2" } }',
          '}',
          'stage.static_labels { values = { a = "3" } }',
          '',
        ].join('\n'),
      );
      const result = await inspect(config, '{"line":"x"}\n');
      expect(result.stderr).toBe(
        'entry 1 (stdin:1): forwarded as output 1\n' +
          '  stage.static_labels@1: labels +a="1"\n' +
          '  stage.match@2: matched\n' +
          '    stage.static_labels@4: labels +b="2"\n' +
          '  stage.static_labels@6: labels ~a="1"->"3"\n' +
          'summary: 1 entry in, 1 out\n',
      );
    });

    it('tells when a held entry was released and the entries a multiline block took in', async () => {
      const config = configFile('multi.alloy', 'stage.multiline { firstline = "^START" }\n');
      const result = await inspect(config, 'START a\n  more\nSTART b\n', 'text');
      expect(result.stderr).toBe(
        'entry 1 (stdin:1): forwarded as output 1\n' +
          '  stage.multiline@1: held, released when entry 3 arrived; joined from entry 2; line "START a" -> "START a\\n  more"\n' +
          'entry 2 (stdin:2): joined into entry 1 by stage.multiline@1\n' +
          '  stage.multiline@1: held\n' +
          'entry 3 (stdin:3): forwarded as output 2\n' +
          '  stage.multiline@1: held, released at end of input\n' +
          'summary: 3 entries in, 2 out, 1 joined into another entry\n',
      );
    });

    it('colours its output when stderr is a terminal', async () => {
      const config = configFile('colour.alloy', 'stage.static_labels { values = { env = "prod" } }\n');
      const stdout = new PassThrough();
      const stderr = Object.assign(new PassThrough(), { isTTY: true });
      let err = '';
      stdout.resume();
      stderr.on('data', (c) => (err += c));
      const code = await main(['process', '--config', config, '--now', NOW, '--inspect', '--quiet'], {
        stdin: Readable.from(['{"line":"x"}\n']),
        stdout,
        stderr,
      });
      expect(code).toBe(0);
      expect(err).toContain(
        '\x1b[1mentry 1\x1b[0m (stdin:1): \x1b[32mforwarded as output 1\x1b[0m\n  \x1b[36mstage.static_labels@1\x1b[0m: labels +env="prod"\n',
      );
    });
  });

  it('exits 1 with a usage message when --config is missing', async () => {
    const result = await runCli(['process']);
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'rivulet process: process needs --config FILE\n' });
  });

  it('follows a live pipe: each entry is printed before the next line is written, and the pipe waits when empty', async () => {
    const config = configFile('live.alloy', 'stage.static_labels { values = { env = "prod" } }\n');
    const child = execFile('node', ['bin/rivulet.mjs', 'process', '--config', config, '--output', 'line']);
    const lines: string[] = [];
    let pending = '';
    const nextLine = () =>
      new Promise<string>((resolve) => {
        const take = () => {
          const end = pending.indexOf('\n');
          if (end === -1) return false;
          lines.push(pending.slice(0, end));
          pending = pending.slice(end + 1);
          resolve(lines.at(-1)!);
          return true;
        };
        if (take()) return;
        const onData = (chunk: Buffer | string) => {
          pending += chunk;
          if (take()) child.stdout!.off('data', onData);
        };
        child.stdout!.on('data', onData);
      });
    // The second line is written only once the first came out, so the process has found the
    // pipe empty in between.
    child.stdin!.write('{"line":"one"}\n');
    expect(await nextLine()).toBe('one');
    child.stdin!.end('{"line":"two"}\n');
    expect(await nextLine()).toBe('two');
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
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
