/**
 * The strict RFC 3339 grammar the reference's `stage.cri` and `stage.docker` timestamps follow:
 * `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)` — upper-case `T` and `Z` only, a `.` before the
 * fraction (never `,`), one to nine fraction digits (ten or more fail), offsets with a colon
 * (`+0100` fails), no space separator. `parseRFC3339` in `./rfc3339` is Go's general
 * `time.Parse(RFC3339, …)`, which also takes longer fractions and `,`; these two stages need the
 * narrower rule, so it lives here on its own.
 *
 * @example
 *   parseRFC3339Strict('2019-01-01T01:00:00.000000001Z') // → 1546304400000000001n
 *   parseRFC3339Strict('2019-01-01T01:00:00.0000000001Z') // → undefined (ten fraction digits)
 */
import { daysFromCivil, isValidDateTime } from './civil.js';

const NS_PER_SECOND = 1_000_000_000n;
// Scale factors for 1–9 fraction digits.
const FRACTION_SCALE = [0, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];

/** The instant in nanoseconds since the epoch, or `undefined` when `value` is not in the grammar. */
export function parseRFC3339Strict(value: string): bigint | undefined {
  if (value.length < 20) return undefined;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  if (
    value[4] !== '-' ||
    value[7] !== '-' ||
    value[10] !== 'T' ||
    value[13] !== ':' ||
    value[16] !== ':' ||
    !isValidDateTime(year, month, day, hour, minute, second)
  ) {
    return undefined;
  }
  let pos = 19;
  let nanos = 0;
  if (value[pos] === '.') {
    let end = pos + 1;
    while (end < value.length && isDigit(value.charCodeAt(end))) end++;
    const count = end - pos - 1;
    if (count < 1 || count > 9) return undefined;
    nanos = Number(value.slice(pos + 1, end)) * FRACTION_SCALE[count]!;
    pos = end;
  }
  let offsetSeconds = 0;
  const rest = value.length - pos;
  if (rest === 1 && value[pos] === 'Z') {
    offsetSeconds = 0;
  } else if (rest === 6 && (value[pos] === '+' || value[pos] === '-') && value[pos + 3] === ':') {
    const offsetHours = digits(value, pos + 1, 2);
    const offsetMinutes = digits(value, pos + 4, 2);
    if (offsetHours < 0 || offsetHours > 23 || offsetMinutes < 0 || offsetMinutes > 59) return undefined;
    offsetSeconds = (value[pos] === '-' ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60);
  } else {
    return undefined;
  }
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds;
  return BigInt(seconds) * NS_PER_SECOND + BigInt(nanos);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** The value of `count` ASCII digits at `at`, or -1 when any of them is not a digit. */
function digits(s: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const code = s.charCodeAt(i);
    if (!isDigit(code)) return -1;
    n = n * 10 + (code - 48);
  }
  return n;
}
