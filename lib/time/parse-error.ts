/**
 * The error thrown when a time value does not parse. Messages are Go's, byte for byte, so logs
 * read like the reference agent's:
 *
 *   parsing time "2024-13-01" as "2006-01-02": cannot parse "13-01" as "01"   (shape)
 *   parsing time "2024-02-30": day out of range                                (range)
 *   parsing time "2024-01-02x": extra text: "x"                                (trailing text)
 */
import { goTimeQuote } from '../go/duration.js';
import { DataError } from '../data-error.js';

export class TimeParseError extends DataError {
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
      `parsing time ${goTimeQuote(value)} as ${goTimeQuote(layout)}: cannot parse ${goTimeQuote(valueElem)} as ${goTimeQuote(layoutElem)}`,
      layout,
      value,
    );
  }

  /** Go's ParseError with a message (`: day out of range`, `: extra text: "x"`). */
  static withDetail(layout: string, value: string, detail: string): TimeParseError {
    return new TimeParseError(`parsing time ${goTimeQuote(value)}${detail}`, layout, value);
  }
}
