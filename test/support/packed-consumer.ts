/**
 * The package as a user gets it: `npm pack` of the built tree, and the tarball installed into a
 * new project beside the packages the user's own program imports. The install takes packages
 * from npm's cache (`npm ci` filled it) with install scripts off, and copies in the `re2` addon
 * already built for this checkout, so nothing is compiled or downloaded again.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

export interface PackedTarball {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

export interface Consumer {
  /** The work directory holding the tarball and the project. */
  readonly work: string;
  /** The new project's directory. */
  readonly dir: string;
  readonly packed: PackedTarball;
}

/** The version this checkout has installed of a package, to install the same one in the consumer. */
export function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * Packs the built tree and installs it, with `packages` (names; the versions this checkout has),
 * into a new ES module project under the system's temporary directory.
 */
export async function installPackedConsumer(packages: readonly string[]): Promise<Consumer> {
  if (!existsSync(join(ROOT, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
  const work = mkdtempSync(join(tmpdir(), 'rivulet-package-'));
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT });
  const packed = (JSON.parse(stdout) as PackedTarball[])[0]!;
  const dir = join(work, 'consumer');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      join(work, packed.filename),
      ...packages.map((name) => `${name}@${installedVersion(name)}`),
    ],
    { cwd: dir, timeout: 120_000 },
  );
  const addon = 'node_modules/re2/build/Release/re2.node';
  mkdirSync(dirname(join(dir, addon)), { recursive: true });
  copyFileSync(join(ROOT, addon), join(dir, addon));
  return { work, dir, packed };
}

/** A port nothing listens on now, for a server the test starts in another process. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
