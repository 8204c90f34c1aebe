/**
 * The `format` rules of `stage.timestamp`: named shorthands, the `Unix*` formats, custom Go
 * layouts with an optional location, and the no-year rule (syslog-style layouts get the
 * current year, with New Year rollover).
 *
 * @example
 *   parseTimestamp('RFC3339', '2012-11-01T22:08:41-04:00', { nowNs }) // → 1351822121000000000n
 *   parseTimestamp('Jan 02 15:04:05', 'Jul 15 01:02:03', { nowNs }) // → this year's 15 July
 */
import { civilFromDays, joinEpochNs, SECONDS_PER_DAY, splitEpochNs } from './civil.js';
import { compileLayout, parseCompiled, type CompiledLayout, type ParsedTime } from './layout.js';
import { dateInLocation, loadLocation, localLocation, UTC, type TimeLocation } from './location.js';
import { TimeParseError } from './parse-error.js';

/**
 * The shorthand names `stage.timestamp` accepts and their Go layouts. Only these ten: other Go
 * constant names (`Kitchen`, `Stamp`, `DateTime`, …) are taken as literal layouts, as the
 * reference does.
 */
export const TIMESTAMP_SHORTHANDS: Readonly<Record<string, string>> = {
  ANSIC: 'Mon Jan _2 15:04:05 2006',
  UnixDate: 'Mon Jan _2 15:04:05 MST 2006',
  RubyDate: 'Mon Jan 02 15:04:05 -0700 2006',
  RFC822: '02 Jan 06 15:04 MST',
  RFC822Z: '02 Jan 06 15:04 -0700',
  RFC850: 'Monday, 02-Jan-06 15:04:05 MST',
  RFC1123: 'Mon, 02 Jan 2006 15:04:05 MST',
  RFC1123Z: 'Mon, 02 Jan 2006 15:04:05 -0700',
  RFC3339: '2006-01-02T15:04:05Z07:00',
  RFC3339Nano: '2006-01-02T15:04:05.999999999Z07:00',
};

export interface ParseTimestampOptions {
  /**
   * IANA zone name (or `Local`, `UTC`) for custom layouts; ignored by shorthands and `Unix*`.
   * Undefined means no location configured. `""` is UTC, as Go's LoadLocation reads it.
   */
  readonly location?: string;
  /** The wall clock, used only by layouts without a year. */
  readonly nowNs: bigint;
}

/** A `format` compiled once (at stage build time) and applied to many values. */
export interface TimestampParser {
  /** The instant `value` denotes, in nanoseconds since the epoch; throws TimeParseError. */
  parse(value: string, nowNs: bigint): bigint;
}

/**
 * Compiles a `stage.timestamp` format. Throws UnknownLocationError for an unknown location
 * (even when the format ignores it, as the stage validates the location first).
 */
export function compileTimestampFormat(format: string, location?: string): TimestampParser {
  const loc = location === undefined ? undefined : loadLocation(location);
  const shorthand = Object.hasOwn(TIMESTAMP_SHORTHANDS, format) ? TIMESTAMP_SHORTHANDS[format] : undefined;
  if (shorthand !== undefined) {
    // Shorthands ignore the location: Go's time.Parse, matching zones against the local zone.
    const compiled = compileLayout(shorthand);
    return { parse: (value) => parseCompiled(compiled, value, UTC, localLocation()).epochNs };
  }
  switch (format) {
    case 'Unix':
      return { parse: parseUnixSeconds };
    case 'UnixMs':
      return { parse: (value) => parseUnixScaled(value, 1_000_000n) };
    case 'UnixUs':
      return { parse: (value) => parseUnixScaled(value, 1_000n) };
    case 'UnixNs':
      return { parse: (value) => parseUnixScaled(value, 1n) };
  }
  const compiled = compileLayout(format);
  // The reference tests the layout text for "06" (so "2006" counts too), not for a year chunk.
  if (format.includes('06')) {
    return { parse: (value) => parseCustom(compiled, value, loc).epochNs };
  }
  return { parse: (value, nowNs) => parseWithoutYear(compiled, value, loc, nowNs) };
}

const parserCache = new Map<string, TimestampParser>();
const PARSER_CACHE_LIMIT = 256;

/**
 * Parses a timestamp with one `stage.timestamp` format. Throws TimeParseError on failure and
 * UnknownLocationError for an unknown location.
 */
export function parseTimestamp(format: string, value: string, options: ParseTimestampOptions): bigint {
  const key = options.location === undefined ? `\u0001${format}` : `${options.location}\u0000${format}`;
  let parser = parserCache.get(key);
  if (parser === undefined) {
    parser = compileTimestampFormat(format, options.location);
    if (parserCache.size >= PARSER_CACHE_LIMIT) parserCache.clear();
    parserCache.set(key, parser);
  }
  return parser.parse(value, options.nowNs);
}

/**
 * Tries `formats` in order (the stage's `format` first, then `fallback_formats`); the first
 * success wins. When all fail, throws the error of the first format, as the reference reports.
 */
export function parseTimestampWithFallbacks(formats: readonly string[], value: string, options: ParseTimestampOptions): bigint {
  let firstError: unknown;
  for (const format of formats) {
    try {
      return parseTimestamp(format, value, options);
    } catch (err) {
      if (!(err instanceof TimeParseError)) throw err;
      firstError ??= err;
    }
  }
  throw firstError ?? new TimeParseError('no timestamp formats given');
}

/**
 * Checks a `location` value as Go's time.LoadLocation would: `""`, `UTC`, `Local` and IANA zone
 * names (case-sensitive) pass; anything else throws UnknownLocationError
 * (`unknown time zone America/Canada`).
 */
export function validateLocation(name: string): void {
  loadLocation(name);
}

function parseCustom(compiled: CompiledLayout, value: string, location: TimeLocation | undefined): ParsedTime {
  if (location !== undefined) return parseCompiled(compiled, value, location, location);
  return parseCompiled(compiled, value, UTC, localLocation());
}

/**
 * The no-year rule: parse (landing in year 0), then move to the current year — the previous
 * one for a December value seen in January, the next one for a January value seen in December.
 * The move is wall-clock arithmetic in the parsed time's location (Go's AddDate), so the final
 * offset is that of the final date, and 29 February becomes 1 March in a non-leap year.
 * "Now" is read in the process-local zone, as the reference's `time.Now()` is.
 */
function parseWithoutYear(compiled: CompiledLayout, value: string, location: TimeLocation | undefined, nowNs: bigint): bigint {
  const parsed = parseCustom(compiled, value, location);
  if (parsed.year !== 0) {
    throw new TimeParseError(`timestamp '${value}' is expected to not contain the year date component`);
  }
  const now = yearAndMonth(nowNs, localLocation());
  let year = now.year;
  if (parsed.month === 12 && now.month === 1) year = now.year - 1;
  else if (parsed.month === 1 && now.month === 12) year = now.year + 1;
  const moved = dateInLocation(
    parsed.location,
    parsed.year + year,
    parsed.month,
    parsed.day,
    parsed.hour,
    parsed.minute,
    parsed.second,
    parsed.nanosecond,
  );
  return joinEpochNs(moved.seconds, moved.nanos);
}

function yearAndMonth(epochNs: bigint, location: TimeLocation): { year: number; month: number } {
  const { seconds } = splitEpochNs(epochNs);
  const date = civilFromDays(Math.floor((seconds + location.offsetAt(seconds)) / SECONDS_PER_DAY));
  return { year: date.year, month: date.month };
}

const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(s, 10, 64), with its error texts. */
function parseInt64(s: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(s)) {
    throw new TimeParseError(`strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
  }
  const n = BigInt(s);
  if (n < MIN_INT64 || n > MAX_INT64) {
    throw new TimeParseError(`strconv.ParseInt: parsing ${JSON.stringify(s)}: value out of range`);
  }
  return n;
}

const POWERS_OF_TEN = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/**
 * `Unix`: whole seconds, or seconds and a fraction split at the single `.` and read as two
 * separate integers. The fraction is scaled by its written length and always added, so
 * `-1.5` is −1 s + 0.5 s = −0.5 s; more than nine fraction digits are truncated.
 */
function parseUnixSeconds(value: string): bigint {
  const dot = value.indexOf('.');
  if (dot < 0 || value.indexOf('.', dot + 1) >= 0) return parseInt64(value) * 1_000_000_000n;
  const seconds = parseInt64(value.slice(0, dot));
  const fractionText = value.slice(dot + 1);
  const fraction = parseInt64(fractionText);
  // float64(frac) * math.Pow(10, 9-len) truncated to int64, exactly as the reference computes
  // it (negative powers are 1/10^k, which Go's Pow also produces for these sizes).
  const exponent = 9 - fractionText.length;
  let scaled: number;
  if (exponent >= 0) scaled = Number(fraction) * POWERS_OF_TEN[exponent]!;
  else if (-exponent < POWERS_OF_TEN.length) scaled = Number(fraction) * (1 / POWERS_OF_TEN[-exponent]!);
  else scaled = 0;
  return seconds * 1_000_000_000n + BigInt(Math.trunc(scaled));
}

/** `UnixMs`/`UnixUs`/`UnixNs`: an integer times the unit, wrapping on int64 overflow as Go does. */
function parseUnixScaled(value: string, nanosPerUnit: bigint): bigint {
  return BigInt.asIntN(64, parseInt64(value) * nanosPerUnit);
}
