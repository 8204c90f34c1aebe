/**
 * RFC 3339 helpers over nanosecond bigint instants, and millisecond ↔ nanosecond conversions.
 *
 * @example
 *   formatRFC3339Nano(1704164645000000000n) // → '2024-01-02T03:04:05.000000000Z'
 *   parseRFC3339('2024-01-02T04:04:05.5+01:00') // → 1704164645500000000n
 */
import { civilFromDays, NANOS_PER_SECOND, SECONDS_PER_DAY, splitEpochNs } from './civil.js';
import { compileLayout, parseCompiled, RFC3339_LAYOUT } from './layout.js';
import { UTC } from './location.js';

function pad(n: number, width: number): string {
  const s = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? '-' + s : s;
}

/**
 * An instant as UTC RFC 3339 with exactly nine fraction digits, e.g.
 * `2024-01-02T03:04:05.000000000Z` (fixed width, so the strings sort like the instants within
 * years 0000–9999). This is the CLI's output format.
 */
export function formatRFC3339Nano(epochNs: bigint): string {
  return sharedFormatter.format(epochNs);
}

/** "000" to "999": nine fraction digits are three look-ups, with no number formatting. */
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * formatRFC3339Nano in two parts, for writers that place them apart: the date and time of day to
 * the second, `YYYY-MM-DDThh:mm:ss.`, and the nine fraction digits. Log entries arrive in runs
 * within the same second, so the first part is formatted once per second and kept (the same
 * string until the second changes, which a writer can test with `===` to reuse its own text built
 * around it); within the second only the fraction is, from one bigint subtraction.
 *
 * @example
 *   const formatter = new RFC3339NanoFormatter();
 *   formatter.fraction(1704164645000000001n) // → '000000001'; formatter.secondPrefix → '2024-01-02T03:04:05.'
 */
export class RFC3339NanoFormatter {
  /** The date and time of day of the instant last given to `fraction`, up to and with the `.`. */
  secondPrefix = '';
  private secondStartNs = 0n;

  constructor() {
    this.formatSecondOf(0n);
  }

  /** The nine fraction digits of an instant; `secondPrefix` then holds the rest. */
  fraction(epochNs: bigint): string {
    let nanos = Number(epochNs - this.secondStartNs);
    if (!(nanos >= 0 && nanos < NANOS_PER_SECOND)) nanos = this.formatSecondOf(epochNs);
    const millis = Math.floor(nanos / 1_000_000);
    const micros = Math.floor(nanos / 1000) % 1000;
    return THREE_DIGITS[millis]! + THREE_DIGITS[micros]! + THREE_DIGITS[nanos % 1000]!;
  }

  format(epochNs: bigint): string {
    const fraction = this.fraction(epochNs);
    // The fraction and `Z` are joined first: short enough to make one flat string, they then add
    // one piece, not two, to the output this is part of.
    return this.secondPrefix + `${fraction}Z`;
  }

  /** Keeps the second of an instant; returns the instant's nanoseconds within it. */
  private formatSecondOf(epochNs: bigint): number {
    const { seconds, nanos } = splitEpochNs(epochNs);
    const days = Math.floor(seconds / SECONDS_PER_DAY);
    const secondOfDay = seconds - days * SECONDS_PER_DAY;
    const { year, month, day } = civilFromDays(days);
    this.secondPrefix =
      `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T` +
      `${pad(Math.floor(secondOfDay / 3600), 2)}:${pad(Math.floor(secondOfDay / 60) % 60, 2)}:${pad(secondOfDay % 60, 2)}.`;
    this.secondStartNs = epochNs - BigInt(nanos);
    return nanos;
  }
}

const sharedFormatter = new RFC3339NanoFormatter();

/**
 * Parses an RFC 3339 timestamp as Go's `time.Parse(time.RFC3339, value)` does: `T` and `Z` are
 * upper-case only, any number of fraction digits (`.` or `,`) is accepted and truncated to
 * nanoseconds, offsets are `Z` or `±hh:mm`. Throws TimeParseError with Go's message.
 */
export function parseRFC3339(value: string): bigint {
  // The instant never depends on the local zone here: the value always carries its offset.
  return parseCompiled(compileLayout(RFC3339_LAYOUT), value, UTC, UTC).epochNs;
}

/** Milliseconds since the epoch (as from `Date.now()`; fractions are truncated) → nanoseconds. */
export function msToNs(ms: number | bigint): bigint {
  if (typeof ms === 'bigint') return ms * 1_000_000n;
  const whole = Math.trunc(ms);
  const fraction = ms - whole;
  return BigInt(whole) * 1_000_000n + BigInt(Math.trunc(fraction * 1_000_000));
}

/** Nanoseconds since the epoch → whole milliseconds, floored (suitable for `new Date(ms)`). */
export function nsToMs(ns: bigint): number {
  let ms = ns / 1_000_000n;
  if (ns < 0n && ms * 1_000_000n !== ns) ms -= 1n;
  return Number(ms);
}
