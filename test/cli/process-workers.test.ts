import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The installed form: the built bin, whose threads run the built pipeline worker.
const BIN = fileURLToPath(new URL('../../bin/rivulet.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rivulet-process-workers-'));

function rivulet(args: string[], stdin: string) {
  const result = spawnSync(process.execPath, [BIN, ...args], { input: stdin, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** 3,000 CRI lines over 40 pods: partial lines to join, JSON bodies, debug lines to drop. */
function criInput(): string {
  const lines: string[] = [];
  for (let i = 0; i < 3000; i++) {
    const pod = `web-${(i * 7) % 40}`;
    const flag = i % 11 === 0 ? 'P' : 'F';
    const body = JSON.stringify({ level: i % 5 === 0 ? 'debug' : 'info', msg: `request ${i}` });
    const line = `2024-05-01T10:00:00.${String(i).padStart(9, '0')}Z stdout ${flag} ${body}`;
    lines.push(JSON.stringify({ labels: { namespace: 'prod', pod }, line, timestamp: '2024-05-01T10:00:00Z' }));
  }
  return `${lines.join('\n')}\n`;
}

const K8S = `stage.cri { }
stage.json {
  expressions = { level = "", msg = "" }
}
stage.drop {
  source = "level"
  value  = "debug"
}
stage.labels {
  values = { level = "" }
}
stage.metrics {
  metric.counter {
    name        = "kept_total"
    description = "lines kept"
    match_all   = true
    action      = "inc"
  }
}
`;

describe('rivulet process --workers', () => {
  it('prints byte for byte what one thread prints, and writes the same metrics', () => {
    const config = configFile('k8s.alloy', K8S);
    const input = criInput();
    const one = rivulet(['process', '--config', config, '--metrics', join(dir, 'one.prom')], input);
    const two = rivulet(['process', '--config', config, '--workers', '2', '--metrics', join(dir, 'two.prom')], input);
    expect(one.code).toBe(0);
    expect(two).toEqual({ code: 0, stdout: one.stdout, stderr: '' });
    expect(one.stdout.split('\n').length).toBeGreaterThan(2000);
    const sorted = (file: string) => readFileSync(join(dir, file), 'utf8').split('\n').sort();
    expect(sorted('two.prom')).toEqual(sorted('one.prom'));
    expect(readFileSync(join(dir, 'two.prom'), 'utf8')).toMatch(
      /^logs_process_custom_kept_total\{level="info",namespace="prod",pod="web-1",stream="stdout"\} \d+$/m,
    );
  }, 60_000);

  it('says so and runs on one thread when a stage keeps one state for all entries', () => {
    const config = configFile('limit.alloy', 'stage.limit {\n  rate  = 100\n  burst = 100\n}\n');
    const result = rivulet(['process', '--config', config, '--workers', '2', '--output', 'line'], '{"line":"a"}\n{"line":"b"}\n');
    expect(result).toEqual({
      code: 0,
      stdout: 'a\nb\n',
      stderr: 'rivulet process: running on one thread: stage.limit without by_label_name keeps one rate for all entries\n',
    });
  }, 30_000);

  it('refuses a worker count that is not a whole number from 1 to 256, and --inspect with threads', () => {
    const config = configFile('plain.alloy', 'stage.static_labels {\n  values = { a = "b" }\n}\n');
    for (const bad of ['0', '257', 'two']) {
      const result = rivulet(['process', '--config', config, '--workers', bad], '');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`--workers must be a whole number from 1 to 256, got "${bad}"`);
    }
    const inspect = rivulet(['process', '--config', config, '--workers', '2', '--inspect'], '');
    expect(inspect.code).toBe(1);
    expect(inspect.stderr).toContain('--inspect follows every entry on one thread; leave out --workers');
  }, 30_000);
});
