#!/usr/bin/env node
import { main } from '../cli/main.js';

// A reader that goes away (`rivulet process … | head`) ends the command quietly, as a closed pipe
// ends a Go program, instead of an unhandled 'error' event with its stack on stderr.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const code = await main(process.argv.slice(2));
// Exit once stdout has drained: a lingering handle (stdin, a socket) must not keep the CLI alive.
process.stdout.write('', () => process.exit(code));
