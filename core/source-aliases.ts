import { aliasPackages } from './package-aliases.js';

/**
 * Run from the sources (tests, a checkout under tsx), a stage module's `import … from 'rivulet'`
 * must reach these same sources, as the test runner's aliases make it do on the main thread; the
 * package's own name would load the built copy, with a stage registry of its own. A worker thread
 * has no such aliases, so it registers this resolve hook before loading stage modules.
 */
export function aliasPackageToSources(root: URL): void {
  aliasPackages({ rivulet: `${root.href}index.ts`, 'rivulet/testing': `${root.href}testing/index.ts` });
}
