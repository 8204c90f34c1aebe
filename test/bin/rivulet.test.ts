import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

it('stops quietly with status 0 when the reader of its output goes away', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-epipe-'));
  const config = join(dir, 'stages.alloy');
  writeFileSync(config, 'stage.decolorize { }\n');
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/rivulet.mjs'), 'process', '--config', config, '--input', 'text', '--output', 'line'],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Far more output than a pipe holds, so writes are still pending when the reader leaves.
  const line = `${'x'.repeat(1000)}\n`;
  child.stdin.on('error', () => {});
  child.stdout.once('data', () => child.stdout.destroy());
  for (let i = 0; i < 2000; i++) child.stdin.write(line);
  child.stdin.end();
  try {
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 20_000);
