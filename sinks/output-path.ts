/**
 * The checks an echo sink's output path gets when the component is built, so that `rivulet
 * validate` reports what would fail at start without creating or opening anything.
 */
import type { ComponentArgs } from '../core/runtime/component.js';
import { ConfigError } from '../lib/config/errors.js';
import { attributePos } from '../lib/loki/config.js';

/**
 * The string attribute `field` of `args` as a path, rejected when it holds a NUL: Go's open fails
 * on one with EINVAL, and Node's file streams throw from deep inside when they open it.
 */
export function outputPath(args: ComponentArgs, field: string): string {
  const path = args.values[field] as string;
  if (path.includes('\0')) {
    throw new ConfigError(
      `open ${JSON.stringify(path)}: invalid argument (a path cannot hold a NUL character)`,
      attributePos(args.block, field),
      args.path,
    );
  }
  return path;
}
