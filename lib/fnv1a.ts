/** FNV-1a (32-bit): the stable hash that spreads streams over partitions (JetStream subjects, pipeline threads). */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a, 32 bits, over the UTF-8 encoding of `text` (encoded on the fly, nothing allocated).
 * `seed` continues a hash over several texts: `fnv1a32(b, fnv1a32(a))` is the hash of `a` then `b`.
 */
export function fnv1a32(text: string, seed: number = FNV_OFFSET): number {
  // The byte steps are written out, not a helper closure: this runs for every entry a pipeline
  // spreads over threads, and a closure over `hash` kept it in a heap-allocated context.
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      hash = Math.imul(hash ^ c, FNV_PRIME);
      continue;
    }
    if (c < 0x800) {
      hash = Math.imul(hash ^ (0xc0 | (c >> 6)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | (c & 0x3f)), FNV_PRIME);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
        hash = Math.imul(hash ^ (0xf0 | (c >> 18)), FNV_PRIME);
        hash = Math.imul(hash ^ (0x80 | ((c >> 12) & 0x3f)), FNV_PRIME);
        hash = Math.imul(hash ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
        hash = Math.imul(hash ^ (0x80 | (c & 0x3f)), FNV_PRIME);
        continue;
      }
    }
    // A lone surrogate is written as U+FFFD, as Buffer.from(text) would.
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    hash = Math.imul(hash ^ (0xe0 | (c >> 12)), FNV_PRIME);
    hash = Math.imul(hash ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
    hash = Math.imul(hash ^ (0x80 | (c & 0x3f)), FNV_PRIME);
  }
  return hash >>> 0;
}
