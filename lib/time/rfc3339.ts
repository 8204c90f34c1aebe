/**
 * RFC 3339 helpers over nanosecond bigint instants, and millisecond ↔ nanosecond conversions.
 *
 * @example
 *   formatRFC3339Nano(1704164645000000000n) // → '2024-01-02T03:04:05.000000000Z'
 *   parseRFC3339('2024-01-02T04:04:05.5+01:00') // → 1704164645500000000n
 */
import { civilFromDays, SECONDS_PER_DAY, splitEpochNs } from './civil.js';
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
  // Log entries arrive in runs within the same second: the date and time of day are formatted
  // once per second, and within it only the fraction is, from one bigint subtraction rather than
  // a division. The fraction and `Z` are joined first: short enough to make one flat string, they
  // then add one piece, not two, to the output this is part of.
  if (epochNs < lastSecondStartNs || epochNs >= lastSecondEndNs) formatSecondOf(epochNs);
  return lastSecondPrefix + `${pad(Number(epochNs - lastSecondStartNs), 9)}Z`;
}

/** The whole second [start, end) formatted last, as `YYYY-MM-DDThh:mm:ss.`; empty at first. */
let lastSecondStartNs = 0n;
let lastSecondEndNs = 0n;
let lastSecondPrefix = '';

function formatSecondOf(epochNs: bigint): void {
  const { seconds, nanos } = splitEpochNs(epochNs);
  const days = Math.floor(seconds / SECONDS_PER_DAY);
  const secondOfDay = seconds - days * SECONDS_PER_DAY;
  const { year, month, day } = civilFromDays(days);
  lastSecondPrefix =
    `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T` +
    `${pad(Math.floor(secondOfDay / 3600), 2)}:${pad(Math.floor(secondOfDay / 60) % 60, 2)}:${pad(secondOfDay % 60, 2)}.`;
  lastSecondStartNs = epochNs - BigInt(nanos);
  lastSecondEndNs = lastSecondStartNs + ONE_SECOND_NS;
}

const ONE_SECOND_NS = 1_000_000_000n;

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
