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

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a, 32 bits, over the UTF-8 encoding of `text` (encoded on the fly, nothing allocated). */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  const mix = (byte: number) => {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      mix(c);
      continue;
    }
    if (c < 0x800) {
      mix(0xc0 | (c >> 6));
      mix(0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
        mix(0xf0 | (c >> 18));
        mix(0x80 | ((c >> 12) & 0x3f));
        mix(0x80 | ((c >> 6) & 0x3f));
        mix(0x80 | (c & 0x3f));
        continue;
      }
    }
    // A lone surrogate is written as U+FFFD, as Buffer.from(text) would.
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    mix(0xe0 | (c >> 12));
    mix(0x80 | ((c >> 6) & 0x3f));
    mix(0x80 | (c & 0x3f));
  }
  return hash >>> 0;
}

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
