import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: string | undefined;

/**
 * The installed package's version, read from its package.json: the nearest one above this module
 * named `rivulet` (a source checkout and the built bundle sit at different depths, and a worker
 * thread's bundle at yet another), or `unknown`. Read once, on first use.
 */
export function packageVersion(): string {
  found ??= findPackageVersion();
  return found;
}

function findPackageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'rivulet' && pkg.version) return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
