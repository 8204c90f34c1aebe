/**
 * The error thrown when a time value does not parse. Messages are Go's, byte for byte, so logs
 * read like the reference agent's:
 *
 *   parsing time "2024-13-01" as "2006-01-02": cannot parse "13-01" as "01"   (shape)
 *   parsing time "2024-02-30": day out of range                                (range)
 *   parsing time "2024-01-02x": extra text: "x"                                (trailing text)
 */
export class TimeParseError extends Error {
  constructor(
    message: string,
    /** The layout, when a layout parse failed. */
    readonly layout?: string,
    /** The whole value being parsed. */
    readonly value?: string,
  ) {
    super(message);
    this.name = 'TimeParseError';
  }

  /** Go's ParseError without a message: the value element did not match the layout element. */
  static mismatch(layout: string, value: string, layoutElem: string, valueElem: string): TimeParseError {
    return new TimeParseError(
      `parsing time ${goQuote(value)} as ${goQuote(layout)}: cannot parse ${goQuote(valueElem)} as ${goQuote(layoutElem)}`,
      layout,
      value,
    );
  }

  /** Go's ParseError with a message (`: day out of range`, `: extra text: "x"`). */
  static withDetail(layout: string, value: string, detail: string): TimeParseError {
    return new TimeParseError(`parsing time ${goQuote(value)}${detail}`, layout, value);
  }
}

const encoder = new TextEncoder();

/**
 * Go's time-package `quote`: double quotes, `"` and `\` escaped, and every byte of a control or
 * non-ASCII character written as `\xNN` (it is not strconv.Quote).
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const b of encoder.encode(ch)) out += '\\x' + b.toString(16).padStart(2, '0');
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return out + '"';
}
