/**
 * Time zone locations with the behaviour of Go's `*time.Location`: UTC, fixed offsets (what Go
 * fabricates while parsing), IANA zones and the process-local zone.
 *
 * IANA offsets come from temporal-polyfill (ICU data). Zone abbreviations, which Temporal does
 * not expose, come from the generated table in `zones/tzdata.ts`; both are the IANA database.
 */
import { Temporal } from 'temporal-polyfill';
import { wallSecondsFromFields } from './civil.js';
import { ZONE_NAMES, ZONE_RECORDS } from './zones/tzdata.js';

/** A place whose clock gives wall-clock time for an instant. */
export interface TimeLocation {
  /** Go's `Location.String()`: `UTC`, `Local`, an IANA name, or a fabricated zone's name. */
  readonly name: string;
  /** Offset east of UTC, in seconds, in effect at an instant (seconds since the epoch). */
  offsetAt(epochSeconds: number): number;
  /** The zone abbreviation in effect at an instant (`""` for an unnamed fixed zone). */
  abbreviationAt(epochSeconds: number): string;
  /**
   * Go's `Location.lookupName`: the offset a zone abbreviation stands for in this location,
   * preferring the zone of that name in effect near the instant; undefined when unknown.
   */
  offsetOfAbbreviation(abbreviation: string, epochSeconds: number): number | undefined;
}

class UtcLocation implements TimeLocation {
  readonly name = 'UTC';
  offsetAt(): number {
    return 0;
  }
  abbreviationAt(): string {
    return 'UTC';
  }
  // Go's UTC location has an empty zone list, so it knows no abbreviation at all.
  offsetOfAbbreviation(): number | undefined {
    return undefined;
  }
}

class FixedLocation implements TimeLocation {
  constructor(
    readonly name: string,
    readonly offsetSeconds: number,
  ) {}
  offsetAt(): number {
    return this.offsetSeconds;
  }
  abbreviationAt(): string {
    return this.name;
  }
  offsetOfAbbreviation(abbreviation: string): number | undefined {
    return abbreviation === this.name ? this.offsetSeconds : undefined;
  }
}

/** The UTC location. */
export const UTC: TimeLocation = new UtcLocation();

/** A location whose clock is always `offsetSeconds` east of UTC, as Go's `FixedZone`. */
export function fixedZone(name: string, offsetSeconds: number): TimeLocation {
  return new FixedLocation(name, offsetSeconds);
}

interface ZoneAbbreviation {
  readonly abbreviation: string;
  readonly offset: number;
}

interface AbbreviationEra {
  readonly since: number;
  readonly abbreviation: string;
}

/** A decoded entry of `ZONE_RECORDS`. */
interface ZoneRecord {
  /** Go's zone list for the location, in file order. */
  readonly zones: readonly ZoneAbbreviation[];
  /** Offsets that only ever had one abbreviation. */
  readonly nameByOffset: ReadonlyMap<number, string>;
  /** Offsets whose abbreviation changed over time, with when each one took over. */
  readonly erasByOffset: ReadonlyMap<number, readonly AbbreviationEra[]>;
}

function decodeRecord(encoded: string): ZoneRecord {
  const [zonePart = '', ...eraParts] = encoded.split(';');
  const zones: ZoneAbbreviation[] = zonePart.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    return { abbreviation: entry.slice(0, at), offset: Number(entry.slice(at + 1)) };
  });
  const erasByOffset = new Map<number, AbbreviationEra[]>();
  for (const part of eraParts) {
    const eq = part.indexOf('=');
    const eras = part
      .slice(eq + 1)
      .split('/')
      .map((era) => {
        const at = era.lastIndexOf('@');
        const since = era.slice(at + 1);
        return { abbreviation: era.slice(0, at), since: since === '' ? -Infinity : Number(since) };
      });
    erasByOffset.set(Number(part.slice(0, eq)), eras);
  }
  const nameByOffset = new Map<number, string>();
  for (const z of zones) {
    if (!erasByOffset.has(z.offset) && !nameByOffset.has(z.offset)) nameByOffset.set(z.offset, z.abbreviation);
  }
  return { zones, nameByOffset, erasByOffset };
}

/** The abbreviation tzdata gives zones without a name: `+03`, `-0330`, `+053028`. */
function numericAbbreviation(offset: number): string {
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const two = (n: number) => String(n).padStart(2, '0');
  let text = sign + two(Math.floor(abs / 3600));
  const minutes = Math.floor(abs / 60) % 60;
  const seconds = abs % 60;
  if (minutes !== 0 || seconds !== 0) text += two(minutes);
  if (seconds !== 0) text += two(seconds);
  return text;
}

/** One stretch of time with a constant offset: [start, end) in epoch seconds. */
interface OffsetPeriod {
  readonly start: number;
  readonly end: number;
  readonly offset: number;
}

// Temporal.Instant covers ±1e8 days around the epoch; instants beyond use the edge's offset.
const TEMPORAL_LIMIT_SECONDS = 8_639_999_999_000;
// Periods are a few per year; this holds decades of them per zone.
const PERIOD_CACHE_LIMIT = 512;

class ZoneLocation implements TimeLocation {
  /** Known periods, sorted by start and never overlapping. */
  private periods: OffsetPeriod[] = [];
  private lastHit: OffsetPeriod | undefined;
  private record: ZoneRecord | undefined;

  constructor(
    readonly name: string,
    private readonly zoneId: string,
    private readonly encodedRecord: string | undefined,
  ) {}

  offsetAt(epochSeconds: number): number {
    const last = this.lastHit;
    if (last !== undefined && epochSeconds >= last.start && epochSeconds < last.end) return last.offset;
    const periods = this.periods;
    // The first period starting after the instant; the one before it may contain the instant.
    let lo = 0;
    let hi = periods.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (periods[mid]!.start <= epochSeconds) lo = mid + 1;
      else hi = mid;
    }
    const candidate = periods[lo - 1];
    if (candidate !== undefined && epochSeconds < candidate.end) {
      this.lastHit = candidate;
      return candidate.offset;
    }
    const period = this.periodAt(epochSeconds);
    if (periods.length >= PERIOD_CACHE_LIMIT) {
      this.periods = [period];
    } else {
      periods.splice(lo, 0, period);
    }
    this.lastHit = period;
    return period.offset;
  }

  abbreviationAt(epochSeconds: number): string {
    const offset = this.offsetAt(epochSeconds);
    const record = this.decoded();
    if (record === undefined) return numericAbbreviation(offset);
    const eras = record.erasByOffset.get(offset);
    if (eras !== undefined) {
      let name = eras[0]!.abbreviation;
      for (const era of eras) {
        if (era.since > epochSeconds) break;
        name = era.abbreviation;
      }
      return name;
    }
    return record.nameByOffset.get(offset) ?? numericAbbreviation(offset);
  }

  offsetOfAbbreviation(abbreviation: string, epochSeconds: number): number | undefined {
    const record = this.decoded();
    if (record === undefined) return undefined;
    // As Go: first a zone of that name that really was in effect around the instant (Sydney
    // once used "EST" for both its standard and summer time), then any zone of that name.
    for (const zone of record.zones) {
      if (zone.abbreviation !== abbreviation) continue;
      const instant = epochSeconds - zone.offset;
      if (this.abbreviationAt(instant) === abbreviation) return this.offsetAt(instant);
    }
    for (const zone of record.zones) {
      if (zone.abbreviation === abbreviation) return zone.offset;
    }
    return undefined;
  }

  private decoded(): ZoneRecord | undefined {
    if (this.record === undefined && this.encodedRecord !== undefined) {
      this.record = decodeRecord(this.encodedRecord);
    }
    return this.record;
  }

  private periodAt(epochSeconds: number): OffsetPeriod {
    const clamped = Math.max(-TEMPORAL_LIMIT_SECONDS, Math.min(TEMPORAL_LIMIT_SECONDS, epochSeconds));
    const instantNs = BigInt(clamped) * 1_000_000_000n;
    const zoned = Temporal.Instant.fromEpochNanoseconds(instantNs).toZonedDateTimeISO(this.zoneId);
    const offset = Math.round(zoned.offsetNanoseconds / 1e9);
    if (clamped !== epochSeconds) {
      return epochSeconds > 0
        ? { start: TEMPORAL_LIMIT_SECONDS, end: Infinity, offset }
        : { start: -Infinity, end: -TEMPORAL_LIMIT_SECONDS + 1, offset };
    }
    const next = zoned.getTimeZoneTransition('next');
    // 'previous' looks strictly before its instant; start one nanosecond later so a transition
    // exactly at this second counts as the start of the period.
    const previous = Temporal.Instant.fromEpochNanoseconds(instantNs + 1n)
      .toZonedDateTimeISO(this.zoneId)
      .getTimeZoneTransition('previous');
    const start = previous === null ? -Infinity : Number(previous.epochNanoseconds / 1_000_000_000n);
    const end = next === null ? Infinity : Number(next.epochNanoseconds / 1_000_000_000n);
    return { start, end, offset };
  }
}

const zoneCache = new Map<string, TimeLocation>();

/** Whether `name` is a zone name Go's LoadLocation accepts (case-sensitive, as Go on Linux). */
export function isKnownZoneName(name: string): boolean {
  return Object.hasOwn(ZONE_NAMES, name);
}

function zoneLocation(name: string, displayName = name): TimeLocation {
  const key = `${displayName}\u0000${name}`;
  let loc = zoneCache.get(key);
  if (loc === undefined) {
    const index = isKnownZoneName(name) ? ZONE_NAMES[name] : undefined;
    loc = new ZoneLocation(displayName, name, index === undefined ? undefined : ZONE_RECORDS[index]);
    zoneCache.set(key, loc);
  }
  return loc;
}

let localCache: TimeLocation | undefined;

function processTz(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.TZ;
}

/**
 * Go's `time.Local`: the process time zone (the `TZ` environment variable, else the system
 * zone); an empty `TZ` or a UTC zone means UTC. Resolved once, as Go does at start-up (and
 * because reading the environment on every parse is slow); see refreshLocalLocation.
 */
export function localLocation(): TimeLocation {
  localCache ??= resolveLocalLocation();
  return localCache;
}

/** Re-reads the process time zone after `TZ` changed (tests, or a deliberate switch). */
export function refreshLocalLocation(): TimeLocation {
  localCache = resolveLocalLocation();
  return localCache;
}

function resolveLocalLocation(): TimeLocation {
  if (processTz() === '') return UTC;
  const id = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (id === undefined || id === 'UTC' || id === 'Etc/UTC') return UTC;
  return zoneLocation(id, 'Local');
}

/** Thrown for a location name Go's `time.LoadLocation` rejects; the message is Go's. */
export class UnknownLocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownLocationError';
  }
}

/**
 * Go's `time.LoadLocation`: `""` and `"UTC"` → UTC, `"Local"` → the process zone, otherwise an
 * IANA zone name (case-sensitive). Throws UnknownLocationError with Go's message.
 */
export function loadLocation(name: string): TimeLocation {
  if (name === '' || name === 'UTC') return UTC;
  if (name === 'Local') return localLocation();
  if (name.includes('..') || name.startsWith('/') || name.startsWith('\\')) {
    throw new UnknownLocationError('time: invalid location name');
  }
  if (!isKnownZoneName(name)) throw new UnknownLocationError(`unknown time zone ${name}`);
  return zoneLocation(name);
}

/**
 * Seconds since the epoch of wall-clock fields in a location, resolved exactly as Go's
 * `time.Date`: look up the offset at the wall time read as UTC, then, if the result falls
 * outside that offset's period, use the offset in effect at that result instead.
 *
 * For a wall time inside a DST gap this is not Temporal's "compatible" choice: zones west of
 * UTC land before the gap (New York 02:30 → 01:30 EST), zones east of it after (Berlin 02:30 →
 * 03:30 CEST). For a repeated wall time west zones get the first (daylight) instant, east
 * zones the second (standard) one.
 */
export function epochSecondsFromWall(location: TimeLocation, wallSeconds: number): number {
  const guess = location.offsetAt(wallSeconds);
  return wallSeconds - location.offsetAt(wallSeconds - guess);
}

/** Go's `time.Date(year, month, day, hour, min, sec, nsec, loc)` as seconds + nanoseconds. */
export function dateInLocation(
  location: TimeLocation,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  nanosecond: number,
): { seconds: number; nanos: number } {
  const wall = wallSecondsFromFields(year, month, day, hour, minute, second, nanosecond);
  return { seconds: epochSecondsFromWall(location, wall.seconds), nanos: wall.nanos };
}
