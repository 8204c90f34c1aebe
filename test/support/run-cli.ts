/** Runs the CLI's `main` in this process, keeping what it prints and its exit code. */
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../cli/main.js';

/**
 * Runs `rivulet <argv>` with `stdin` as its standard input (none when undefined); `stderrIsTerminal` makes its
 * standard error look like a terminal.
 */
export async function runCli(
  argv: string[],
  stdin?: string,
  { stderrIsTerminal = false }: { stderrIsTerminal?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = Object.assign(new PassThrough(), stderrIsTerminal ? { isTTY: true } : {});
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(argv, { stdin: Readable.from(stdin === undefined ? [] : [stdin]), stdout, stderr });
  return { code, stdout: out, stderr: err };
}
