/**
 * Proleptic Gregorian calendar arithmetic on plain numbers (days and seconds since the Unix
 * epoch), the same calendar Go's time package uses for every year, including year 0.
 */

export const SECONDS_PER_DAY = 86_400;
export const NANOS_PER_SECOND = 1_000_000_000;

const CUMULATIVE_DAYS = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];

export function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** Number of days in a month (1–12) of a year. */
export function daysInMonth(month: number, year: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  return CUMULATIVE_DAYS[month]! - CUMULATIVE_DAYS[month - 1]!;
}

/** Days before the first of a month (1–13) in a non-leap year, as Go's daysBefore. */
export function daysBeforeMonth(month: number): number {
  return CUMULATIVE_DAYS[month - 1]!;
}

/**
 * Whether fixed-width fields read from a timestamp name a real date and time of day: a year of
 * at least 0, month 1–12, a day that month has, hour 0–23, minute and second 0–59. A field that
 * failed to read as digits is -1 and so fails too.
 */
export function isValidDateTime(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  return (
    year >= 0 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(month, year) &&
    hour >= 0 &&
    hour <= 23 &&
    minute >= 0 &&
    minute <= 59 &&
    second >= 0 &&
    second <= 59
  );
}

/**
 * Days since 1970-01-01 of a date. The month must be 1–12; the day may be any integer and
 * counts on linearly (day 0 is the last day of the previous month), as Go's Date normalises it.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const monthFromMarch = (month + 9) % 12;
  const dayOfYear = Math.floor((153 * monthFromMarch + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

export interface CivilDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** The calendar date of a day number (days since 1970-01-01). */
export function civilFromDays(days: number): CivilDate {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

/** Day of the week of a day number: 0 = Sunday … 6 = Saturday. */
export function weekdayOfDays(days: number): number {
  // 1970-01-01 was a Thursday.
  return (((days + 4) % 7) + 7) % 7;
}

/** Day of the year, 1-based (1 January = 1). */
export function dayOfYear(year: number, month: number, day: number): number {
  return daysFromCivil(year, month, day) - daysFromCivil(year, 1, 1) + 1;
}

/**
 * Seconds since the epoch of wall-clock fields read as UTC, normalising out-of-range fields
 * the way Go's `time.Date` does (month 13 → January of the next year, 31 April → 1 May, …).
 * Returns the whole seconds and the remaining nanoseconds (0 ≤ nanos < 1e9).
 */
export function wallSecondsFromFields(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  nanosecond: number,
): { seconds: number; nanos: number } {
  const m0 = month - 1;
  const y = year + Math.floor(m0 / 12);
  const m = m0 - Math.floor(m0 / 12) * 12 + 1;
  const carry = Math.floor(nanosecond / NANOS_PER_SECOND);
  const nanos = nanosecond - carry * NANOS_PER_SECOND;
  const seconds = daysFromCivil(y, m, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second + carry;
  return { seconds, nanos };
}

/** Whole seconds (floored) and nanoseconds within the second of a nanosecond instant. */
export function splitEpochNs(epochNs: bigint): { seconds: number; nanos: number } {
  let seconds = epochNs / 1_000_000_000n;
  let nanos = epochNs - seconds * 1_000_000_000n;
  if (nanos < 0n) {
    nanos += 1_000_000_000n;
    seconds -= 1n;
  }
  return { seconds: Number(seconds), nanos: Number(nanos) };
}

/** A nanosecond instant from whole seconds and nanoseconds. */
export function joinEpochNs(seconds: number, nanos: number): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
}
