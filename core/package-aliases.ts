import { register } from 'node:module';

/**
 * The resolve hook: a bare specifier named in the targets resolves to its URL, anything else as
 * before. Further hooks (tsx's) chain through `next`. It is a data: URL so the package needs no
 * file for it; the targets come through `initialize`'s data.
 */
const RESOLVE_HOOK = `let targets = {};
export function initialize(data) { targets = data; }
export async function resolve(specifier, context, next) {
  return next(Object.hasOwn(targets, specifier) ? targets[specifier] : specifier, context);
}`;

/**
 * Makes every module this thread loads from now on resolve the bare specifiers in `targets`
 * (`rivulet`, `rxjs`, …) to the given URLs, whoever imports them: how a custom stage module
 * reaches the same stage registry and the same RxJS as the code that loads it.
 */
export function aliasPackages(targets: Readonly<Record<string, string>>): void {
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, { data: { ...targets } });
}

/**
 * The bundled CLI's entries by the specifier each stands for (`{"rivulet":"./index.js",…}`, paths
 * relative to the bundle's folder), as JSON text: the build defines it (a string literal stays in
 * place, where an object would become a module of its own that the bin loads on start); everywhere
 * else (the library's unbundled modules, the sources) it is not defined.
 */
declare const RIVULET_BUNDLE_ENTRIES: string | undefined;

let aliasedToBundle = false;

/**
 * In the bundled CLI, before the first user module loads: aliases `rivulet`, `rivulet/testing`,
 * `rxjs` (and its entries) and `prom-client` to the bundle's own copies, so a stage module's
 * `import { defineStage } from 'rivulet'` registers into the registry the CLI reads and its RxJS
 * operators and Observables are the CLI's. Registered once per thread, and only when a user module
 * is loaded: start-up without one pays nothing. Outside the bundle it does nothing (the library's
 * unbundled modules and the user's imports already meet in node_modules).
 */
export function aliasPackagesToBundle(): void {
  if (aliasedToBundle || typeof RIVULET_BUNDLE_ENTRIES === 'undefined' || RIVULET_BUNDLE_ENTRIES === undefined) return;
  aliasedToBundle = true;
  // This code runs from one of the bundle's shared chunks, which sit in the bundle's folder.
  const bundle = new URL('./', import.meta.url);
  const entries = JSON.parse(RIVULET_BUNDLE_ENTRIES) as Record<string, string>;
  aliasPackages(Object.fromEntries(Object.entries(entries).map(([specifier, path]) => [specifier, new URL(path, bundle).href])));
}
