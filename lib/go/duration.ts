/**
 * Go `time.Duration` text: `parseGoDuration` accepts exactly what `time.ParseDuration` accepts
 * (with its error texts) and `formatGoDuration` prints like `Duration.String()`.
 * Durations are bigint nanoseconds within the int64 range.
 */

/** A duration string Go would reject; `message` is Go's own error text. */
export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

const NANOSECONDS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n], // U+00B5 micro sign
  ['μs', 1_000n], // U+03BC Greek small letter mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const UINT_LIMIT = 1n << 63n;

/**
 * Go's `time.ParseDuration`: an optional sign then one or more `<number><unit>` parts (`1h2m3.5s`,
 * `-1.5ms`, `.5s`), units `ns us µs μs ms s m h`; `"0"` alone needs no unit. Returns nanoseconds.
 *
 * @throws DurationError with Go's message, e.g. `time: missing unit in duration "10"`
 * @example parseGoDuration('1h2m3.5s') === 3723500000000n
 */
export function parseGoDuration(text: string): bigint {
  const invalid = (): DurationError => new DurationError(`time: invalid duration ${goTimeQuote(text)}`);
  let s = text;
  let negative = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]!))) throw invalid();

    let i = 0;
    let whole = 0n;
    for (; i < s.length && isDigit(s[i]!); i++) {
      whole = whole * 10n + BigInt(s.charCodeAt(i) - 48);
      if (whole > UINT_LIMIT) throw invalid();
    }
    const hasWhole = i > 0;
    s = s.slice(i);

    let fraction = 0n;
    let scale = 1; // a float64 in Go too: it feeds the float arithmetic below
    let hasFraction = false;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      let overflow = false;
      let j = 0;
      for (; j < s.length && isDigit(s[j]!); j++) {
        // Digits beyond int64 precision are consumed but ignored, as in Go.
        if (overflow) continue;
        const next = fraction * 10n + BigInt(s.charCodeAt(j) - 48);
        if (fraction > INT64_MAX / 10n || next > UINT_LIMIT) {
          overflow = true;
          continue;
        }
        fraction = next;
        scale *= 10;
      }
      hasFraction = j > 0;
      s = s.slice(j);
    }
    if (!hasWhole && !hasFraction) throw invalid();

    let unitEnd = 0;
    while (unitEnd < s.length && !(s[unitEnd] === '.' || isDigit(s[unitEnd]!))) unitEnd++;
    if (unitEnd === 0) throw new DurationError(`time: missing unit in duration ${goTimeQuote(text)}`);
    const unitText = s.slice(0, unitEnd);
    s = s.slice(unitEnd);
    const unit = NANOSECONDS_PER_UNIT.get(unitText);
    if (unit === undefined) {
      throw new DurationError(`time: unknown unit ${goTimeQuote(unitText)} in duration ${goTimeQuote(text)}`);
    }

    if (whole > UINT_LIMIT / unit) throw invalid();
    let part = whole * unit;
    if (fraction > 0n) {
      // Go computes the fractional nanoseconds in float64 and truncates; kept for identical results.
      part += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (part > UINT_LIMIT) throw invalid();
    }
    total += part;
    if (total > UINT_LIMIT) throw invalid();
  }
  if (negative) return -total;
  if (total > INT64_MAX) throw invalid();
  return total;
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

const utf8 = new TextEncoder();

/**
 * The quoting the Go time package uses in its errors (not strconv.Quote): `"` and `\` are
 * backslash-escaped, control characters and every non-ASCII character are written as `\xHH`
 * per UTF-8 byte.
 *
 * @example goTimeQuote('1µ') === '"1\\xc2\\xb5"'
 */
export function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code >= 0x80) {
      for (const byte of utf8.encode(ch)) out += '\\x' + byte.toString(16).padStart(2, '0');
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return out + '"';
}

/**
 * Go's `Duration.String()`: `1h2m3.5s`, `1.5ms`, `2µs`, `0s`, `-1m0s`; sub-second values use the
 * largest fitting unit of ns/µs/ms, larger ones h/m/s with the fraction on the seconds.
 *
 * @throws RangeError when `ns` is outside the int64 range
 * @example formatGoDuration(3723500000000n) === '1h2m3.5s'
 */
export function formatGoDuration(ns: bigint): string {
  if (ns < INT64_MIN || ns > INT64_MAX) throw new RangeError(`duration ${ns}ns is outside the int64 range`);
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  const u = ns < 0n ? -ns : ns;
  if (u < 1_000n) return `${sign}${u}ns`;
  if (u < 1_000_000n) return `${sign}${withFraction(u, 3)}µs`;
  if (u < 1_000_000_000n) return `${sign}${withFraction(u, 6)}ms`;
  const totalSeconds = u / 1_000_000_000n;
  const seconds = `${withFraction(u % 60_000_000_000n, 9)}s`;
  const totalMinutes = totalSeconds / 60n;
  if (totalMinutes === 0n) return sign + seconds;
  const hours = totalMinutes / 60n;
  const minutes = `${totalMinutes % 60n}m`;
  return hours === 0n ? sign + minutes + seconds : `${sign}${hours}h${minutes}${seconds}`;
}

/** `value / 10^decimals` with trailing fraction zeros (and a bare point) removed. */
function withFraction(value: bigint, decimals: number): string {
  const divisor = 10n ** BigInt(decimals);
  const whole = value / divisor;
  const fraction = (value % divisor).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}
