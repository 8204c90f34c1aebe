/** Runs the CLI's `main` in this process with empty stdin, keeping what it prints and its exit code. */
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../cli/main.js';

export async function runCli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(argv, { stdin: Readable.from([]), stdout, stderr });
  return { code, stdout: out, stderr: err };
}
