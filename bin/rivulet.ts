#!/usr/bin/env node
import { main } from '../cli/main.js';

const code = await main(process.argv.slice(2));
// Exit once stdout has drained: a lingering handle (stdin, a socket) must not keep the CLI alive.
process.stdout.write('', () => process.exit(code));
