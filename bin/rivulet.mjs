#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../index.ts');
const code = await main(process.argv.slice(2));
// Exit once stdout has drained: a lingering handle (stdin, a socket) must not keep the CLI alive.
process.stdout.write('', () => process.exit(code));
