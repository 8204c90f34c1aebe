import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-file-errors-'));
const missing = join(dir, 'nonexistent.alloy');
const directory = join(dir, 'a-directory');
const loop = join(dir, 'loop');
mkdirSync(directory);
symlinkSync('loop', loop);

const commands: Array<[string, (file: string) => string[]]> = [
  ['validate', (file) => ['validate', file]],
  ['run', (file) => ['run', file, '--server.http.listen-addr', '127.0.0.1:0', '--workers', '1']],
  ['fmt', (file) => ['fmt', file]],
  ['process', (file) => ['process', '--config', file]],
];

describe('a config path that cannot be read', () => {
  for (const [command, argv] of commands) {
    it(`${command}: a missing file, a directory and a symlink loop are one line each, exit 2`, async () => {
      expect(await runCli(argv(missing))).toEqual({
        code: 2,
        stdout: '',
        stderr: `rivulet ${command}: open ${missing}: no such file or directory\n`,
      });
      expect(await runCli(argv(directory))).toEqual({
        code: 2,
        stdout: '',
        stderr: `rivulet ${command}: read ${directory}: is a directory\n`,
      });
      expect(await runCli(argv(loop))).toEqual({
        code: 2,
        stdout: '',
        stderr: `rivulet ${command}: open ${loop}: too many levels of symbolic links\n`,
      });
    });
  }
});

describe('validate and logs.echo', () => {
  it('never creates the file logs.echo writes to', async () => {
    const output = join(dir, 'echo-output.jsonl');
    const file = join(dir, 'echo.alloy');
    writeFileSync(file, `logs.echo "out" {\n  path = ${JSON.stringify(output)}\n}\n`);
    expect(await runCli(['validate', file])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(output)).toBe(false);
  });

  it('never creates the file or the raw directory of profiles.echo', async () => {
    const output = join(dir, 'profiles.jsonl');
    const raw = join(dir, 'raw-profiles');
    const file = join(dir, 'profiles-echo.alloy');
    writeFileSync(file, `profiles.echo "out" {\n  path = ${JSON.stringify(output)}\n  raw_dir = ${JSON.stringify(raw)}\n}\n`);
    expect(await runCli(['validate', file])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect([existsSync(output), existsSync(raw)]).toEqual([false, false]);
  });

  it('reports a path holding a NUL as a config error at the attribute', async () => {
    const file = join(dir, 'nul.alloy');
    writeFileSync(file, 'logs.echo "out" {\n  path = "a\\u0000b"\n}\n');
    expect(await runCli(['validate', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${file}:2:3: logs.echo "out": open "a\\u0000b": invalid argument (a path cannot hold a NUL character)\n`,
    });
    const profiles = join(dir, 'nul-profiles.alloy');
    writeFileSync(profiles, 'profiles.echo "out" {\n  raw_dir = "r\\u0000"\n}\n');
    expect(await runCli(['validate', profiles])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${profiles}:2:3: profiles.echo "out": open "r\\u0000": invalid argument (a path cannot hold a NUL character)\n`,
    });
  });
});
