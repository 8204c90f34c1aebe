import { configErrorsOf } from '../lib/config/errors.js';
import { loadConfigStageModules, loadStageModules, StageModuleError } from '../core/stage-modules.js';
import type { ParsedArgs } from './args.js';
import { readFileBytes, readTextFile, type Io } from './io.js';

/** The repeatable flag that names custom stage modules on `run`, `validate`, `process`, `playground`. */
export const STAGES_FLAG = 'stages';

/**
 * Loads the modules given with `--stages PATH` (relative to the working directory). A path that
 * cannot be read throws a PathError (`open PATH: no such file or directory`) rather than the
 * module loader's message, which names the loader's own file. Returns false after printing
 * `rivulet: stage module "PATH": reason` when a module fails to load.
 */
export async function loadFlagStageModules(args: ParsedArgs, io: Io): Promise<boolean> {
  const paths = args.lists.get(STAGES_FLAG) ?? [];
  for (const path of paths) readFileBytes(path);
  try {
    await loadStageModules(paths, process.cwd());
    return true;
  } catch (err) {
    if (!(err instanceof StageModuleError)) throw err;
    // A loader's reason can run over several lines (a transform's report); the answer is one.
    io.stderr.write(`rivulet: ${err.message.trim().replace(/\s*\n\s*/g, ' ')}\n`);
    return false;
  }
}

/**
 * Reads a config file and loads the stage modules its `stages.import` blocks name. Returns the
 * text, or undefined after printing every problem as `FILE:LINE:COL: message`; a file that cannot
 * be read throws a PathError.
 */
export async function readConfigWithStageModules(file: string, io: Io): Promise<string | undefined> {
  const text = readTextFile(file);
  try {
    await loadConfigStageModules(text, file);
    return text;
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return undefined;
  }
}
