import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-convert-'));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const PROMTAIL = `clients:
  - url: http://loki:3100/loki/api/v1/push
scrape_configs:
  - job_name: app
    static_configs:
      - targets: [localhost]
        labels:
          __path__: /var/log/app.log
    kubernetes_sd_configs:
      - role: pod
`;

const CONVERTED = `logs.source.file "app" {
  targets        = [
    { __path__ = "/var/log/app.log" },
  ]
  forward_to     = [logs.write.default.receiver]
  positions_file = "/var/log/positions.json"
}

logs.write "default" {
  endpoint {
    url = "http://loki:3100/loki/api/v1/push"
  }
}
`;

describe('rivulet convert', () => {
  it('prints the converted config on stdout and one positioned warning a line on stderr, exit 0', async () => {
    const input = file('promtail.yaml', PROMTAIL);
    expect(await runCli(['convert', '--from', 'promtail', input])).toEqual({
      code: 0,
      stdout: CONVERTED,
      stderr: `${input}:9:5: warning: kubernetes_sd_configs is not converted: Rivulet has no service discovery; list the files in static_configs\n`,
    });
  });

  it('writes the config to --output instead', async () => {
    const input = file('output.yaml', PROMTAIL);
    const output = join(dir, 'converted.alloy');
    const result = await runCli(['convert', '--from', 'promtail', input, '--output', output]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(readFileSync(output, 'utf8')).toBe(CONVERTED);
  });

  it('keeps --keep-names=false for the metric prefix', async () => {
    const input = file('metrics.alloy', 'stage.metrics {\n  metric.counter {\n    name = "n"\n    action = "inc"\n  }\n}\n');
    expect((await runCli(['convert', '--from', 'alloy', input, '--keep-names=false'])).stdout).not.toContain('prefix');
    expect((await runCli(['convert', '--from', 'alloy', input])).stdout).toContain('    prefix = "loki_process_custom_"\n');
  });

  it('exits 2 with one line for a missing file, and with positioned errors for one that does not parse', async () => {
    const missing = join(dir, 'missing.yaml');
    expect(await runCli(['convert', '--from', 'promtail', missing])).toEqual({
      code: 2,
      stdout: '',
      stderr: `rivulet convert: open ${missing}: no such file or directory\n`,
    });
    const yaml = file('bad.yaml', 'a: [1\nb: 2\n');
    expect(await runCli(['convert', '--from', 'promtail', yaml])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${yaml}:2:1: Flow sequence in block collection must be sufficiently indented and end with a ]\n`,
    });
    const list = file('list.yaml', '- a\n');
    expect((await runCli(['convert', '--from', 'promtail', list])).stderr).toBe(
      `${list}:1:1: expected a Promtail config: a YAML mapping\n`,
    );
    const alloy = file('bad.alloy', 'loki.process "p" {\n');
    expect(await runCli(['convert', '--from', 'alloy', alloy])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${alloy}:2:1: expected "}" to close block "loki.process" opened at 1:18, got end of file\n`,
    });
  });

  it('exits 1 on usage errors', async () => {
    const usage = async (argv: string[]) => {
      const result = await runCli(['convert', ...argv]);
      expect(result.code).toBe(1);
      return result.stderr;
    };
    expect(await usage(['x.alloy'])).toBe('rivulet convert: convert needs --from alloy or --from promtail\n');
    expect(await usage(['--from', 'fluentd', 'x'])).toBe('rivulet convert: --from must be alloy or promtail, got "fluentd"\n');
    expect(await usage(['--from', 'alloy', '--keep-names=maybe', 'x'])).toBe(
      'rivulet convert: --keep-names must be true or false, got "maybe"\n',
    );
    expect(await usage(['--from', 'alloy', 'a', 'b'])).toBe('rivulet convert: convert needs exactly one FILE\n');
  });

  it('answers --help', async () => {
    const help = await runCli(['convert', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.split('\n')[0]).toBe('usage: rivulet convert --from FORMAT FILE [flags]');
  });
});

describe('validate and process on a config with the reference names', () => {
  const text = 'loki.process "p" {\n  forward_to = []\n  stage.static_labels { values = { a = "1" } }\n}\n';

  it('validate adds one line about convert under its errors', async () => {
    const config = file('reference.alloy', text);
    const result = await runCli(['validate', config]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `${config}:1:1: unrecognized component name "loki.process" (did you mean "logs.process"?)\n` +
        `hint: loki.process is the reference agent's name for logs.process; \`rivulet convert --from alloy ${config}\` rewrites a config's names\n`,
    );
  });

  it('process adds the same line', async () => {
    const config = file('stages.alloy', 'stage.windowsevent { }\n');
    const result = await runCli(['process', '--config', config]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n').at(-2)).toBe(
      `hint: stage.windowsevent is the reference agent's name for stage.hostevent; \`rivulet convert --from alloy ${config}\` rewrites a config's names`,
    );
  });

  it('adds nothing when only a reference uses such a name: its error already suggests the Rivulet one', async () => {
    const config = file('ref-only.alloy', 'logs.process "p" {\n  forward_to = [loki.write.w.receiver]\n}\n');
    const result = await runCli(['validate', config]);
    expect(result.stderr).not.toContain('hint:');
  });
});
