import { Registry } from 'prom-client';
import { systemClock } from '../core/clock.js';
import { loadStageList, startProcessRun } from '../core/process.js';
import { ComponentGraph } from '../core/runtime/graph.js';
import { STAGE_IMPORT_BLOCK } from '../core/stage-modules.js';
import type { Block } from '../lib/config/ast.js';
import { configErrorsOf } from '../lib/config/errors.js';
import { parseConfig } from '../lib/config/parser.js';
import { parseArgs, UsageError } from './args.js';
import { convertHint } from './convert/reference-names.js';
import type { Io } from './io.js';
import { loadFlagStageModules, readConfigWithStageModules, STAGES_FLAG } from './stage-modules.js';

/**
 * `rivulet validate CONFIG [--quiet] [--stages PATH]...`: checks what `run` or `process` would run,
 * without starting anything, custom stage modules (`--stages`, `stages.import`) loaded first. A
 * file of bare `stage.*` blocks, or one `logs.process` block without `forward_to`, is a stage list
 * and is checked as `rivulet process` reads it; anything else is a component graph, checked as
 * `rivulet run` builds it. Exit 0 when valid, saying `ok: N components` (`ok: N stages`) when stdout
 * is a terminal and not `--quiet` (a script piping it reads nothing but the exit code); otherwise
 * exit 2 with one `FILE:LINE:COL: message` line per error on stderr.
 */
export async function validateCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, ['quiet'], [], [STAGES_FLAG]);
  const file = args.positional[0];
  if (!file || args.positional.length > 1) throw new UsageError('validate needs exactly one CONFIG file');
  if (!(await loadFlagStageModules(args, io))) return 2;
  const text = await readConfigWithStageModules(file, io);
  if (text === undefined) return 2;
  let checked: string;
  try {
    checked = isStageList(text, file)
      ? counted(validateStageList(text, file), 'stage')
      : counted(await validateGraph(text, file, io), 'component');
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(`${e.message}\n`);
    io.stderr.write(convertHint(text, file) ?? '');
    return 2;
  }
  if ((io.stdout as Partial<NodeJS.WriteStream>).isTTY === true && !args.flags.has('quiet')) io.stdout.write(`ok: ${checked}\n`);
  return 0;
}

/** `1 component`, `3 components`. */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Whether the file is what `rivulet process` reads rather than a graph for `rivulet run`. */
function isStageList(text: string, file: string): boolean {
  let blocks: Block[];
  try {
    blocks = parseConfig(text, file).body.filter((s): s is Block => s.kind === 'block' && s.name !== STAGE_IMPORT_BLOCK);
  } catch {
    return false; // a syntax error reads the same either way
  }
  if (blocks.length === 0) return false;
  if (blocks.every((b) => b.name.startsWith('stage.'))) return true;
  return (
    blocks.length === 1 &&
    blocks[0]!.name === 'logs.process' &&
    !blocks[0]!.body.some((s) => s.kind === 'attribute' && s.name === 'forward_to')
  );
}

/** Checks a stage list; returns how many stages it has. */
function validateStageList(text: string, file: string): number {
  const specs = loadStageList(text, file);
  // Building checks what decoding cannot (regexes, templates, selectors); nothing runs.
  const run = startProcessRun(specs, { clock: systemClock(), registry: new Registry(), onEntry: () => {}, onComplete: () => {} });
  run.dispose();
  return specs.length;
}

/** Checks a component graph; returns how many components it has. */
async function validateGraph(text: string, file: string, io: Io): Promise<number> {
  const clock = systemClock();
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock, registry, stdout: io.stdout, log: () => {} }));
  graph.load(text, file);
  await graph.stop();
  return graph.componentIds().length;
}
