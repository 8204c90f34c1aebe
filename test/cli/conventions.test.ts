import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, completionScript } from '../../cli/commands.js';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-conventions-'));

describe('CLI conventions', () => {
  it('answers --help on every command with its flags, examples and exit codes', async () => {
    for (const command of COMMANDS) {
      const result = await runCli([command.name, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout.startsWith(`usage: rivulet ${command.name}`)).toBe(true);
      for (const flag of command.flags) expect(result.stdout).toContain(`--${flag.name}`);
      expect(result.stdout).toContain('examples:\n');
      expect(result.stdout).toContain('exit codes:\n');
    }
    expect((await runCli(['help', 'process'])).stdout).toBe((await runCli(['process', '-h'])).stdout);
  });

  it('suggests the command a mistyped one probably meant', async () => {
    const result = await runCli(['valdiate', 'x.alloy']);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe('unknown command "valdiate" (did you mean "validate"?)');
  });

  it('writes bash completion that bash accepts and that completes commands and flag values', () => {
    const file = join(dir, 'rivulet.bash');
    writeFileSync(file, completionScript('bash')!);
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${file}; COMP_WORDS=(${words.map((w) => `"${w}"`).join(' ')}); COMP_CWORD=${words.length - 1}; _rivulet; echo "\${COMPREPLY[*]}"`,
        ],
        {
          encoding: 'utf8',
        },
      ).trim();
    expect(complete(['rivulet', 'val'])).toBe('validate');
    expect(complete(['rivulet', 'process', '--output', ''])).toBe('json entry line');
    expect(complete(['rivulet', 'process', '--in'])).toBe('--input --inspect');
  });

  it('writes zsh and fish completion from the same table, and refuses other shells', async () => {
    expect(completionScript('zsh')).toContain(
      "process) _arguments '--config=[the stage list: bare stage.* blocks or one logs.process block]:value:_files'",
    );
    expect(completionScript('fish')).toContain(
      "complete -c rivulet -n '__fish_seen_subcommand_from process' -l output -x -a 'json entry line'",
    );
    expect(await runCli(['completion', 'powershell'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'rivulet completion: completion needs one of bash, zsh or fish\n',
    });
  });

  it('ends process with a summary on a terminal, with drops by reason', async () => {
    const config = join(dir, 'drop.alloy');
    writeFileSync(config, 'stage.drop {\n  expression = "^debug"\n  drop_counter_reason = "debug_lines"\n}\n');
    const result = await runCli(['process', '--config', config, '--input', 'text', '--output', 'line'], 'debug a\ninfo b\ndebug c\n', {
      stderrIsTerminal: true,
    });
    expect(result.stdout).toBe('info b\n');
    expect(result.stderr).toMatch(
      /^\r\x1b\[Krivulet process: 3 in, 1 out, 2 dropped \(debug_lines: 2\), 0 malformed, \d+\.\d\d s \([\d,]+ entries\/s\)\n$/,
    );
    expect(
      (await runCli(['process', '--config', config, '--input', 'text', '--quiet'], 'info b\n', { stderrIsTerminal: true })).stderr,
    ).toBe('');
  });

  it('exits 1 with a hint when every input line is malformed', async () => {
    const config = join(dir, 'labels.alloy');
    writeFileSync(config, 'stage.static_labels { values = { a = "1" } }\n');
    expect(await runCli(['process', '--config', config], 'plain text\nmore text\n')).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'stdin:1: invalid JSON: Unexpected token \'p\', "plain text" is not valid JSON\n' +
        'stdin:2: invalid JSON: Unexpected token \'m\', "more text" is not valid JSON\n' +
        'rivulet process: every input line was malformed (2); plain log lines need --input text\n',
    });
  });
});
