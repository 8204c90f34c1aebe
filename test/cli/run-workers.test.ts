import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/rivulet.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rivulet-run-workers-'));

const CONFIG = `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port    = 0
  }
  forward_to = [logs.process.p.receiver]
}

logs.process "p" {
  stage.multiline {
    firstline     = "^start"
    max_wait_time = "1h"
  }
  stage.metrics {
    metric.counter {
      name        = "blocks_total"
      description = "blocks"
      match_all   = true
      action      = "inc"
    }
  }
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`;

/** Starts `rivulet run` with `workers` threads; resolves once it serves, with its URLs and output. */
async function startRun(workers: number) {
  const file = join(dir, `run-${workers}.alloy`);
  writeFileSync(file, CONFIG);
  const child = spawn(process.execPath, [BIN, 'run', file, '--server.http.listen-addr', '127.0.0.1:0', '--workers', String(workers)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (c) => {
      err += c;
      const m = /msg="running; press Ctrl-C to stop".* metrics="([^"]+)\/metrics"/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on('exit', () => reject(new Error(`rivulet run exited: ${err}`)));
  });
  const components = (await (await fetch(`${url}/api/v0/components`)).json()) as Array<{ id: string; arguments?: unknown }>;
  expect(components.map((c) => c.id)).toContain('logs.source.api.in');
  return { child, url, exited, output: () => out, errors: () => err };
}

/** Eight streams, each a run of blocks: a `start` line and its continuation lines, in one push per stream slice. */
function pushes(): Array<{ streams: Array<{ stream: Record<string, string>; values: string[][] }> }> {
  const bodies = [];
  for (let round = 0; round < 5; round++) {
    const streams = [];
    for (let s = 0; s < 8; s++) {
      const values = [];
      for (let b = 0; b < 3; b++) {
        const block = round * 3 + b;
        values.push([`${1_700_000_000_000_000_000n + BigInt(round * 100 + b * 10)}`, `start ${s}.${block}`]);
        values.push([`${1_700_000_000_000_000_000n + BigInt(round * 100 + b * 10 + 1)}`, `  line ${s}.${block}`]);
      }
      streams.push({ stream: { app: `app-${s}`, env: 'prod' }, values });
    }
    bodies.push({ streams });
  }
  return bodies;
}

describe('rivulet run --workers', () => {
  it('keeps every stream whole and in order across threads, sums the threads metrics, and flushes them on SIGTERM', async () => {
    const run = await startRun(2);
    // logs.source.api logs the address it listens on.
    const base =
      /component="logs\.source\.api\.in".*?addr="(http:[^"]+)"/.exec(run.errors())?.[1] ??
      /addr="(http:[^"]+)".*?component="logs\.source\.api\.in"/.exec(run.errors())?.[1];
    expect(base).toBeDefined();
    for (const body of pushes()) {
      const res = await fetch(`${base}/loki/api/v1/push`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(204);
    }
    const metrics = await (await fetch(`${run.url}/metrics`)).text();
    // Each stream's 15 blocks: 14 closed by the next start line, the last one still held.
    for (let s = 0; s < 8; s++)
      expect(metrics).toContain(
        `logs_process_custom_blocks_total{component_id="logs.process.p",component_path="/",app="app-${s}",env="prod"} 14\n`,
      );
    expect(metrics).toContain('process_cpu_user_seconds_total');
    expect(run.errors()).not.toContain('run on one thread');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const lines = run
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { labels: Record<string, string>; line: string });
    expect(lines).toHaveLength(8 * 15);
    for (let s = 0; s < 8; s++) {
      const stream = lines.filter((l) => l.labels.app === `app-${s}`).map((l) => l.line);
      expect(stream).toEqual(Array.from({ length: 15 }, (_, b) => `start ${s}.${b}\n  line ${s}.${b}`));
    }
  }, 60_000);

  it('says when a stage list runs on one thread', async () => {
    const file = join(dir, 'limit.alloy');
    writeFileSync(file, 'logs.process "p" {\n  stage.limit {\n    rate  = 5\n    burst = 5\n  }\n  forward_to = []\n}\n');
    const child = spawn(process.execPath, [BIN, 'run', file, '--server.http.listen-addr', '127.0.0.1:0', '--workers', '2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (c) => {
        err += c;
        if (err.includes('running; press Ctrl-C')) resolve();
      }),
    );
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('exit', resolve));
    expect(err).toContain(
      'level=info msg="stages run on one thread" component="logs.process.p" reason="stage.limit without by_label_name keeps one rate for all entries"',
    );
  }, 30_000);
});
