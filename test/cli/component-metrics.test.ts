/**
 * `--metrics` of `rivulet process` and `/metrics` of `rivulet run` label a logs.process block's
 * series with its component_id and component_path; a bare stage list's keep their names and
 * labels (test/cli/process.test.ts asserts those).
 */
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../cli/run.js';
import { COUNT_AND_DROP_NOISE, meteredProcess } from '../support/metered-process.js';
import { runCli } from '../support/run-cli.js';

const BIN = fileURLToPath(new URL('../../bin/rivulet.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rivulet-component-metrics-'));

function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const PROCESS_BLOCK = `logs.process "edge" {\n${COUNT_AND_DROP_NOISE}}\n`;

const INPUT = '{"line":"noise 1","labels":{"app":"a"}}\n{"line":"kept","labels":{"app":"a"}}\n{"line":"noise 2","labels":{"app":"b"}}\n';

const LABELLED = [
  '# HELP logs_process_dropped_lines_total A count of all log lines dropped as a result of a pipeline stage',
  '# TYPE logs_process_dropped_lines_total counter',
  'logs_process_dropped_lines_total{component_id="logs.process.edge",component_path="/",reason="noise"} 2',
  '',
  '# HELP logs_process_custom_lines ',
  '# TYPE logs_process_custom_lines counter',
  'logs_process_custom_lines{component_id="logs.process.edge",component_path="/",app="a"} 2',
  'logs_process_custom_lines{component_id="logs.process.edge",component_path="/",app="b"} 1',
  '',
  '',
].join('\n');

describe('rivulet process --metrics with a logs.process block', () => {
  it("labels the block's series with its component_id and component_path", async () => {
    const out = join(dir, 'block.prom');
    const { code, stderr } = await runCli(['process', '--config', configFile('block.alloy', PROCESS_BLOCK), '--metrics', out], INPUT);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(readFileSync(out, 'utf8')).toBe(LABELLED);
  });

  it('labels them on worker threads too (the built bin)', () => {
    const out = join(dir, 'threads.prom');
    const config = configFile('threads.alloy', PROCESS_BLOCK);
    const result = spawnSync(process.execPath, [BIN, 'process', '--config', config, '--workers', '2', '--metrics', out], {
      input: INPUT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ code: result.status, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(readFileSync(out, 'utf8').split('\n').sort()).toEqual(LABELLED.split('\n').sort());
  }, 60_000);

  it('keeps a bare stage list unlabelled', async () => {
    const out = join(dir, 'bare.prom');
    expect((await runCli(['process', '--config', configFile('bare.alloy', COUNT_AND_DROP_NOISE), '--metrics', out], INPUT)).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('\nlogs_process_dropped_lines_total{reason="noise"} 2\n');
    expect(readFileSync(out, 'utf8')).toContain('\nlogs_process_custom_lines{app="b"} 1\n');
  });
});

describe('rivulet run /metrics', () => {
  it('tells two logs.process dropping for the same reason apart by component_id', async () => {
    const input = join(dir, 'app.log');
    writeFileSync(input, 'noise 1\nkept\nnoise 2\n');
    const block = (label: string) => meteredProcess(label, '[logs.echo.out.receiver]');
    const config = configFile(
      'run.alloy',
      `logs.source.file "in" {
  path = ${JSON.stringify(input)}
  forward_to = [logs.process.a.receiver, logs.process.b.receiver]
}
${block('a')}${block('b')}logs.echo "out" { path = ${JSON.stringify(join(dir, 'out.jsonl'))} }
`,
    );
    const stderr = new PassThrough();
    let log = '';
    const listening = new Promise<string>((resolve) =>
      stderr.on('data', (c) => {
        log += c;
        const m = /msg="now listening for http traffic" addr="([^"]+)"/.exec(log);
        if (m) resolve(m[1]!);
      }),
    );
    const signals = new EventEmitter();
    const done = runCommand(
      [config, '--server.http.listen-addr', '127.0.0.1:0', '--workers', '1'],
      { stdin: Readable.from([]), stdout: new PassThrough(), stderr },
      signals,
    );
    const url = await listening;
    const dropped = async () =>
      (await (await fetch(`${url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('logs_process_dropped_lines_total{'));
    await expect
      .poll(dropped, { timeout: 10_000 })
      .toEqual([
        'logs_process_dropped_lines_total{component_id="logs.process.a",component_path="/",reason="noise"} 2',
        'logs_process_dropped_lines_total{component_id="logs.process.b",component_path="/",reason="noise"} 2',
      ]);
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('\nlogs_source_file_read_lines_total{component_id="logs.source.file.in",component_path="/",path=');
    signals.emit('SIGTERM');
    expect(await done).toBe(0);
  }, 30_000);
});
