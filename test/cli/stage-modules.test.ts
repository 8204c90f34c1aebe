import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Node ends a process whose top-level await can never settle with status 13 and no word: only a
// real process shows it, so these run the built CLI.
const BIN = fileURLToPath(new URL('../../bin/rivulet.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rivulet-stage-modules-'));
writeFileSync(join(dir, 'hang.mjs'), 'await new Promise(() => {});\nexport const never = 1;\n');
const config = join(dir, 'echo.alloy');
writeFileSync(config, 'logs.echo "out" { }\n');

function rivulet(args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('a stage module whose top level never settles', () => {
  it('named by --stages: one line naming the module, exit 2', () => {
    expect(rivulet(['validate', config, '--stages', './hang.mjs'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'rivulet: stage module "./hang.mjs": cannot be loaded: its top-level await waits on a promise that never settles\n',
    });
  });

  it('named by stages.import: one line at the path attribute, exit 2', () => {
    const file = join(dir, 'import.alloy');
    writeFileSync(file, 'stages.import "hang" {\n  path = "./hang.mjs"\n}\nlogs.echo "out" { }\n');
    expect(rivulet(['validate', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${file}:2:3: stages.import "hang": stage module "./hang.mjs": cannot be loaded: its top-level await waits on a promise that never settles\n`,
    });
  });
});
