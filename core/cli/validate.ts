import { readFileSync } from 'node:fs';
import { systemClock } from '../clock';
import { configErrorsOf } from '../errors';
import { Registry } from 'prom-client';
import { ComponentGraph } from '../runtime/graph';
import { parseArgs, UsageError } from './args';
import type { Io } from './process';

/**
 * `rivulet validate CONFIG`: exit 0 when the whole graph builds; otherwise exit 2 with one
 * `FILE:LINE:COL: message` line per error on stderr. Nothing is started.
 */
export async function validateCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, [], []);
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError('validate needs exactly one CONFIG file');
  const clock = systemClock();
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: io.stdout, log: () => {} }));
  try {
    graph.load(readFileSync(file, 'utf8'), file);
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return 2;
  }
  await graph.stop();
  return 0;
}
