import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, installPackedConsumer, ROOT, run, type Consumer } from '../support/packed-consumer.js';

/**
 * docs/custom-components.md as a user follows it: the example module and config, written into a
 * project that installed the packed tarball, validated and run by the installed bin.
 */
const DOC = readFileSync(join(ROOT, 'docs/custom-components.md'), 'utf8');
const block = (lang: string, marker: string): string => {
  const found = [...DOC.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!).find((b) => b.includes(marker));
  if (found === undefined) throw new Error(`no ${lang} block with ${marker} in docs/custom-components.md`);
  return found;
};

let consumer: Consumer;
let bin: string;

beforeAll(async () => {
  consumer = await installPackedConsumer(['rxjs', 'prom-client']);
  bin = join(consumer.dir, 'node_modules/.bin/rivulet');
  writeFileSync(join(consumer.dir, 'counter.mjs'), block('js', 'counter.mjs'));
  writeFileSync(join(consumer.dir, 'counter.alloy'), block('alloy', 'counter.alloy'));
  writeFileSync(join(consumer.dir, 'zero.alloy'), block('alloy', 'counter.alloy').replace('every = 2', 'every = 0'));
}, 180_000);

afterAll(() => {
  if (consumer) rmSync(consumer.work, { recursive: true, force: true });
});

describe('docs/custom-components.md in an installed project', () => {
  it('validates the config with the module loaded, and reports a value out of range where the docs say', async () => {
    await run(bin, ['validate', 'counter.alloy', '--stages', './counter.mjs'], { cwd: consumer.dir });
    const failed = await run(bin, ['validate', 'zero.alloy', '--stages', './counter.mjs'], { cwd: consumer.dir }).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(
      'zero.alloy:7:3: custom.counter "lines": attribute "every": must be at least 1, got 0',
    );
  }, 60_000);

  it('runs it: the totals the docs show, the second at stop', async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    const child = execFile(bin, ['run', 'counter.alloy', '--stages', './counter.mjs', '--server.http.listen-addr', addr], {
      cwd: consumer.dir,
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      if (out === 'counted 3\n') child.kill('SIGTERM');
    });
    child.stdin!.end('a\nb\nc\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(out).toBe('counted 3\ncounted 3\n');
    expect(code).toBe(0);
  }, 60_000);
});
