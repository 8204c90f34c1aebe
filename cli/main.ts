// Every built-in stage and component, registered before any command reads a config.
import '../index.js';
import { ensureLinearTimeFallback } from '../lib/regex/index.js';
import { UsageError } from './args.js';
import { COMMANDS, commandHelp, completionScript, overview, usageOf } from './commands.js';
import { convertCommand } from './convert/command.js';
import { didYouMean } from '../lib/suggest.js';
import { fmtCommand } from './fmt.js';
import { playgroundCommand } from './playground.js';
import { PathError, type Io } from './io.js';
import { processCommand } from './process.js';
import { runCommand } from './run.js';
import { tapCommand } from './tap.js';
import { testCommand } from './test.js';
import { topCommand } from './top.js';
import { validateCommand } from './validate.js';
import { packageVersion } from './version.js';

/** The overview printed by `rivulet help` and for a missing or unknown command. */
export const USAGE = overview();

/**
 * Runs one CLI command and returns its exit code. Usage errors exit 1, a path that cannot be read
 * or written exit 2, both in one line; anything else unexpected is an internal error (exit 70),
 * also in one line: no stack trace reaches the user.
 */
export async function main(
  argv: readonly string[],
  io: Io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  // Set before any user pattern is compiled so V8 falls back to its linear-time engine.
  ensureLinearTimeFallback();
  const [command, ...rest] = argv;
  const described = command === undefined ? undefined : commandHelp(command);
  if (described && rest.some((a) => a === '--help' || a === '-h')) {
    io.stdout.write(usageOf(described));
    return 0;
  }
  try {
    switch (command) {
      case 'run':
        return await runCommand(rest, io);
      case 'tap':
        return await tapCommand(rest, io);
      case 'top':
        return await topCommand(rest, io);
      case 'validate':
        return await validateCommand(rest, io);
      case 'process':
        return await processCommand(rest, io);
      case 'test':
        return await testCommand(rest, io);
      case 'fmt':
        return await fmtCommand(rest, io);
      case 'convert':
        return await convertCommand(rest, io);
      case 'playground':
        return await playgroundCommand(rest, io);
      case 'completion':
        return completionCommand(rest, io);
      case '--version':
      case 'version':
        io.stdout.write(`rivulet ${packageVersion()}\n`);
        return 0;
      case 'help':
      case '--help':
      case '-h': {
        const topic = rest[0] === undefined ? undefined : commandHelp(rest[0]);
        io.stdout.write(topic ? usageOf(topic) : USAGE);
        return 0;
      }
      default: {
        const suggestion =
          command === undefined
            ? ''
            : didYouMean(
                command,
                COMMANDS.map((c) => c.name),
              );
        io.stderr.write(command === undefined ? USAGE : `unknown command ${JSON.stringify(command)}${suggestion}\n\n${USAGE}`);
        return 1;
      }
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`rivulet ${command}: ${err.message}\n`);
      return 1;
    }
    if (err instanceof PathError) {
      io.stderr.write(`rivulet ${command}: ${err.message}\n`);
      return 2;
    }
    return internalError(command, err, io);
  }
}

/** The exit code of a failure no command expected: a bug, not the user's doing. */
export const INTERNAL_ERROR_EXIT = 70;

/**
 * Answers a failure no command expected in one line, `rivulet COMMAND: internal error: MESSAGE`,
 * exit 70 (BSD's EX_SOFTWARE): a stack trace is for whoever fixes the bug, so it is printed only
 * with RIVULET_DEBUG set.
 */
function internalError(command: string | undefined, err: unknown, io: Io): number {
  const message = err instanceof Error ? err.message : String(err);
  io.stderr.write(`rivulet ${command}: internal error: ${message.split('\n')[0]}\n`);
  if (process.env.RIVULET_DEBUG && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
  return INTERNAL_ERROR_EXIT;
}

/** `rivulet completion bash|zsh|fish`: the completion script, written from the command table. */
function completionCommand(argv: readonly string[], io: Io): number {
  const script = argv.length === 1 ? completionScript(argv[0]!) : undefined;
  if (script === undefined) throw new UsageError('completion needs one of bash, zsh or fish');
  io.stdout.write(script);
  return 0;
}
