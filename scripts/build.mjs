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
 * - The CLI's bundle: loading a few hundred modules (ours, rxjs's CommonJS tree, Koa, connect, …)
 *   costs a command's start-up a second, so esbuild also bundles the CLI (`dist/bin/rivulet.js`, the
 *   package's bin), its two worker threads, the library face and `rivulet/testing` with every
 *   pure-JavaScript dependency into dist/cli-bundle, with code splitting so they share one copy of
 *   every module. Entries re-exporting the whole of rxjs (its ES module build), `rxjs/operators`,
 *   `rxjs/testing` and prom-client complete the bundle's copies: a custom stage module the CLI
 *   loads has `rivulet`, `rxjs` and `prom-client` resolved to them (core/package-aliases.ts), so it
 *   meets the CLI's stage registry and RxJS. `import 'rivulet'` still gets the unbundled modules.
 * - The playground's browser UI: Vite builds it into dist/playground/web, served as static files.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
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

/** Where the CLI's bundle goes, and the package specifiers its entries stand for, relative to it. */
const BUNDLE = 'cli-bundle';
const BUNDLE_ENTRIES = {
  rivulet: './index.js',
  'rivulet/testing': './testing/index.js',
  rxjs: './rxjs.js',
  'rxjs/operators': './rxjs-operators.js',
  'rxjs/testing': './rxjs-testing.js',
  'prom-client': './prom-client.js',
};

async function bundleCli() {
  await build({
    entryPoints: {
      'bin/rivulet': 'bin/rivulet.ts',
      [`${BUNDLE}/index`]: 'index.ts',
      [`${BUNDLE}/testing/index`]: 'testing/index.ts',
      // Beside the shared chunks, where core/threads/worker-modules.ts and playground/run-pool.ts look.
      [`${BUNDLE}/pipeline-worker`]: 'core/threads/pipeline-worker.ts',
      // Beside the shared chunks too, where core/shards/shard-worker-modules.ts looks.
      [`${BUNDLE}/shard-worker`]: 'core/shards/shard-worker.ts',
      [`${BUNDLE}/playground/run-worker`]: 'playground/run-worker.ts',
      [`${BUNDLE}/rxjs`]: 'reexport:rxjs',
      [`${BUNDLE}/rxjs-operators`]: 'reexport:rxjs/operators',
      [`${BUNDLE}/rxjs-testing`]: 'reexport:rxjs/testing',
      [`${BUNDLE}/prom-client`]: 'reexport:prom-client',
    },
    outdir: 'dist',
    // In the bundle's folder itself: one folder below dist/, where the playground looks for dist/playground/web.
    chunkNames: `${BUNDLE}/[name]-[hash]`,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    mainFields: ['module', 'main'],
    external: ['re2', 'fast-check', 'vite', 'tsx'],
    define: { RIVULET_BUNDLE_ENTRIES: JSON.stringify(JSON.stringify(BUNDLE_ENTRIES)) },
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: 'linked',
    // Bundled CommonJS dependencies call require(); give the ESM output one.
    banner: { js: "import { createRequire as __rivuletRequire } from 'node:module'; const require = __rivuletRequire(import.meta.url);" },
    logLevel: 'warning',
    plugins: [rxjsEsm(), reexports()],
  });
}

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

/**
 * `reexport:PACKAGE`: a module exporting everything the package exports. A CommonJS package's
 * names are listed one by one (esbuild cannot see them through `export *`).
 */
function reexports() {
  const require = createRequire(import.meta.url);
  return {
    name: 'reexports',
    setup(b) {
      b.onResolve({ filter: /^reexport:/ }, (args) => ({ path: args.path.slice('reexport:'.length), namespace: 'reexport' }));
      b.onLoad({ filter: /.*/, namespace: 'reexport' }, ({ path }) => ({
        contents: path.startsWith('rxjs')
          ? `export * from '${path}';`
          : `export { ${Object.keys(require(path)).join(', ')} } from '${path}';`,
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

// Last: tsc writes every file even when it reports a type error, and then fails the build.
try {
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'],
    { stdio: 'inherit' },
  );
} finally {
  // After tsc: the bundle's bin replaces the one tsc wrote.
  await bundleCli();
  chmodSync('dist/bin/rivulet.js', 0o755);
}
