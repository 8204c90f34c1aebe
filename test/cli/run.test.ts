import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCommand, parseListenAddr } from '../../cli/run.js';
import '../../index.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-run-'));

async function startRun(config: string) {
  const file = join(dir, `run-${Math.random().toString(36).slice(2)}.alloy`);
  writeFileSync(file, config);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  const listening = new Promise<string>((resolve) =>
    stderr.on('data', (c) => {
      err += c;
      const m = /addr="([^"]+)"/.exec(err);
      if (m) resolve(m[1]!);
    }),
  );
  const signals = new EventEmitter();
  const done = runCommand([file, '--server.http.listen-addr', '127.0.0.1:0'], { stdin: Readable.from([]), stdout, stderr }, signals);
  const url = await listening;
  return { file, url, signals, done, output: () => out, errors: () => err };
}

describe('rivulet run', () => {
  it('serves metrics, health and the component list, then drains on SIGTERM', async () => {
    const input = join(dir, 'input.log');
    writeFileSync(input, 'one\ntwo\n');
    const run = await startRun(`logs.source.file "in" {
  path = ${JSON.stringify(input)}
  forward_to = [logs.process.p.receiver]
}
logs.process "p" {
  stage.static_labels { values = { env = "prod" } }
  forward_to = [logs.echo.out.receiver]
}
logs.echo "out" { }
`);
    const health = await fetch(`${run.url}/-/healthy`);
    expect(health.status).toBe(200);
    expect((await fetch(`${run.url}/-/ready`)).status).toBe(200);
    const components = (await (await fetch(`${run.url}/api/v0/components`)).json()) as Array<{ id: string; health: { state: string } }>;
    expect(components.map((c) => [c.id, c.health.state]).sort()).toEqual([
      ['logs.echo.out', 'healthy'],
      ['logs.process.p', 'healthy'],
      ['logs.source.file.in', 'healthy'],
    ]);
    const metrics = await (await fetch(`${run.url}/metrics`)).text();
    expect(metrics).toContain('process_cpu_user_seconds_total');
    for (let i = 0; i < 50 && run.output().split('\n').length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    run.signals.emit('SIGTERM');
    expect(await run.done).toBe(0);
    expect(
      run
        .output()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).line),
    ).toEqual(['one', 'two']);
  });

  it('reloads on POST /-/reload and reports an invalid new config with 400', async () => {
    const run = await startRun('logs.echo "out" { }\n');
    writeFileSync(run.file, 'logs.echo "out" { path = 3 + }\n');
    const bad = await fetch(`${run.url}/-/reload`, { method: 'POST', headers: { 'X-Rivulet-Reload': '1' } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(new RegExp(`^${run.file.replace(/[.]/g, '\\.')}:1:\\d+: `));
    writeFileSync(run.file, 'logs.echo "out" { }\nlogs.echo "second" { }\n');
    const good = await fetch(`${run.url}/-/reload`, { method: 'POST', headers: { 'X-Rivulet-Reload': '1' } });
    expect(good.status).toBe(200);
    expect(await good.text()).toBe('config reloaded\n');
    const components = (await (await fetch(`${run.url}/api/v0/components`)).json()) as Array<{ id: string }>;
    expect(components.map((c) => c.id).sort()).toEqual(['logs.echo.out', 'logs.echo.second']);
    run.signals.emit('SIGINT');
    expect(await run.done).toBe(0);
  });

  it('refuses with 403 a reload a cross-site page could send, and takes one with a JSON body', async () => {
    const run = await startRun('logs.echo "out" { }\n');
    writeFileSync(run.file, 'logs.echo "out" { }\nlogs.echo "second" { }\n');
    const ids = async () => ((await (await fetch(`${run.url}/api/v0/components`)).json()) as Array<{ id: string }>).map((c) => c.id).sort();
    const simple: Array<Record<string, string>> = [
      {},
      { 'Content-Type': 'application/x-www-form-urlencoded' },
      { 'Content-Type': 'multipart/form-data; boundary=x' },
      { 'Content-Type': 'text/plain' },
    ];
    for (const headers of simple) {
      const res = await fetch(`${run.url}/-/reload`, { method: 'POST', headers, body: 'a=b' });
      expect([res.status, await res.text()]).toEqual([403, 'X-Rivulet-Reload: 1 (or a JSON content type) is required to reload\n']);
    }
    expect(await ids()).toEqual(['logs.echo.out']);
    const json = await fetch(`${run.url}/-/reload`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect([json.status, await json.text()]).toEqual([200, 'config reloaded\n']);
    expect(await ids()).toEqual(['logs.echo.out', 'logs.echo.second']);
    run.signals.emit('SIGINT');
    expect(await run.done).toBe(0);
  });

  it('exits 2 with positioned errors when the config is invalid', async () => {
    const file = join(dir, 'bad.alloy');
    writeFileSync(file, 'logs.echo "out" {\n  colour = "red"\n}\n');
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c) => (err += c));
    const code = await runCommand([file], { stdin: Readable.from([]), stdout: new PassThrough(), stderr });
    expect(code).toBe(2);
    expect(err).toBe(`${file}:2:3: logs.echo "out": unrecognized attribute name "colour"\n`);
    void readFileSync;
  });

  it('parses listen addresses like the reference flag', () => {
    expect(parseListenAddr('127.0.0.1:12345')).toEqual({ host: '127.0.0.1', port: 12345 });
    expect(parseListenAddr('[::1]:80')).toEqual({ host: '::1', port: 80 });
    expect(() => parseListenAddr('nohost')).toThrow('invalid listen address "nohost", expected HOST:PORT');
  });
});
