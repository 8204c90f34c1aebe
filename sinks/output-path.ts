/**
 * The checks an echo sink's output path gets when the component is built, so that `rivulet
 * validate` reports what would fail at start without creating or opening anything.
 */
import type { Block } from '../lib/config/ast.js';
import type { ComponentArgs } from '../core/runtime/component.js';
import { ConfigError } from '../lib/config/errors.js';
import { attributePos } from '../lib/loki/config.js';

/**
 * The string attribute `field` of `args` as a path, rejected when it holds a NUL: Go's open fails
 * on one with EINVAL, and Node's file streams throw from deep inside when they open it.
 */
export function outputPath(args: ComponentArgs, field: string): string {
  return checkedOutputPath(args.values[field] as string, field, args.block, args.path);
}

/** The same check for a path given from code or decoded from `block` (which, when given, places the error). */
export function checkedOutputPath(path: string, field: string, block: Block | undefined, blockPath: readonly string[]): string {
  if (path.includes('\0')) {
    throw new ConfigError(
      `open ${JSON.stringify(path)}: invalid argument (a path cannot hold a NUL character)`,
      attributePos(block, field),
      blockPath,
    );
  }
  return path;
}
