import { EventEmitter } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/commands.js';
import { INTERNAL_ERROR_EXIT } from '../../cli/main.js';
import { runCommand } from '../../cli/run.js';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-clean-failures-'));
const missing = join(dir, 'missing.alloy');
const empty = join(dir, 'empty.alloy');
const directory = join(dir, 'a-directory');
const png = join(dir, 'image.alloy');
const nul = join(dir, 'nul.alloy');
const noise = join(dir, 'noise.alloy');
const locked = join(dir, 'locked.alloy');
writeFileSync(empty, '');
mkdirSync(directory);
// A PNG's first bytes: 0x89 starts no UTF-8 sequence.
writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]));
writeFileSync(nul, 'logs.echo "out" { }\nx\0y\n');
writeFileSync(noise, seededBytes(4096, 7));
writeFileSync(locked, 'logs.echo "out" { }\n');
chmodSync(locked, 0o000);

/** Whether this user reads a file whose mode forbids it: root (CAP_DAC_OVERRIDE) does. */
const readsLockedFiles = (() => {
  try {
    readFileSync(locked);
    return true;
  } catch {
    return false;
  }
})();

/** Bytes from a fixed-seed generator (xorshift), so a failure can be replayed. */
function seededBytes(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

/** A stage module whose stage throws a TypeError when built, and a stage list that uses it. */
function explodingStage(): { module: string; stages: string } {
  const module = join(dir, 'explode.mjs');
  writeFileSync(
    module,
    "export const explode = { name: 'explode_on_build', doc: 'Fails to build.', fields: {}, build() { throw new TypeError('boom'); } };\n",
  );
  const stages = join(dir, 'explode.alloy');
  writeFileSync(stages, 'stage.explode_on_build { }\n');
  return { module, stages };
}

/**
 * How each command is given a path. Every command of the table is here: a new command must say
 * how it takes a path, or that it takes none.
 */
const PATH_ARGUMENTS: Readonly<Record<string, ((path: string) => string[]) | 'no path'>> = {
  run: (path) => ['run', path, '--server.http.listen-addr', '127.0.0.1:0', '--workers', '1'],
  validate: (path) => ['validate', path],
  process: (path) => ['process', '--config', path],
  test: (path) => ['test', path],
  fmt: (path) => ['fmt', path],
  convert: (path) => ['convert', '--from', 'alloy', path],
  // Its only path is a stage module; a missing or unreadable one stops it before it listens.
  playground: (path) => ['playground', '--port', '0', '--stages', path],
  tap: 'no path',
  top: 'no path',
  completion: 'no path',
};

/** What a command says about a path it cannot use: `rivulet test` keeps its `FILE: reason` lines. */
function pathFailure(command: string, op: string, path: string, reason: string): string {
  if (command === 'test') return `${path}: ${reason === 'no such file or directory' ? 'no such file' : reason}\n`;
  return `rivulet ${command}: ${op} ${path}: ${reason}\n`;
}

const commandsWithPaths = COMMANDS.map((c) => c.name).filter((name) => PATH_ARGUMENTS[name] !== 'no path');

function argvOf(command: string, path: string): string[] {
  const argv = PATH_ARGUMENTS[command];
  if (typeof argv !== 'function') throw new Error(`no path argument for ${command}`);
  return argv(path);
}

describe('every command and a path it cannot use', () => {
  it('knows how every command of the table takes a path', () => {
    expect(COMMANDS.map((c) => c.name).filter((name) => PATH_ARGUMENTS[name] === undefined)).toEqual([]);
  });

  for (const command of commandsWithPaths) {
    it(`${command}: a missing file, a directory and binary content are one line each, exit 2`, async () => {
      expect(await runCli(argvOf(command, missing))).toEqual({
        code: 2,
        stdout: '',
        stderr: pathFailure(command, 'open', missing, 'no such file or directory'),
      });
      expect(await runCli(argvOf(command, directory))).toEqual({
        code: 2,
        stdout: '',
        stderr: pathFailure(command, 'read', directory, 'is a directory'),
      });
      if (command === 'playground') return; // its path is a module, imported rather than read as text: below
      expect(await runCli(argvOf(command, png))).toEqual({
        code: 2,
        stdout: '',
        stderr: pathFailure(command, 'read', png, 'not UTF-8 text (byte 0x89 at line 1, column 1)'),
      });
      expect(await runCli(argvOf(command, nul))).toEqual({
        code: 2,
        stdout: '',
        stderr: pathFailure(command, 'read', nul, 'not a text file (a NUL byte at line 2, column 2)'),
      });
      const random = await runCli(argvOf(command, noise));
      expect(random.code).toBe(2);
      expect(random.stderr).toMatch(/^[^\n]*: not (UTF-8 text \(byte 0x[0-9A-F]{2}|a text file \(a NUL byte) at line \d+, column \d+\)\n$/);
    });

    // Skipped for a user that reads a file of mode 000 anyway (root: no file or directory mode
    // refuses it anything), so there is nothing to refuse; it runs for any other user.
    it.skipIf(readsLockedFiles)(`${command}: a file it may not read is one line, exit 2`, async () => {
      expect(await runCli(argvOf(command, locked))).toEqual({
        code: 2,
        stdout: '',
        stderr: pathFailure(command, 'open', locked, 'permission denied'),
      });
    });
  }

  it('answers an empty file without a stack trace: valid for validate, fmt, process and convert, no tests for test', async () => {
    expect(await runCli(['validate', empty])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await runCli(['fmt', empty])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await runCli(['process', '--config', empty])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await runCli(['test', empty])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${empty}:1:1: no test blocks; write test "NAME" { … }\n`,
    });
    const converted = await runCli(['convert', '--from', 'alloy', empty]);
    expect(converted.code).toBe(0);
    expect(converted.stderr).not.toContain('    at ');
  });

  it('runs an empty config until told to stop', async () => {
    const signals = new EventEmitter();
    const stderr = new PassThrough();
    let said = '';
    stderr.on('data', (c) => {
      said += c;
      // The command listens for signals right after it says so.
      if (said.includes('running; press Ctrl-C to stop')) setImmediate(() => signals.emit('SIGTERM'));
    });
    const argv = ['--server.http.listen-addr', '127.0.0.1:0', '--workers', '1', empty];
    expect(await runCommand(argv, { stdin: new PassThrough(), stdout: new PassThrough(), stderr }, signals)).toBe(0);
    expect(said).not.toContain('    at ');
  });

  it('logs a config that went missing before a reload as a failed reload, in the same words', async () => {
    const file = join(dir, 'vanishing.alloy');
    writeFileSync(file, 'logs.echo "out" { }\n');
    const signals = new EventEmitter();
    const stderr = new PassThrough();
    let said = '';
    let removed = false;
    stderr.on('data', (c) => {
      said += c;
      if (said.includes('running; press Ctrl-C to stop') && !removed) {
        removed = true;
        rmSync(file);
        setImmediate(() => signals.emit('SIGHUP'));
      }
      if (said.includes('config reload failed')) setImmediate(() => signals.emit('SIGTERM'));
    });
    const argv = ['--server.http.listen-addr', '127.0.0.1:0', '--workers', '1', file];
    expect(await runCommand(argv, { stdin: new PassThrough(), stdout: new PassThrough(), stderr }, signals)).toBe(0);
    const reload = said.split('\n').find((line) => line.includes('config reload failed'));
    expect(reload).toBe(`level=error msg="config reload failed" errors=[${JSON.stringify(`open ${file}: no such file or directory`)}]`);
  });

  it('answers a stage module that is empty, binary, or not JavaScript in one line, exit 2', async () => {
    const emptyModule = join(dir, 'empty.mjs');
    const binaryModule = join(dir, 'binary.mjs');
    writeFileSync(emptyModule, '');
    writeFileSync(binaryModule, seededBytes(512, 11));
    for (const command of ['validate', 'playground']) {
      const argv = (module: string) =>
        command === 'validate' ? ['validate', empty, '--stages', module] : ['playground', '--port', '0', '--stages', module];
      expect(await runCli(argv(emptyModule))).toEqual({
        code: 2,
        stdout: '',
        stderr: `rivulet: stage module ${JSON.stringify(emptyModule)}: exports no stage; export the factory that defineStage returns\n`,
      });
      for (const module of [binaryModule, png]) {
        const result = await runCli(argv(module));
        expect(result.code).toBe(2);
        expect(result.stderr).toMatch(
          new RegExp(`^rivulet: stage module ${JSON.stringify(module).replaceAll('.', '\\.')}: cannot be loaded: [^\\n]+\\n$`),
        );
      }
    }
  });

  it('answers a --metrics file it cannot write in one line, exit 2', async () => {
    const config = join(dir, 'labels.alloy');
    writeFileSync(config, 'stage.static_labels { values = { a = "1" } }\n');
    expect(await runCli(['process', '--config', config, '--input', 'text', '--metrics', directory])).toEqual({
      code: 2,
      stdout: '',
      stderr: `rivulet process: open ${directory}: is a directory\n`,
    });
    expect(await runCli(['process', '--config', config, '--input', 'text', '--metrics', join(missing, 'metrics.txt')])).toEqual({
      code: 2,
      stdout: '',
      stderr: `rivulet process: open ${join(missing, 'metrics.txt')}: no such file or directory\n`,
    });
  });

  it('answers a failure no command expected in one line, exit 70, with no stack trace', async () => {
    const { module, stages } = explodingStage();
    const result = await runCli(['validate', stages, '--stages', module]);
    expect(result).toEqual({ code: INTERNAL_ERROR_EXIT, stdout: '', stderr: 'rivulet validate: internal error: boom\n' });
    expect((await runCli(['help'])).stdout).toContain(
      'an internal error (a bug) is one\nline and exit 70, with its stack when RIVULET_DEBUG is set.\n',
    );
  });

  it('prints the stack of an internal error when RIVULET_DEBUG is set', async () => {
    const { module, stages } = explodingStage();
    process.env.RIVULET_DEBUG = '1';
    try {
      const result = await runCli(['validate', stages, '--stages', module]);
      expect(result.code).toBe(INTERNAL_ERROR_EXIT);
      expect(result.stderr).toMatch(/^rivulet validate: internal error: boom\nTypeError: boom\n {4}at Object\.build /);
    } finally {
      delete process.env.RIVULET_DEBUG;
    }
  });
});
