#!/usr/bin/env node
import * as nodeModule from 'node:module';

// Node 22.1 and later keep the compiled code of the modules the CLI loads (its own and rxjs's
// CommonJS tree, a few hundred files) in a cache on disk, so later starts skip compiling them.
// It must be on before those modules load, hence the dynamic import below. Older Node lacks it.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const { main } = await import('../cli/main.js');

// A reader that goes away (`rivulet process … | head`) ends the command quietly, as a closed pipe
// ends a Go program, instead of an unhandled 'error' event with its stack on stderr.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const code = await main(process.argv.slice(2));
// Exit once stdout has drained: a lingering handle (stdin, a socket) must not keep the CLI alive.
process.stdout.write('', () => process.exit(code));
