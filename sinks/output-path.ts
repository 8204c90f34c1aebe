/**
 * The checks an echo sink's output path gets when the component is built, so that `rivulet
 * validate` reports what would fail at start without creating or opening anything.
 */
import type { Checks } from '../lib/config/schema.js';

/**
 * The string attribute `field` as a path, rejected when it holds a NUL: Go's open fails on one
 * with EINVAL, and Node's file streams throw from deep inside when they open it.
 */
export function outputPath(path: string, field: string, checks: Checks): string {
  if (path.includes('\0')) checks.fail(`open ${JSON.stringify(path)}: invalid argument (a path cannot hold a NUL character)`, field);
  return path;
}
