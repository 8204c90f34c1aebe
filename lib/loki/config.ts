/**
 * Small config helpers shared by the log push source and the log writer: byte sizes written as
 * strings (`"1MiB"`, read as the reference reads them) and positioned errors for attributes of
 * nested blocks.
 */
import type { Block, Statement } from '../config/ast.js';
import { parseBase2Bytes } from '../go/bytesize.js';
import { ConfigError, type Position } from '../config/errors.js';

/** Where attribute `name` is written in `block`, else where the block is. */
export function attributePos(block: Block | undefined, name: string): Position | undefined {
  if (!block) return undefined;
  return block.body.find((s: Statement) => s.kind === 'attribute' && s.name === name)?.pos ?? block.pos;
}

/** The nested blocks of `block` named `name`, in written order. */
export function nestedBlocks(block: Block | undefined, name: string): Block[] {
  return (block?.body ?? []).filter((s): s is Block => s.kind === 'block' && s.name === name);
}

/**
 * A byte size attribute as a number of bytes. `min` is the smallest accepted value; a size that
 * does not parse or is too small is a ConfigError at the attribute.
 */
export function byteSize(text: string, name: string, block: Block | undefined, path: readonly string[], min = 0): number {
  let bytes: bigint;
  try {
    bytes = parseBase2Bytes(text);
  } catch (err) {
    throw new ConfigError(`attribute "${name}": ${(err as Error).message}`, attributePos(block, name), path);
  }
  if (bytes < BigInt(min))
    throw new ConfigError(
      `attribute "${name}": must be at least ${min} bytes, got ${JSON.stringify(text)}`,
      attributePos(block, name),
      path,
    );
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ConfigError(`attribute "${name}": ${JSON.stringify(text)} is too large`, attributePos(block, name), path);
  return Number(bytes);
}

const NS_PER_MS = 1_000_000n;

/** A decoded duration (nanoseconds) in whole milliseconds. */
export function durationMs(ns: unknown): number {
  return Number((ns as bigint) / NS_PER_MS);
}
