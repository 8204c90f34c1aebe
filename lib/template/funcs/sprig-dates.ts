/**
 * sprig v3.3.0 date functions and the `time.Time` value they pass around (`now`, `date`,
 * `dateInZone`, `toDate`, `dateModify`, `unixEpoch`, `duration`, `durationRound`, `ago`,
 * `htmlDate`…), formatted with Go layouts. sprig's type switches are kept: `date` formats
 * time.Time and int/int64/int32 Unix seconds, and anything else (a float or a string) as now.
 */
import { DurationError, formatGoDuration, parseGoDuration } from '../../go/duration.js';
import { compileLayout, formatCompiled, parseLayout } from '../../time/layout.js';
import { UTC, loadLocation, localLocation, type TimeLocation } from '../../time/location.js';
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { parseGoInt } from '../../go/strconv.js';
import { GoInt, GoObject, T_ANY, T_INT, T_INT64, T_STRING, goInt, type GoMethod, type GoType } from '../values.js';
import { jsonQuote } from './json.js';

const T_TIME: GoType = { name: 'time.Time', kind: 'struct' };
const NS_PER_SECOND = 1_000_000_000n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
/** Go's zero time.Time: January 1, year 1, 00:00:00 UTC. */
const ZERO_TIME_NS = -62_135_596_800n * NS_PER_SECOND;
const STRING_LAYOUT = '2006-01-02 15:04:05.999999999 -0700 MST';
const RFC3339_NANO = '2006-01-02T15:04:05.999999999Z07:00';

const processStart = process.hrtime.bigint();

/** A Go `time.Time`: an instant, the location it is shown in, and (for `now`) a monotonic reading. */
export class GoTime extends GoObject {
  readonly goType = T_TIME;

  constructor(
    readonly epochNs: bigint,
    readonly location: TimeLocation,
    /** Nanoseconds since process start, as Go's monotonic clock reading; only `now` has one. */
    readonly monotonicNs?: bigint,
  ) {
    super();
  }

  format(layout: string, location: TimeLocation = this.location): string {
    return formatCompiled(compileLayout(layout), this.epochNs, location);
  }

  /** Seconds since the epoch, rounded down (Go's `Unix()`). */
  get unixSeconds(): bigint {
    const s = this.epochNs / NS_PER_SECOND;
    return this.epochNs < 0n && s * NS_PER_SECOND !== this.epochNs ? s - 1n : s;
  }

  override toGoString(): string {
    let s = this.format(STRING_LAYOUT);
    if (this.monotonicNs !== undefined) {
      const m = this.monotonicNs;
      const sign = m < 0n ? '-' : '+';
      const abs = m < 0n ? -m : m;
      s += ` m=${sign}${abs / NS_PER_SECOND}.${(abs % NS_PER_SECOND).toString().padStart(9, '0')}`;
    }
    return s;
  }

  toGoJson(): string {
    return jsonQuote(this.format(RFC3339_NANO), false);
  }

  override fields(): readonly (readonly [string, unknown])[] {
    return [
      ['wall', goInt({ name: 'uint64', kind: 'uint64' }, 0n)],
      ['ext', goInt(T_INT64, this.epochNs / NS_PER_SECOND)],
      ['loc', this.location.name],
    ];
  }

  override method(name: string): GoMethod | undefined {
    const getter = (fn: () => unknown): GoMethod => ({ params: [], call: fn });
    const field = (layout: string): GoMethod => getter(() => goInt(T_INT, Number(this.format(layout))));
    switch (name) {
      case 'Unix':
        return getter(() => goInt(T_INT64, this.unixSeconds));
      case 'UnixMilli':
        return getter(() => goInt(T_INT64, floorDiv(this.epochNs, 1_000_000n)));
      case 'UnixMicro':
        return getter(() => goInt(T_INT64, floorDiv(this.epochNs, 1_000n)));
      case 'UnixNano':
        return getter(() => goInt(T_INT64, this.epochNs));
      case 'Year':
        return field('2006');
      case 'YearDay':
        return field('002');
      case 'Day':
        return field('2');
      case 'Hour':
        return field('15');
      case 'Minute':
        return field('4');
      case 'Second':
        return field('5');
      case 'Nanosecond':
        return getter(() => goInt(T_INT, Number(((this.epochNs % NS_PER_SECOND) + NS_PER_SECOND) % NS_PER_SECOND)));
      case 'String':
        return getter(() => this.toGoString());
      case 'IsZero':
        return getter(() => this.epochNs === ZERO_TIME_NS);
      case 'UTC':
        return getter(() => new GoTime(this.epochNs, UTC));
      case 'Local':
        return getter(() => new GoTime(this.epochNs, localLocation()));
      case 'Format':
        return { params: [T_STRING], call: (layout) => this.format(layout as string) };
      case 'Add':
        return {
          params: [{ name: 'time.Duration', kind: 'int64' }],
          call: (d) => new GoTime(this.epochNs + (d as GoInt).value, this.location, this.monotonicNs),
        };
      case 'Before':
        return { params: [T_TIME], call: (o) => this.epochNs < (o as GoTime).epochNs };
      case 'After':
        return { params: [T_TIME], call: (o) => this.epochNs > (o as GoTime).epochNs };
      case 'Equal':
        return { params: [T_TIME], call: (o) => this.epochNs === (o as GoTime).epochNs };
    }
    return undefined;
  }
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a < 0n && q * b !== a ? q - 1n : q;
}

/**
 * The wall clock, as Go's time.Now() in the reference's templates: template functions get no
 * execution context that could carry a stage's clock.
 */
function nowNs(): bigint {
  const ms = BigInt(Date.now());
  // Date.now() has millisecond resolution; hrtime supplies the sub-millisecond digits.
  return ms * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
}

/** Go's `time.Now()` (local location, with a monotonic clock reading). */
export function timeNow(): GoTime {
  return new GoTime(nowNs(), localLocation(), process.hrtime.bigint() - processStart);
}

function unixTime(seconds: bigint): GoTime {
  return new GoTime(seconds * NS_PER_SECOND, localLocation());
}

/** sprig's type switch for date arguments: time.Time, or int/int64/int32 Unix seconds. */
function timeOf(date: unknown, acceptInt32: boolean): GoTime {
  if (date instanceof GoTime) return date;
  if (date instanceof GoInt) {
    const kind = date.type.kind;
    if (kind === 'int' || kind === 'int64' || (acceptInt32 && kind === 'int32')) return unixTime(date.value);
  }
  return timeNow();
}

function dateInZone(fmt: string, date: unknown, zone: string): string {
  const t = timeOf(date, true);
  let loc: TimeLocation;
  try {
    loc = loadLocation(zone);
  } catch {
    loc = UTC;
  }
  return t.format(fmt, loc);
}

function parseDuration(text: string): bigint {
  try {
    return parseGoDuration(text);
  } catch (err) {
    if (err instanceof DurationError) throw new GoError(err.message);
    throw err;
  }
}

const wrapDuration = (ns: bigint): bigint => BigInt.asIntN(64, ns);

/** Go's Duration.Round(m) for a positive m. */
function roundDuration(d: bigint, m: bigint): bigint {
  let r = d % m;
  if (d < 0n) {
    r = -r;
    if (r + r < m) return d + r;
    const d1 = d - m + r;
    return d1 < d ? d1 : INT64_MIN;
  }
  if (r + r < m) return d - r;
  const d1 = d + m - r;
  return d1 > d ? d1 : INT64_MAX;
}

function sinceNs(t: GoTime): bigint {
  return wrapDuration(nowNs() - t.epochNs);
}

function ago(date: unknown): string {
  let t: GoTime;
  if (date instanceof GoTime) t = date;
  else if (date instanceof GoInt && (date.type.kind === 'int64' || date.type.kind === 'int')) t = unixTime(date.value);
  else t = timeNow();
  return formatGoDuration(roundDuration(sinceNs(t), NS_PER_SECOND));
}

function duration(sec: unknown): string {
  let n = 0n;
  if (typeof sec === 'string') {
    const parsed = parseGoInt(sec, 10);
    n = 'error' in parsed ? (parsed.error === 'range' ? parsed.value : 0n) : parsed.value;
  } else if (sec instanceof GoInt && sec.type.kind === 'int64') {
    n = sec.value;
  }
  return formatGoDuration(wrapDuration(n * NS_PER_SECOND));
}

const YEAR = 3_600n * 24n * 365n * NS_PER_SECOND;
const MONTH = 3_600n * 24n * 30n * NS_PER_SECOND;
const DAY = 3_600n * 24n * NS_PER_SECOND;
const HOUR = 3_600n * NS_PER_SECOND;
const MINUTE = 60n * NS_PER_SECOND;

function durationRound(value: unknown): string {
  let d = 0n;
  if (typeof value === 'string') {
    try {
      d = parseGoDuration(value);
    } catch {
      d = 0n;
    }
  } else if (value instanceof GoInt && value.type.kind === 'int64') {
    d = value.value;
  } else if (value instanceof GoTime) {
    d = sinceNs(value);
  }
  let u = BigInt.asUintN(64, d);
  if (d < 0n) u = BigInt.asUintN(64, -u);
  if (u > YEAR) return `${u / YEAR}y`;
  if (u > MONTH) return `${u / MONTH}mo`;
  if (u > DAY) return `${u / DAY}d`;
  if (u > HOUR) return `${u / HOUR}h`;
  if (u > MINUTE) return `${u / MINUTE}m`;
  if (u > NS_PER_SECOND) return `${u / NS_PER_SECOND}s`;
  return '0s';
}

function mustToDate(fmt: string, str: string): GoTime {
  try {
    const parsed = parseLayout(fmt, str, { location: 'Local' });
    return new GoTime(parsed.epochNs, parsed.location);
  } catch (err) {
    throw new GoError((err as Error).message);
  }
}

function toDate(fmt: string, str: string): GoTime {
  try {
    return mustToDate(fmt, str);
  } catch {
    return new GoTime(ZERO_TIME_NS, UTC);
  }
}

function dateModify(fmt: string, t: GoTime): GoTime {
  try {
    return new GoTime(t.epochNs + parseGoDuration(fmt), t.location, t.monotonicNs);
  } catch {
    return t;
  }
}

function mustDateModify(fmt: string, date: GoTime): GoTime {
  const d = parseDuration(fmt);
  return new GoTime(date.epochNs + d, date.location, date.monotonicNs);
}

/** sprig's date functions. */
export const sprigDateFuncs: FuncMap = {
  now: defineFunc([], timeNow),
  date: defineFunc([T_STRING, T_ANY], (fmt: string, date: unknown) => dateInZone(fmt, date, 'Local')),
  dateInZone: defineFunc([T_STRING, T_ANY, T_STRING], dateInZone),
  date_in_zone: defineFunc([T_STRING, T_ANY, T_STRING], dateInZone),
  htmlDate: defineFunc([T_ANY], (date: unknown) => dateInZone('2006-01-02', date, 'Local')),
  htmlDateInZone: defineFunc([T_ANY, T_STRING], (date: unknown, zone: string) => dateInZone('2006-01-02', date, zone)),
  dateModify: defineFunc([T_STRING, T_TIME], dateModify),
  date_modify: defineFunc([T_STRING, T_TIME], dateModify),
  mustDateModify: defineFunc([T_STRING, T_TIME], mustDateModify),
  must_date_modify: defineFunc([T_STRING, T_TIME], mustDateModify),
  toDate: defineFunc([T_STRING, T_STRING], toDate),
  mustToDate: defineFunc([T_STRING, T_STRING], mustToDate),
  unixEpoch: defineFunc([T_TIME], (date: GoTime) => date.unixSeconds.toString()),
  ago: defineFunc([T_ANY], ago),
  duration: defineFunc([T_ANY], duration),
  durationRound: defineFunc([T_ANY], durationRound),
};
