import { formatConfig } from '../lib/config/format.js';
import { parseConfig } from '../lib/config/parser.js';
import { configErrorsOf } from '../lib/config/errors.js';
import { parseArgs, UsageError } from './args.js';
import { readTextFile, type Io, writeTextFile } from './io.js';

/** `rivulet fmt CONFIG [--write]`: prints (or rewrites the file in) canonical form. */
export async function fmtCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, ['write'], []);
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError('fmt needs exactly one CONFIG file');
  const text = readTextFile(file);
  let formatted: string;
  try {
    formatted = formatConfig(parseConfig(text, file));
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return 2;
  }
  if (args.flags.has('write')) writeTextFile(file, formatted);
  else io.stdout.write(formatted);
  return 0;
}
