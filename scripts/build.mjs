#!/usr/bin/env node
/**
 * `npm run build`: the installable package in dist/.
 *
 * - JavaScript: esbuild bundles the entry points (the library face, `rivulet/testing`, the
 *   `rivulet` bin, the playground's run worker and the pipeline worker, which are started as threads) with code
 *   splitting, so the library and the bin share one copy of every module (one stage registry for
 *   built-in and custom stages). Pure-JavaScript dependencies are bundled:
 *   loading one file instead of a few hundred CommonJS modules is what makes the CLI start fast.
 *   `re2` (a native addon) and `fast-check` (the testing kit's peer) stay imports.
 * - Types: tsc writes `.d.ts` files (with declaration maps) under dist/types.
 * - The playground's browser UI: Vite builds it into dist/playground/web, served as static files.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { build as viteBuild } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
process.chdir(root);
rmSync('dist', { recursive: true, force: true });

await build({
  entryPoints: {
    index: 'index.ts',
    'testing/index': 'testing/index.ts',
    'bin/rivulet': 'bin/rivulet.ts',
    'playground/run-worker': 'playground/run-worker.ts',
    'pipeline-worker': 'cli/pipeline-worker.ts',
  },
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  mainFields: ['module', 'main'],
  external: ['re2', 'fast-check', 'vite', 'tsx'],
  sourcemap: true,
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  legalComments: 'linked',
  // Bundled CommonJS dependencies call require(); give the ESM output one.
  banner: { js: "import { createRequire as __rivuletRequire } from 'node:module'; const require = __rivuletRequire(import.meta.url);" },
  logLevel: 'warning',
  plugins: [rxjsEsm()],
});

/**
 * Resolves rxjs and its entry points (`rxjs/testing`) to its ES module build, where its export map
 * sends Node to CommonJS: tree-shaken ESM loads in a fraction of the time of the CommonJS tree, and
 * every entry point then shares one copy of rxjs (one TestScheduler patches the schedulers the
 * stages use).
 */
function rxjsEsm() {
  const esm = fileURLToPath(new URL('../node_modules/rxjs/dist/esm/', import.meta.url));
  return {
    name: 'rxjs-esm',
    setup(b) {
      b.onResolve({ filter: /^rxjs(\/[a-z]+)?$/ }, (args) => ({
        path: `${esm}${args.path === 'rxjs' ? 'index.js' : `${args.path.slice(5)}/index.js`}`,
      }));
    },
  };
}

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

execFileSync(
  process.execPath,
  [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'],
  { stdio: 'inherit' },
);
