import { writeFileSync } from 'node:fs';
import { configErrorsOf } from '../../lib/config/errors.js';
import { parseArgs, UsageError } from '../args.js';
import { readTextFile, type Io } from '../io.js';
import { convertAlloy } from './alloy.js';
import { formatWarning, type Conversion, type ConvertOptions } from './conversion.js';
import { convertPromtail } from './promtail.js';

const FORMATS = ['alloy', 'promtail'] as const;

/**
 * `rivulet convert --from alloy|promtail FILE [--output OUT] [--keep-names=false]`: prints the
 * Rivulet config for a reference agent config or a Promtail YAML config (or writes it to OUT),
 * with one `FILE:LINE:COL: warning: …` line on stderr for everything it could not carry over.
 * Exit 0 when converted (warnings or not); 2 with positioned errors when the input cannot be read
 * or parsed.
 */
export async function convertCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, [], ['from', 'output', 'keep-names']);
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError('convert needs exactly one FILE');
  const from = args.flags.get('from');
  if (typeof from !== 'string') throw new UsageError('convert needs --from alloy or --from promtail');
  if (!FORMATS.includes(from as (typeof FORMATS)[number]))
    throw new UsageError(`--from must be alloy or promtail, got ${JSON.stringify(from)}`);
  const keepNames = args.flags.get('keep-names') ?? 'true';
  if (keepNames !== 'true' && keepNames !== 'false')
    throw new UsageError(`--keep-names must be true or false, got ${JSON.stringify(keepNames)}`);
  const options: ConvertOptions = { keepNames: keepNames === 'true' };

  const text = readTextFile(file);
  let conversion: Conversion;
  try {
    conversion = from === 'alloy' ? convertAlloy(text, file, options) : convertPromtail(text, file, options);
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(`${e.message}\n`);
    return 2;
  }
  for (const warning of conversion.warnings) io.stderr.write(`${formatWarning(warning)}\n`);
  const output = args.flags.get('output');
  if (typeof output !== 'string') io.stdout.write(conversion.output);
  else
    try {
      writeFileSync(output, conversion.output);
    } catch (err) {
      // One line, as for an input that cannot be read: the system's words, no stack trace.
      io.stderr.write(`rivulet convert: ${(err as Error).message}\n`);
      return 2;
    }
  return 0;
}
