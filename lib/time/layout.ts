/**
 * Go time layouts: `time.Parse` / `time.ParseInLocation` and `Time.Format` over nanosecond
 * bigint instants, following Go's `time/format.go` rule for rule — including its quirks:
 * a fraction right after the seconds is accepted even when the layout has none, `.999` is
 * optional, month and weekday names match case-insensitively, an unknown zone abbreviation
 * parses with offset 0, and error texts are Go's.
 *
 * @example
 *   parseLayout('02/Jan/2006:15:04:05 -0700', '10/Oct/2000:13:55:36 -0700').epochNs
 *   // → 971211336000000000n
 *   formatLayout('Mon Jan _2 15:04:05 2006', 0n) // → 'Thu Jan  1 00:00:00 1970'
 */
import { goTimeQuote } from '../go/duration.js';
import { Std, layoutSteps, stepsHaveYear, type LayoutStep } from './chunks.js';
import {
  civilFromDays,
  daysBeforeMonth,
  daysFromCivil,
  daysInMonth,
  isLeapYear,
  isValidDateTime,
  joinEpochNs,
  SECONDS_PER_DAY,
  splitEpochNs,
  wallSecondsFromFields,
  weekdayOfDays,
} from './civil.js';
import { UTC, epochSecondsFromWall, fixedZone, loadLocation, localLocation, type TimeLocation } from './location.js';
import { TimeParseError } from './parse-error.js';

export { TimeParseError } from './parse-error.js';

/** Go's `time.RFC3339` and `time.RFC3339Nano` layouts (parsed through a fast path, as Go does). */
export const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';
export const RFC3339_NANO_LAYOUT = '2006-01-02T15:04:05.999999999Z07:00';

/** A parsed time: the instant plus Go's view of it (wall clock in the result's location). */
export interface ParsedTime {
  /** Nanoseconds since the Unix epoch. */
  readonly epochNs: bigint;
  /** Wall-clock fields in `location` (Go's `t.Date()`, `t.Clock()`, `t.Nanosecond()`). */
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly nanosecond: number;
  /** Offset east of UTC in seconds at this instant in `location`. */
  readonly offsetSeconds: number;
  /**
   * The location Go attaches to the result: UTC, the parse location, the local zone, or a
   * fabricated fixed zone (a numeric offset or abbreviation the location does not know).
   */
  readonly location: TimeLocation;
  /** Whether the layout has a year field (`2006` or `06`). */
  readonly hadYear: boolean;
}

export interface ParseLayoutOptions {
  /**
   * IANA zone name, `Local` or `UTC` (`""` is UTC, as Go's LoadLocation): parse as Go's
   * `ParseInLocation` — zone-less values are in this zone and abbreviations/offsets are matched
   * against it. Without it, parse as Go's `Parse`: zone-less values are UTC and abbreviations
   * are matched against the process-local zone.
   */
  readonly location?: string;
  /** Without `location`: match abbreviations/offsets against UTC instead of the local zone. */
  readonly defaultZone?: 'UTC';
}

/** A layout split into steps once, reusable for many values. */
export interface CompiledLayout {
  readonly layout: string;
  readonly steps: readonly LayoutStep[];
  readonly hasYear: boolean;
  readonly isRFC3339: boolean;
}

const COMPILED_CACHE_LIMIT = 512;
const compiledCache = new Map<string, CompiledLayout>();

/** Splits a layout into its steps (memoised). */
export function compileLayout(layout: string): CompiledLayout {
  let compiled = compiledCache.get(layout);
  if (compiled === undefined) {
    const steps = layoutSteps(layout);
    compiled = {
      layout,
      steps,
      hasYear: stepsHaveYear(steps),
      isRFC3339: layout === RFC3339_LAYOUT || layout === RFC3339_NANO_LAYOUT,
    };
    if (compiledCache.size >= COMPILED_CACHE_LIMIT) compiledCache.clear();
    compiledCache.set(layout, compiled);
  }
  return compiled;
}

/**
 * Parses `value` with a Go layout. Throws TimeParseError with Go's message on failure.
 * See ParseLayoutOptions for how zones are resolved.
 */
export function parseLayout(layout: string, value: string, options: ParseLayoutOptions = {}): ParsedTime {
  const compiled = compileLayout(layout);
  if (options.location !== undefined) {
    const loc = loadLocation(options.location);
    return parseCompiled(compiled, value, loc, loc);
  }
  return parseCompiled(compiled, value, UTC, options.defaultZone === 'UTC' ? UTC : localLocation());
}

/** Formats an instant with a Go layout in a location (IANA name, `Local`, `UTC`; default UTC). */
export function formatLayout(layout: string, epochNs: bigint, location?: string): string {
  return formatCompiled(compileLayout(layout), epochNs, location === undefined ? UTC : loadLocation(location));
}

// ---------------------------------------------------------------------------------------------
// Parsing

const SHORT_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const LONG_MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const SHORT_DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function digitAt(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

function isCommaOrPeriod(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c === 46 || c === 44;
}

/** Go's atoi: optional sign, then only digits (none at all reads as 0). NaN on failure. */
function goAtoi(s: string, from: number, to: number): number {
  let i = from;
  let negative = false;
  if (i < to && (s[i] === '-' || s[i] === '+')) {
    negative = s[i] === '-';
    i++;
  }
  let x = 0;
  for (; i < to; i++) {
    const d = digitAt(s, i);
    if (d < 0) return NaN;
    x = x * 10 + d;
  }
  return negative ? -x : x;
}

/** Go's case-insensitive (ASCII letters only) prefix lookup in a name table. */
function lookupName(table: readonly string[], s: string, pos: number): number {
  outer: for (let i = 0; i < table.length; i++) {
    const name = table[i]!;
    if (s.length - pos < name.length) continue;
    for (let j = 0; j < name.length; j++) {
      let c1 = s.charCodeAt(pos + j);
      let c2 = name.charCodeAt(j);
      if (c1 !== c2) {
        c1 |= 0x20;
        c2 |= 0x20;
        if (c1 !== c2 || c1 < 97 || c1 > 122) continue outer;
      }
    }
    return i;
  }
  return -1;
}

/**
 * Go's parseTimeZone: the length of a zone abbreviation at `pos`, or 0. Three upper-case
 * letters; four or five ending in T (or WITA); ChST and MeST; GMT with an optional ±hours;
 * a bare ±hours (`+03`).
 */
function zoneAbbreviationLength(s: string, pos: number): number {
  const rest = s.length - pos;
  if (rest < 3) return 0;
  if (rest >= 4 && (s.startsWith('ChST', pos) || s.startsWith('MeST', pos))) return 4;
  if (s.startsWith('GMT', pos)) return 3 + signedHoursLength(s, pos + 3);
  if (s[pos] === '+' || s[pos] === '-') return signedHoursLength(s, pos);
  let upper = 0;
  while (upper < 6 && upper < rest) {
    const c = s.charCodeAt(pos + upper);
    if (c < 65 || c > 90) break;
    upper++;
  }
  switch (upper) {
    case 5:
      return s[pos + 4] === 'T' ? 5 : 0;
    case 4:
      return s[pos + 3] === 'T' || s.startsWith('WITA', pos) ? 4 : 0;
    case 3:
      return 3;
    default:
      return 0;
  }
}

/** Go's parseSignedOffset: length of `±N` with 0 ≤ N ≤ 23 at `pos`, or 0. */
function signedHoursLength(s: string, pos: number): number {
  if (pos >= s.length || (s[pos] !== '+' && s[pos] !== '-')) return 0;
  let i = pos + 1;
  let x = 0;
  while (i < s.length && digitAt(s, i) >= 0) {
    x = x * 10 + digitAt(s, i);
    // Go fails on int64 overflow; any such value is far beyond 23 anyway.
    if (x > 1e18) return 0;
    i++;
  }
  if (i === pos + 1 || x > 23) return 0;
  return i - pos;
}

/** Scratch results of the small readers below (avoids allocating per field). */
let readNumber = 0;
let readRange = '';

/** Go's getnum: one or two digits (exactly two when fixed). Returns the next position or -1. */
function getNum(s: string, pos: number, fixed: boolean): number {
  const d0 = digitAt(s, pos);
  if (d0 < 0) return -1;
  const d1 = digitAt(s, pos + 1);
  if (d1 < 0) {
    if (fixed) return -1;
    readNumber = d0;
    return pos + 1;
  }
  readNumber = d0 * 10 + d1;
  return pos + 2;
}

/** Go's getnum3: one to three digits (exactly three when fixed). */
function getNum3(s: string, pos: number, fixed: boolean): number {
  let n = 0;
  let i = 0;
  for (; i < 3; i++) {
    const d = digitAt(s, pos + i);
    if (d < 0) break;
    n = n * 10 + d;
  }
  if (i === 0 || (fixed && i !== 3)) return -1;
  readNumber = n;
  return pos + i;
}

/**
 * Go's parseNanoseconds over `s[pos, pos+length)` (separator included). Sets readNumber to the
 * nanoseconds, or readRange on a negative value. Returns false when it does not parse.
 */
function parseNanos(s: string, pos: number, length: number): boolean {
  if (!isCommaOrPeriod(s, pos)) return false;
  // Digits past the ninth are ignored (truncated, not rounded).
  const n = Math.min(length, 10);
  const ns = goAtoi(s, pos + 1, pos + n);
  if (Number.isNaN(ns)) return false;
  if (ns < 0) {
    readRange = 'fractional second';
    return true;
  }
  readNumber = ns * 10 ** (10 - n);
  return true;
}

/**
 * Go's skip: matches literal layout text, where a run of spaces in the layout matches any run
 * of spaces (including none at the end of the value). Returns the next position, or the
 * bitwise complement of the position where matching failed.
 */
function skipLiteral(s: string, pos: number, prefix: string): number {
  let p = 0;
  while (p < prefix.length) {
    if (prefix.charCodeAt(p) === 32) {
      if (pos < s.length && s.charCodeAt(pos) !== 32) return ~pos;
      while (p < prefix.length && prefix.charCodeAt(p) === 32) p++;
      while (pos < s.length && s.charCodeAt(pos) === 32) pos++;
      continue;
    }
    if (pos >= s.length || s.charCodeAt(pos) !== prefix.charCodeAt(p)) return ~pos;
    p++;
    pos++;
  }
  return pos;
}

/** Go's `time.Parse` core (`parse(layout, value, defaultLocation, local)`). */
export function parseCompiled(compiled: CompiledLayout, value: string, defaultLocation: TimeLocation, local: TimeLocation): ParsedTime {
  if (compiled.isRFC3339) {
    const fast = parseRFC3339Fast(value, local, compiled.hasYear);
    if (fast !== undefined) return fast;
  }
  const layout = compiled.layout;
  const steps = compiled.steps;
  let pos = 0;
  let amSet = false;
  let pmSet = false;
  let year = 0;
  let month = -1;
  let day = -1;
  let yday = -1;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let nsec = 0;
  let utcZone = false;
  // -1 means "no numeric offset seen", exactly as in Go (so an offset of -00:00:01 is lost).
  let zoneOffset = -1;
  let zoneName = '';

  for (let k = 0; ; k++) {
    const step = steps[k]!;
    if (step.prefix.length > 0) {
      const next = skipLiteral(value, pos, step.prefix);
      if (next < 0) throw TimeParseError.mismatch(layout, value, step.prefix, value.slice(~next));
      pos = next;
    }
    if (step.std === 0) {
      if (pos < value.length) {
        const extra = value.slice(pos);
        throw TimeParseError.withDetail(layout, value, `: extra text: ${goTimeQuote(extra)}`);
      }
      break;
    }
    const hold = pos;
    let bad = false;
    readRange = '';
    switch (step.std) {
      case Std.Year: {
        if (value.length - pos < 2) {
          bad = true;
          break;
        }
        const y = goAtoi(value, pos, pos + 2);
        pos += 2;
        if (Number.isNaN(y)) {
          bad = true;
          break;
        }
        year = y >= 69 ? y + 1900 : y + 2000;
        break;
      }
      case Std.LongYear: {
        if (value.length - pos < 4 || digitAt(value, pos) < 0) {
          bad = true;
          break;
        }
        const y = goAtoi(value, pos, pos + 4);
        pos += 4;
        if (Number.isNaN(y)) bad = true;
        else year = y;
        break;
      }
      case Std.Month:
      case Std.LongMonth: {
        const table = step.std === Std.Month ? SHORT_MONTHS : LONG_MONTHS;
        const i = lookupName(table, value, pos);
        if (i < 0) {
          bad = true;
          break;
        }
        month = i + 1;
        pos += table[i]!.length;
        break;
      }
      case Std.NumMonth:
      case Std.ZeroMonth: {
        const next = getNum(value, pos, step.std === Std.ZeroMonth);
        if (next < 0) {
          bad = true;
          break;
        }
        pos = next;
        month = readNumber;
        if (month <= 0 || month > 12) readRange = 'month';
        break;
      }
      case Std.WeekDay:
      case Std.LongWeekDay: {
        // Checked for syntax only; the date decides the weekday.
        const table = step.std === Std.WeekDay ? SHORT_DAYS : LONG_DAYS;
        const i = lookupName(table, value, pos);
        if (i < 0) bad = true;
        else pos += table[i]!.length;
        break;
      }
      case Std.Day:
      case Std.UnderDay:
      case Std.ZeroDay: {
        if (step.std === Std.UnderDay && value.charCodeAt(pos) === 32) pos++;
        const next = getNum(value, pos, step.std === Std.ZeroDay);
        if (next < 0) {
          bad = true;
          break;
        }
        pos = next;
        // Any one- or two-digit day is taken here; the full date is validated at the end.
        day = readNumber;
        break;
      }
      case Std.UnderYearDay:
      case Std.ZeroYearDay: {
        if (step.std === Std.UnderYearDay) {
          for (let i = 0; i < 2 && value.charCodeAt(pos) === 32; i++) pos++;
        }
        const next = getNum3(value, pos, step.std === Std.ZeroYearDay);
        if (next < 0) {
          bad = true;
          break;
        }
        pos = next;
        yday = readNumber;
        break;
      }
      case Std.Hour: {
        const next = getNum(value, pos, false);
        if (next < 0) {
          bad = true;
          break;
        }
        pos = next;
        hour = readNumber;
        if (hour >= 24) readRange = 'hour';
        break;
      }
      case Std.Hour12:
      case Std.ZeroHour12: {
        const next = getNum(value, pos, step.std === Std.ZeroHour12);
        if (next < 0) {
          bad = true;
          break;
        }
        pos = next;
        hour = readNumber;
        if (hour > 12) readRange = 'hour';
        break;
      }
      case Std.Minute:
      case Std.ZeroMinute: {
        const next = getNum(value, pos, step.std === Std.ZeroMinute);
        if (next < 0) {
          bad = true;
          break;
        }
        pos = next;
        min = readNumber;
        if (min >= 60) readRange = 'minute';
        break;
      }
      case Std.Second:
      case Std.ZeroSecond: {
        const next = getNum(value, pos, step.std === Std.ZeroSecond);
        if (next < 0) {
          bad = true;
          break;
        }
        pos = next;
        sec = readNumber;
        if (sec >= 60) {
          readRange = 'second';
          break;
        }
        // A fraction right after the seconds is accepted even when the layout has none —
        // unless the layout's next chunk is itself a fraction.
        if (value.length - pos >= 2 && isCommaOrPeriod(value, pos) && digitAt(value, pos + 1) >= 0) {
          const nextStd = steps[k + 1]!.std;
          if (nextStd === Std.FracSecond0 || nextStd === Std.FracSecond9) break;
          let n = 2;
          while (digitAt(value, pos + n) >= 0) n++;
          if (!parseNanos(value, pos, n)) bad = true;
          else if (readRange === '') nsec = readNumber;
          pos += n;
        }
        break;
      }
      case Std.PM:
      case Std.pm: {
        if (value.length - pos < 2) {
          bad = true;
          break;
        }
        const p = value.slice(pos, pos + 2);
        pos += 2;
        const upper = step.std === Std.PM;
        if (p === (upper ? 'PM' : 'pm')) pmSet = true;
        else if (p === (upper ? 'AM' : 'am')) amSet = true;
        else bad = true;
        break;
      }
      case Std.ISO8601TZ:
      case Std.ISO8601ShortTZ:
      case Std.ISO8601ColonTZ:
      case Std.ISO8601SecondsTZ:
      case Std.ISO8601ColonSecondsTZ:
      case Std.NumTZ:
      case Std.NumShortTZ:
      case Std.NumColonTZ:
      case Std.NumSecondsTZ:
      case Std.NumColonSecondsTZ: {
        // The Z forms also accept a literal Z for UTC.
        if (isISO8601Zone(step.std) && value[pos] === 'Z') {
          pos++;
          utcZone = true;
          break;
        }
        const r = readNumericZone(value, pos, step.std);
        if (r < 0) {
          bad = true;
          break;
        }
        pos = r;
        if (readZoneBad) bad = true;
        zoneOffset = readNumber;
        break;
      }
      case Std.TZ: {
        if (value.startsWith('UTC', pos)) {
          utcZone = true;
          pos += 3;
          break;
        }
        const n = zoneAbbreviationLength(value, pos);
        if (n === 0) {
          bad = true;
          break;
        }
        zoneName = value.slice(pos, pos + n);
        pos += n;
        break;
      }
      case Std.FracSecond0: {
        const ndigit = 1 + step.digits;
        if (value.length - pos < ndigit) {
          bad = true;
          break;
        }
        if (!parseNanos(value, pos, ndigit)) bad = true;
        else if (readRange === '') nsec = readNumber;
        pos += ndigit;
        break;
      }
      case Std.FracSecond9: {
        if (value.length - pos < 2 || !isCommaOrPeriod(value, pos) || digitAt(value, pos + 1) < 0) {
          // The fraction is optional.
          break;
        }
        let i = 0;
        while (digitAt(value, pos + i + 1) >= 0) i++;
        if (!parseNanos(value, pos, 1 + i)) bad = true;
        else if (readRange === '') nsec = readNumber;
        pos += 1 + i;
        break;
      }
    }
    if (readRange !== '') {
      throw TimeParseError.withDetail(layout, value, `: ${readRange} out of range`);
    }
    if (bad) throw TimeParseError.mismatch(layout, value, step.text, value.slice(hold));
  }

  if (pmSet && hour < 12) hour += 12;
  else if (amSet && hour === 12) hour = 0;

  if (yday >= 0) {
    let d = 0;
    let m = 0;
    if (isLeapYear(year)) {
      if (yday === 31 + 29) {
        m = 2;
        d = 29;
      } else if (yday > 31 + 29) {
        yday--;
      }
    }
    if (yday < 1 || yday > 365) throw TimeParseError.withDetail(layout, value, ': day-of-year out of range');
    if (m === 0) {
      m = Math.floor((yday - 1) / 31) + 1;
      if (daysBeforeMonth(m + 1) < yday) m++;
      d = yday - daysBeforeMonth(m);
    }
    if (month >= 0 && month !== m) {
      throw TimeParseError.withDetail(layout, value, ': day-of-year does not match month');
    }
    month = m;
    if (day >= 0 && day !== d) throw TimeParseError.withDetail(layout, value, ': day-of-year does not match day');
    day = d;
  } else {
    if (month < 0) month = 1;
    if (day < 0) day = 1;
  }

  if (day < 1 || day > daysInMonth(month, year)) {
    throw TimeParseError.withDetail(layout, value, ': day out of range');
  }

  const wall = wallSecondsFromFields(year, month, day, hour, min, sec, nsec);
  const hasYear = compiled.hasYear;
  if (utcZone) return result(wall.seconds, wall.nanos, UTC, hasYear);

  if (zoneOffset !== -1) {
    const seconds = wall.seconds - zoneOffset;
    // Use the local zone when it really had this offset (and name) then; otherwise Go
    // fabricates a fixed zone recording the offset.
    const matchesLocal = local.offsetAt(seconds) === zoneOffset && (zoneName === '' || local.abbreviationAt(seconds) === zoneName);
    return result(seconds, wall.nanos, matchesLocal ? local : fixedZone(zoneName, zoneOffset), hasYear);
  }

  if (zoneName !== '') {
    const known = local.offsetOfAbbreviation(zoneName, wall.seconds);
    if (known !== undefined) return result(wall.seconds - known, wall.nanos, local, hasYear);
    // Unknown abbreviation: the instant is the wall time read as UTC; the fabricated zone only
    // records the name (and, for GMT±h, an offset that changes the wall clock, not the instant).
    let offset = 0;
    if (zoneName.length > 3 && zoneName.startsWith('GMT')) offset = goAtoi(zoneName, 3, zoneName.length) * 3600;
    return result(wall.seconds, wall.nanos, fixedZone(zoneName, offset), hasYear);
  }

  return result(epochSecondsFromWall(defaultLocation, wall.seconds), wall.nanos, defaultLocation, hasYear);
}

let readZoneBad = false;

/** Two digits at `at` as a number, or -1 (Go's fixed getnum). */
function twoDigits(s: string, at: number): number {
  const a = digitAt(s, at);
  const b = digitAt(s, at + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

function isISO8601Zone(std: number): boolean {
  return (
    std === Std.ISO8601TZ ||
    std === Std.ISO8601ColonTZ ||
    std === Std.ISO8601SecondsTZ ||
    std === Std.ISO8601ShortTZ ||
    std === Std.ISO8601ColonSecondsTZ
  );
}

/**
 * Reads a numeric zone offset (`-0700`, `-07:00`, `-07`, `-070000`, `-07:00:00` shapes) into
 * readNumber (seconds east). Returns the next position, or -1 when the value is too short or
 * misses a colon. readZoneBad reports a bad digit or sign after the range checks ran, because
 * Go reports a range error ahead of a shape error.
 */
function readNumericZone(s: string, pos: number, std: number): number {
  readZoneBad = false;
  const rest = s.length - pos;
  const hh = pos + 1;
  let mm = -1;
  let ss = -1;
  let end: number;
  if (std === Std.ISO8601ColonTZ || std === Std.NumColonTZ) {
    if (rest < 6 || s[pos + 3] !== ':') return -1;
    mm = pos + 4;
    end = pos + 6;
  } else if (std === Std.NumShortTZ || std === Std.ISO8601ShortTZ) {
    if (rest < 3) return -1;
    end = pos + 3;
  } else if (std === Std.ISO8601ColonSecondsTZ || std === Std.NumColonSecondsTZ) {
    if (rest < 9 || s[pos + 3] !== ':' || s[pos + 6] !== ':') return -1;
    mm = pos + 4;
    ss = pos + 7;
    end = pos + 9;
  } else if (std === Std.ISO8601SecondsTZ || std === Std.NumSecondsTZ) {
    if (rest < 7) return -1;
    mm = pos + 3;
    ss = pos + 5;
    end = pos + 7;
  } else {
    if (rest < 5) return -1;
    mm = pos + 3;
    end = pos + 5;
  }
  let hr = twoDigits(s, hh);
  let minutes = 0;
  let seconds = 0;
  if (hr < 0) {
    readZoneBad = true;
    hr = 0;
  } else {
    if (mm >= 0) {
      minutes = twoDigits(s, mm);
      if (minutes < 0) {
        readZoneBad = true;
        minutes = 0;
      }
    }
    if (!readZoneBad && ss >= 0) {
      seconds = twoDigits(s, ss);
      if (seconds < 0) {
        readZoneBad = true;
        seconds = 0;
      }
    }
  }
  // Go allows 24 hours, 60 minutes and 60 seconds, as some people write them.
  if (hr > 24) readRange = 'time zone offset hour';
  if (minutes > 60) readRange = 'time zone offset minute';
  if (seconds > 60) readRange = 'time zone offset second';
  let offset = (hr * 60 + minutes) * 60 + seconds;
  const sign = s[pos];
  if (sign === '-') offset = -offset;
  else if (sign !== '+') readZoneBad = true;
  readNumber = offset;
  return end;
}

function result(seconds: number, nanos: number, location: TimeLocation, hadYear: boolean): ParsedTime {
  const offsetSeconds = location.offsetAt(seconds);
  const wall = seconds + offsetSeconds;
  const days = Math.floor(wall / SECONDS_PER_DAY);
  const secondOfDay = wall - days * SECONDS_PER_DAY;
  const date = civilFromDays(days);
  return {
    epochNs: joinEpochNs(seconds, nanos),
    year: date.year,
    month: date.month,
    day: date.day,
    hour: Math.floor(secondOfDay / 3600),
    minute: Math.floor(secondOfDay / 60) % 60,
    second: secondOfDay % 60,
    nanosecond: nanos,
    offsetSeconds,
    location,
    hadYear,
  };
}

/**
 * Go's parseRFC3339 fast path: strict `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`. Undefined when
 * the value does not have exactly that shape; the general parser then decides (and may still
 * accept it, e.g. a one-digit hour).
 */
function parseRFC3339Fast(s: string, local: TimeLocation, hadYear: boolean): ParsedTime | undefined {
  if (s.length < 19) return undefined;
  const year = fixedDigits(s, 0, 4);
  const month = fixedDigits(s, 5, 2);
  const day = fixedDigits(s, 8, 2);
  const hour = fixedDigits(s, 11, 2);
  const minute = fixedDigits(s, 14, 2);
  const second = fixedDigits(s, 17, 2);
  if (
    !isValidDateTime(year, month, day, hour, minute, second) ||
    s[4] !== '-' ||
    s[7] !== '-' ||
    s[10] !== 'T' ||
    s[13] !== ':' ||
    s[16] !== ':'
  ) {
    return undefined;
  }
  let pos = 19;
  let nanos = 0;
  if (s.length - pos >= 2 && s.charCodeAt(pos) === 46 && digitAt(s, pos + 1) >= 0) {
    let n = 2;
    while (digitAt(s, pos + n) >= 0) n++;
    parseNanos(s, pos, n);
    nanos = readNumber;
    pos += n;
  }
  const wallSeconds = (daysFromCivil(year, month, day) * 24 + hour) * 3600 + minute * 60 + second;
  const rest = s.length - pos;
  if (rest === 1 && s[pos] === 'Z') return result(wallSeconds, nanos, UTC, hadYear);
  if (rest !== 6) return undefined;
  const hh = fixedDigits(s, pos + 1, 2);
  const mm = fixedDigits(s, pos + 4, 2);
  const sign = s[pos];
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || (sign !== '-' && sign !== '+') || s[pos + 3] !== ':') {
    return undefined;
  }
  const zoneOffset = (sign === '-' ? -1 : 1) * (hh * 60 + mm) * 60;
  const seconds = wallSeconds - zoneOffset;
  const location = local.offsetAt(seconds) === zoneOffset ? local : fixedZone('', zoneOffset);
  return result(seconds, nanos, location, hadYear);
}

function fixedDigits(s: string, pos: number, count: number): number {
  let x = 0;
  for (let i = 0; i < count; i++) {
    const d = digitAt(s, pos + i);
    if (d < 0) return -1;
    x = x * 10 + d;
  }
  return x;
}

// ---------------------------------------------------------------------------------------------
// Formatting

function padInt(x: number, width: number): string {
  const digits = String(Math.abs(x));
  const padded = digits.length < width ? '0'.repeat(width - digits.length) + digits : digits;
  return x < 0 ? '-' + padded : padded;
}

function formatNumericZone(offset: number, std: number): string {
  if (offset === 0 && isISO8601Zone(std)) return 'Z';
  // Go works in whole minutes truncated toward zero, then adds the leftover seconds.
  let zone = Math.trunc(offset / 60);
  let absOffset = offset;
  let out: string;
  if (zone < 0) {
    out = '-';
    zone = -zone;
    absOffset = -absOffset;
  } else {
    out = '+';
  }
  out += padInt(Math.floor(zone / 60), 2);
  const colon = std === Std.ISO8601ColonTZ || std === Std.NumColonTZ || std === Std.ISO8601ColonSecondsTZ || std === Std.NumColonSecondsTZ;
  if (colon) out += ':';
  if (std !== Std.NumShortTZ && std !== Std.ISO8601ShortTZ) out += padInt(zone % 60, 2);
  if (std === Std.ISO8601SecondsTZ || std === Std.NumSecondsTZ || std === Std.NumColonSecondsTZ || std === Std.ISO8601ColonSecondsTZ) {
    if (std === Std.NumColonSecondsTZ || std === Std.ISO8601ColonSecondsTZ) out += ':';
    out += padInt(absOffset % 60, 2);
  }
  return out;
}

function formatFraction(nanos: number, step: LayoutStep): string {
  const trim = step.std === Std.FracSecond9;
  if (trim && nanos === 0) return '';
  let digits = String(nanos).padStart(9, '0');
  if (step.digits < 9) digits = digits.slice(0, step.digits);
  if (trim) {
    let end = digits.length;
    while (end > 0 && digits.charCodeAt(end - 1) === 48) end--;
    digits = digits.slice(0, end);
    if (digits === '') return '';
  }
  return step.separator + digits;
}

/** Go's `Time.Format` for an instant shown in a location. */
export function formatCompiled(compiled: CompiledLayout, epochNs: bigint, location: TimeLocation): string {
  const { seconds, nanos } = splitEpochNs(epochNs);
  const offset = location.offsetAt(seconds);
  const wall = seconds + offset;
  const days = Math.floor(wall / SECONDS_PER_DAY);
  const secondOfDay = wall - days * SECONDS_PER_DAY;
  const { year, month, day } = civilFromDays(days);
  const hour = Math.floor(secondOfDay / 3600);
  const min = Math.floor(secondOfDay / 60) % 60;
  const sec = secondOfDay % 60;
  let out = '';
  for (const step of compiled.steps) {
    out += step.prefix;
    switch (step.std) {
      case 0:
        break;
      case Std.Year:
        out += padInt(Math.abs(year) % 100, 2);
        break;
      case Std.LongYear:
        out += padInt(year, 4);
        break;
      case Std.Month:
        out += SHORT_MONTHS[month - 1];
        break;
      case Std.LongMonth:
        out += LONG_MONTHS[month - 1];
        break;
      case Std.NumMonth:
        out += String(month);
        break;
      case Std.ZeroMonth:
        out += padInt(month, 2);
        break;
      case Std.WeekDay:
        out += SHORT_DAYS[weekdayOfDays(days)];
        break;
      case Std.LongWeekDay:
        out += LONG_DAYS[weekdayOfDays(days)];
        break;
      case Std.Day:
        out += String(day);
        break;
      case Std.UnderDay:
        out += (day < 10 ? ' ' : '') + String(day);
        break;
      case Std.ZeroDay:
        out += padInt(day, 2);
        break;
      case Std.UnderYearDay: {
        const yday = days - daysFromCivil(year, 1, 1) + 1;
        out += (yday < 100 ? (yday < 10 ? '  ' : ' ') : '') + String(yday);
        break;
      }
      case Std.ZeroYearDay:
        out += padInt(days - daysFromCivil(year, 1, 1) + 1, 3);
        break;
      case Std.Hour:
        out += padInt(hour, 2);
        break;
      case Std.Hour12:
        out += String(hour % 12 === 0 ? 12 : hour % 12);
        break;
      case Std.ZeroHour12:
        out += padInt(hour % 12 === 0 ? 12 : hour % 12, 2);
        break;
      case Std.Minute:
        out += String(min);
        break;
      case Std.ZeroMinute:
        out += padInt(min, 2);
        break;
      case Std.Second:
        out += String(sec);
        break;
      case Std.ZeroSecond:
        out += padInt(sec, 2);
        break;
      case Std.PM:
        out += hour >= 12 ? 'PM' : 'AM';
        break;
      case Std.pm:
        out += hour >= 12 ? 'pm' : 'am';
        break;
      case Std.TZ: {
        const name = location.abbreviationAt(seconds);
        // A zone without a name prints as -0700.
        out += name !== '' ? name : formatNumericZone(offset, Std.NumTZ);
        break;
      }
      case Std.FracSecond0:
      case Std.FracSecond9:
        out += formatFraction(nanos, step);
        break;
      default:
        out += formatNumericZone(offset, step.std);
        break;
    }
  }
  return out;
}
