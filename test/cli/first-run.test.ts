import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

/**
 * `npm start` on a fresh clone: the default config reads the committed sample, prints processed
 * entries at once, says where /metrics and the health endpoints are and how to stop, and stops
 * cleanly on Ctrl-C (SIGINT).
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

it('runs the default config on the committed sample and shows entries within seconds', async () => {
  const child = spawn(process.execPath, ['bin/rivulet.mjs', 'run', 'examples/default.alloy', '--server.http.listen-addr', '127.0.0.1:0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const started = Date.now();
    while (Date.now() - started < 10_000 && !(stdout.split('\n').length > 33 && stderr.includes('press Ctrl-C to stop'))) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const entries = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { labels: Record<string, string>; line: string });
    expect(entries[0]).toEqual({
      labels: { app: 'checkout', filename: 'examples/sample-app-logs.jsonl', job: 'sample', level: 'info' },
      line: 'INFO [checkout] order placed (3 ms)',
      timestamp: '2025-11-25T09:00:00.423938499Z',
      structured_metadata: { trace_id: '892f902bd23f0824' },
    });
    // Debug lines are dropped by the pipeline: 40 sample lines, 33 shown.
    expect(entries).toHaveLength(33);
    expect(stderr).toMatch(
      /level=info msg="running; press Ctrl-C to stop" config="examples\/default.alloy" metrics="http:\/\/127\.0\.0\.1:\d+\/metrics" healthy="http:\/\/127\.0\.0\.1:\d+\/-\/healthy" ready="http:\/\/127\.0\.0\.1:\d+\/-\/ready"/,
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
}, 30_000);
