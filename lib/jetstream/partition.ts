/**
 * Which partition a stream's entries go to: FNV-1a (32-bit) of the UTF-8 bytes of the stream's
 * label text (`{a="1", b="2"}`, names sorted, as the kernel renders stream keys), modulo the
 * partition count. Writers and readers of a stream must agree on it, so it never changes: a stream
 * always maps to one partition, which is what keeps its entries in order across instances.
 *
 * ```ts
 * partitionOf('{app="web"}', 12); // always the same number in [0, 12)
 * ```
 */

import { fnv1a32 } from '../fnv1a.js';

/** The partition in [0, partitions) of the stream whose label text is `labelText`. */
export function partitionOf(labelText: string, partitions: number): number {
  return fnv1a32(labelText) % partitions;
}

/** The subject a partition's messages are published on: `<prefix>.<partition>`. */
export function partitionSubject(prefix: string, partition: number): string {
  return `${prefix}.${partition}`;
}

/**
 * What a writer that creates the stream records in its description, so readers can find the
 * subject prefix and partition count without being told: `rivulet logs: subject_prefix=P partitions=N`.
 */
export function layoutDescription(prefix: string, partitions: number): string {
  return `rivulet logs: subject_prefix=${prefix} partitions=${partitions}`;
}

/** Reads a description written by `layoutDescription`; undefined for any other text. */
export function parseLayoutDescription(description: string | undefined): { prefix: string; partitions: number } | undefined {
  const match = /^rivulet logs: subject_prefix=(\S+) partitions=([1-9][0-9]*)$/.exec(description ?? '');
  return match ? { prefix: match[1]!, partitions: Number(match[2]) } : undefined;
}
