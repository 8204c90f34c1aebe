#!/usr/bin/env node
/**
 * `npm run build`: the installable package in dist/.
 *
 * - JavaScript and types: tsc compiles the entry points (the library face `index.ts`,
 *   `rivulet/testing`, the `rivulet` bin and the two worker threads) and every module they reach
 *   into ES modules with `.d.ts` files beside them, mirroring the source tree (dist/core/clock.js,
 *   dist/core/clock.d.ts, …). Nothing is bundled: rxjs and prom-client are the user's own copies
 *   (peer dependencies), so an `Observable` Rivulet returns is `instanceof` the user's, the user's
 *   `TestScheduler.run` reaches Rivulet's schedulers and a prom-client `Registry` is one class;
 *   every other package the code imports is a dependency that the user's `npm audit` sees. The bin
 *   imports the same modules as the library, so a custom stage module's `import … from 'rivulet'`
 *   registers into the registry the CLI reads.
 * - The playground's browser UI: Vite builds it into dist/playground/web, served as static files.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build as viteBuild } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
process.chdir(root);
rmSync('dist', { recursive: true, force: true });

await viteBuild({
  root: 'playground/web',
  base: './',
  configFile: false,
  envDir: false,
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: '../../dist/playground/web',
    emptyOutDir: true,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2048,
  },
});

// Last: tsc writes every file even when it reports a type error, and then fails the build.
try {
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'],
    { stdio: 'inherit' },
  );
} finally {
  chmodSync('dist/bin/rivulet.js', 0o755);
}
