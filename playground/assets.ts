import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A built file of the browser UI. */
export interface Asset {
  readonly body: string | Uint8Array;
  readonly type: string;
}

/** The browser UI's files by URL path (`/index.html`, `/assets/index-3f2a.js`). */
export type Assets = ReadonlyMap<string, Asset>;

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  json: 'application/json',
};

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * The browser UI. The installed package serves the files `npm run build` wrote with Vite
 * (dist/playground/web); a source checkout run under a TypeScript loader bundles the UI sources
 * in memory instead, so editing them needs no rebuild. Vite is a build tool: the installed
 * package never loads it.
 */
export async function buildAssets(): Promise<Assets> {
  const built = builtWebRoot();
  if (built) return readAssets(built);
  return bundleInMemory(join(HERE, 'web'));
}

/** The built UI beside the running bundle (dist/ or one folder below it), if this is the built package. */
function builtWebRoot(): string | undefined {
  if (import.meta.url.endsWith('.ts')) return undefined;
  for (const base of [HERE, dirname(HERE)]) {
    const candidate = join(base, 'playground', 'web');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`the playground's browser UI is missing from the package (looked beside ${HERE})`);
}

function readAssets(rootDir: string): Assets {
  const assets = new Map<string, Asset>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else assets.set(`/${relative(rootDir, file).split(sep).join('/')}`, { body: readFileSync(file), type: typeOf(name) });
    }
  };
  walk(rootDir);
  return assets;
}

async function bundleInMemory(webRoot: string): Promise<Assets> {
  const { build } = await import('vite');
  const result = await build({
    root: webRoot,
    base: '/',
    configFile: false,
    envDir: false,
    publicDir: false,
    logLevel: 'warn',
    build: { write: false, outDir: 'dist', emptyOutDir: false, sourcemap: false, reportCompressedSize: false, chunkSizeWarningLimit: 2048 },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Array<{
    output: Array<{ type: 'chunk'; fileName: string; code: string } | { type: 'asset'; fileName: string; source: string | Uint8Array }>;
  }>;
  const assets = new Map<string, Asset>();
  for (const out of outputs) {
    for (const file of out.output)
      assets.set(`/${file.fileName}`, { body: file.type === 'chunk' ? file.code : file.source, type: typeOf(file.fileName) });
  }
  if (!assets.has('/index.html')) throw new Error('playground build produced no index.html');
  return assets;
}

function typeOf(fileName: string): string {
  return TYPES[fileName.slice(fileName.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
}
