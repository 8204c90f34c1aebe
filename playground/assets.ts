import { fileURLToPath } from 'node:url';
import { build } from 'vite';

/** A built file of the browser UI. */
export interface Asset {
  readonly body: string | Uint8Array;
  readonly type: string;
}

/** The browser UI's files by URL path (`/index.html`, `/assets/index-3f2a.js`). */
export type Assets = ReadonlyMap<string, Asset>;

const WEB_ROOT = fileURLToPath(new URL('./web', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  json: 'application/json',
};

/**
 * Bundles the browser UI with Vite into memory. Building at start (about a second or two) means
 * a fresh clone needs no build step and no files are written anywhere.
 */
export async function buildAssets(): Promise<Assets> {
  const result = await build({
    root: WEB_ROOT,
    base: '/',
    configFile: false,
    envDir: false,
    publicDir: false,
    logLevel: 'warn',
    build: { write: false, outDir: 'dist', emptyOutDir: false, sourcemap: false, reportCompressedSize: false, chunkSizeWarningLimit: 2048 },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Array<{ output: Array<{ type: 'chunk'; fileName: string; code: string } | { type: 'asset'; fileName: string; source: string | Uint8Array }> }>;
  const assets = new Map<string, Asset>();
  for (const out of outputs) {
    for (const file of out.output) {
      const ext = file.fileName.slice(file.fileName.lastIndexOf('.') + 1);
      assets.set(`/${file.fileName}`, { body: file.type === 'chunk' ? file.code : file.source, type: TYPES[ext] ?? 'application/octet-stream' });
    }
  }
  if (!assets.has('/index.html')) throw new Error('playground build produced no index.html');
  return assets;
}
