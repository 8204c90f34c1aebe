import { systemClock } from '../core/clock.js';
import { configErrorsOf } from '../lib/config/errors.js';
import { Registry } from 'prom-client';
import { ComponentGraph } from '../core/runtime/graph.js';
import { parseArgs, UsageError } from './args.js';
import { loadFlagStageModules, readConfigWithStageModules, STAGES_FLAG } from './stage-modules.js';
import type { Io } from './io.js';

/**
 * `rivulet validate CONFIG [--stages PATH]...`: exit 0 when the whole graph builds (custom stage
 * modules loaded first); otherwise exit 2 with one `FILE:LINE:COL: message` line per error on
 * stderr. Nothing is started.
 */
export async function validateCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, [], [], [STAGES_FLAG]);
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError('validate needs exactly one CONFIG file');
  if (!(await loadFlagStageModules(args, io))) return 2;
  const text = await readConfigWithStageModules(file, io);
  if (text === undefined) return 2;
  const clock = systemClock();
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: io.stdout, log: () => {} }));
  try {
    graph.load(text, file);
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return 2;
  }
  await graph.stop();
  return 0;
}
