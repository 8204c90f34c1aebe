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

export function toWellFormed(input: string): string {
  if (native) {
    const s = input as unknown as WellFormedString;
    return s.isWellFormed() ? input : s.toWellFormed();
  }
  return input.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
