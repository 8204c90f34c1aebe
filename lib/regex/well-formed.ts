/**
 * RE2 works on UTF-8, and the `re2` package encodes a lone surrogate as U+FFFD before matching.
 * Every input is put through the same replacement (same length, so offsets are unchanged) before
 * any backend sees it.
 */

interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

const native = typeof (String.prototype as Partial<WellFormedString>).toWellFormed === 'function';

/** A lone surrogate: the JS form of bytes that are not UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function toWellFormed(input: string): string {
  if (native) {
    const s = input as unknown as WellFormedString;
    return s.isWellFormed() ? input : s.toWellFormed();
  }
  return input.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * Whether `input` holds no lone surrogate, so it encodes to UTF-8 as it is: the engine's own
 * check where it has one (a scan that allocates nothing), else a search for one.
 */
export function isWellFormed(input: string): boolean {
  if (native) return (input as unknown as WellFormedString).isWellFormed();
  LONE_SURROGATE.lastIndex = 0;
  return !LONE_SURROGATE.test(input);
}
