// Every built-in stage and component, registered before any command reads a config.
import '../index.js';
import { ensureLinearTimeFallback } from '../lib/regex/index.js';
import { UsageError } from './args.js';
import { fmtCommand } from './fmt.js';
import { playgroundCommand } from './playground.js';
import type { Io } from './io.js';
import { processCommand } from './process.js';
import { runCommand } from './run.js';
import { validateCommand } from './validate.js';
import { packageVersion } from './version.js';

export const USAGE = `usage: rivulet <command> [arguments]

commands:
  run CONFIG [--server.http.listen-addr HOST:PORT]   run the components of CONFIG until SIGINT/SIGTERM
  validate CONFIG                                     check CONFIG; exit 2 with FILE:LINE:COL errors
  process --config FILE [--input jsonl|text] [--output json|entry|line] [--inspect] [--metrics OUT] [--now TIME]
                                                      run stdin through a stage list, entries as JSON lines
  fmt CONFIG [--write]                                print CONFIG in canonical form
  playground [--port N]                               serve the pipeline playground on 127.0.0.1 (default port 8580)
  --version                                           print the version

run, validate, process and playground also take --stages PATH (repeatable): a module of custom
stages to register first. A config can name modules itself: stages.import "NAME" { path = "…" }.
`;

/** Runs one CLI command and returns its exit code. Usage errors exit 1. */
export async function main(
  argv: readonly string[],
  io: Io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  // Set before any user pattern is compiled so V8 falls back to its linear-time engine.
  ensureLinearTimeFallback();
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await runCommand(rest, io);
      case 'validate':
        return await validateCommand(rest, io);
      case 'process':
        return await processCommand(rest, io);
      case 'fmt':
        return await fmtCommand(rest, io);
      case 'playground':
        return await playgroundCommand(rest, io);
      case '--version':
      case 'version':
        io.stdout.write(`rivulet ${packageVersion()}\n`);
        return 0;
      case 'help':
      case '--help':
      case '-h':
        io.stdout.write(USAGE);
        return 0;
      default:
        io.stderr.write(command === undefined ? USAGE : `unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
        return 1;
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`rivulet ${command}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
