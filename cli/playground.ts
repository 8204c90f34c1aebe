import type { PlaygroundServer, PlaygroundServerOptions } from '../playground/server.js';
import { parseArgs, UsageError } from './args.js';
import { loadFlagStageModules, STAGES_FLAG } from './stage-modules.js';
import type { Io } from './io.js';

const ALLOW_HOST_ACCESS_FLAG = 'allow-host-access';

/** Starts the playground server; loaded on first use so other commands never load the bundler. */
async function startServer(options: PlaygroundServerOptions): Promise<PlaygroundServer> {
  const { startPlaygroundServer } = await import('../playground/server.js');
  return startPlaygroundServer(options);
}

/**
 * `rivulet playground [--port N] [--allow-host-access] [--stages PATH]...`: serves the playground
 * on 127.0.0.1 (port 0 picks a free one) with the custom stages of each module registered, prints
 * `playground listening on URL`, and stops on SIGINT/SIGTERM. A config sent by the page cannot
 * load modules itself: only the command line decides what code runs. Nor can it read environment
 * variables or files, or resolve host names, unless `--allow-host-access` says it may: a share
 * link holds someone else's config.
 */
export async function playgroundCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
  start: (options: PlaygroundServerOptions) => Promise<PlaygroundServer> = startServer,
): Promise<number> {
  const args = parseArgs(argv, [ALLOW_HOST_ACCESS_FLAG], ['port'], [STAGES_FLAG]);
  if (args.positional.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])}`);
  const portFlag = (args.flags.get('port') as string | undefined) ?? '8580';
  const port = Number(portFlag);
  if (!/^\d+$/.test(portFlag) || port > 65535)
    throw new UsageError(`--port must be a number from 0 to 65535, got ${JSON.stringify(portFlag)}`);
  if (!(await loadFlagStageModules(args, io))) return 2;
  let server: PlaygroundServer;
  try {
    server = await start({ port, allowHostAccess: args.flags.has(ALLOW_HOST_ACCESS_FLAG) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    io.stderr.write(`rivulet playground: port ${port} is in use; choose another with --port N (0 picks a free one)\n`);
    return 1;
  }
  io.stdout.write(`playground listening on ${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      signals.off('SIGINT', stop);
      signals.off('SIGTERM', stop);
      resolve();
    };
    signals.on('SIGINT', stop);
    signals.on('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
