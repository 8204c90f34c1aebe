/**
 * stage.timestamp — sets the entry timestamp from an extracted value parsed with a Go layout, a
 * shorthand (`RFC3339`, `UnixDate`, …) or a `Unix*` format, trying `fallback_formats` in order.
 *
 * Reference quirks kept:
 * - shorthands and `Unix*` formats ignore `location`; a layout without `06` takes the current year
 *   of the stage's wall clock (`ctx.clock`), with the New Year rule (see lib/time/formats);
 * - a missing or non-stringifiable source is a failure like a value that does not parse;
 * - `action_on_failure = "fudge"` (the default) gives a failed entry its stream's last output
 *   timestamp + 1 ns, or leaves it alone when the stream has none yet; `skip` leaves it alone;
 * - `action_on_duplicate_timestamp = "fudge"` (the default) gives an entry whose parsed instant
 *   equals the stream's previous parsed instant the previous output + 1 ns — only consecutive
 *   duplicates, and failures in between advance only the output instant;
 * - a "stream" is the entry's whole current label set rendered as text; the last 10 000 streams are
 *   remembered (least recently used ones are forgotten), and only when either action is `fudge`;
 * - an empty action means the default; an explicit `location = ""` is UTC, as Go's LoadLocation
 *   reads it; the invalid-location message keeps the reference's literal `%v`.
 */
import { labelsKey, own } from '../core/entry.js';
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { NO_NAMES } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { compileTimestampFormat, validateLocation, type TimestampParser } from '../lib/time/index.js';
import { stringify } from '../lib/go/values.js';

export type TimestampAction = 'fudge' | 'skip';
export type DuplicateTimestampAction = 'fudge' | 'keep';

export interface TimestampConfig {
  /** Extracted name holding the time text. */
  readonly source: string;
  /** Go layout, shorthand name or `Unix`/`UnixMs`/`UnixUs`/`UnixNs`. */
  readonly format: string;
  readonly fallback_formats: readonly string[];
  /** IANA zone for custom layouts; absent means none (zone-less values are UTC). */
  readonly location?: string;
  /** `""` means the default, `fudge`. */
  readonly action_on_failure: TimestampAction | '';
  /** `""` means the default, `fudge`. */
  readonly action_on_duplicate_timestamp: DuplicateTimestampAction | '';
}

/** How many streams the stage remembers the last timestamps of. */
export const TIMESTAMP_STREAMS_REMEMBERED = 10_000;

export const timestamp = defineStage<TimestampConfig>({
  name: 'timestamp',
  doc: 'Sets the entry timestamp from an extracted value, parsed with a Go layout, a shorthand or a Unix format.',
  example: `stage.json {
  expressions = { ts = "time" }
}

stage.timestamp {
  source = "ts"
  format = "RFC3339Nano"
}`,
  fields: {
    source: { kind: t.string, required: true, doc: 'Extracted name whose value is parsed.' },
    format: {
      kind: t.string,
      required: true,
      doc: 'Go layout (reference time `Mon Jan 2 15:04:05 MST 2006`), a shorthand such as `RFC3339`, or `Unix`, `UnixMs`, `UnixUs`, `UnixNs`.',
    },
    fallback_formats: { kind: t.list(t.string), default: [], doc: 'Formats tried in order when `format` fails.' },
    location: { kind: t.string, doc: 'IANA time zone for custom layouts; shorthands and Unix formats ignore it.' },
    action_on_failure: {
      kind: t.string,
      default: 'fudge',
      doc: "`fudge` (the stream's last timestamp + 1 ns) or `skip` (keep the timestamp) when parsing fails.",
    },
    action_on_duplicate_timestamp: {
      kind: t.string,
      default: 'fudge',
      doc: '`fudge` (the previous output + 1 ns) or `keep` when an entry parses to the same instant as the one before it in its stream.',
    },
  },
  validate: validateTimestamp,
  build: buildTimestamp,
  // The last timestamps it fudges from are kept per stream.
  partitioning: (config) => ({
    writes: NO_NAMES,
    state: config.action_on_failure === 'skip' && config.action_on_duplicate_timestamp === 'keep' ? { by: 'none' } : { by: 'stream' },
  }),
});

const FAILURE_ACTIONS: readonly string[] = ['skip', 'fudge'];
const DUPLICATE_ACTIONS: readonly string[] = ['keep', 'fudge'];

function validateTimestamp(config: TimestampConfig): void {
  if (config.source === '') throw new FieldError('source', 'timestamp source value is required if timestamp is specified');
  if (config.format === '') throw new FieldError('format', 'timestamp format is required');
  if (config.location !== undefined) {
    try {
      validateLocation(config.location);
    } catch (err) {
      // The reference wraps an error whose text is a format string it never fills in.
      throw new FieldError('location', `invalid location specified: %v: ${(err as Error).message}`);
    }
  }
  if (config.action_on_failure !== '' && !FAILURE_ACTIONS.includes(config.action_on_failure)) {
    throw new FieldError('action_on_failure', `invalid action on failure (supported values are [${FAILURE_ACTIONS.join(' ')}])`);
  }
  if (config.action_on_duplicate_timestamp !== '' && !DUPLICATE_ACTIONS.includes(config.action_on_duplicate_timestamp)) {
    throw new FieldError(
      'action_on_duplicate_timestamp',
      `invalid action on duplicate timestamp (supported values are [${DUPLICATE_ACTIONS.join(' ')}])`,
    );
  }
}

/** What the stage remembers per stream. */
interface StreamTimestamps {
  /** The last instant a value parsed to (compared to spot duplicates). */
  readonly lastParsed: bigint;
  /** The last timestamp the stage gave an entry (the base of every +1 ns). */
  readonly lastOutput: bigint;
}

function buildTimestamp(config: TimestampConfig, ctx: BuildContext): StageImpl {
  validateTimestamp(config);
  const onFailure: TimestampAction = config.action_on_failure || 'fudge';
  const onDuplicate: DuplicateTimestampAction = config.action_on_duplicate_timestamp || 'fudge';
  const parse = compileParser(config);
  const { source } = config;
  const streams = onFailure === 'fudge' || onDuplicate === 'fudge' ? new RecentStreams(TIMESTAMP_STREAMS_REMEMBERED) : undefined;

  return {
    kind: 'map',
    process: (entry) => {
      const parsed = parseSource(own(entry.extracted, source), source, parse, ctx);
      if (parsed === undefined) {
        if (onFailure !== 'fudge' || streams === undefined) return entry;
        const key = labelsKey(entry.labels);
        const last = streams.get(key);
        if (last === undefined) return entry;
        entry.timestamp = last.lastOutput + 1n;
        streams.set(key, { lastParsed: last.lastParsed, lastOutput: entry.timestamp });
        return entry;
      }
      entry.timestamp = parsed;
      if (streams === undefined) return entry;
      const key = labelsKey(entry.labels);
      if (onDuplicate === 'fudge') {
        const last = streams.get(key);
        if (last !== undefined && last.lastParsed === parsed) entry.timestamp = last.lastOutput + 1n;
      }
      streams.set(key, { lastParsed: parsed, lastOutput: entry.timestamp });
      return entry;
    },
  };
}

/** `format`, then each fallback; when all fail, the first format's error is the one reported. */
function compileParser(config: TimestampConfig): (value: string, nowNs: bigint) => bigint {
  const parsers: TimestampParser[] = [config.format, ...config.fallback_formats].map((format) =>
    compileTimestampFormat(format, config.location),
  );
  if (parsers.length === 1) {
    const only = parsers[0]!;
    return (value, nowNs) => only.parse(value, nowNs);
  }
  return (value, nowNs) => {
    let firstError: unknown;
    for (const parser of parsers) {
      try {
        return parser.parse(value, nowNs);
      } catch (err) {
        firstError ??= err;
      }
    }
    throw firstError;
  };
}

/** The parsed instant, or undefined (after a debug log) when the source is unusable. */
function parseSource(raw: unknown, source: string, parse: (value: string, nowNs: bigint) => bigint, ctx: BuildContext): bigint | undefined {
  if (raw === undefined) {
    ctx.debug('extracted data did not contain a timestamp', { source });
    return undefined;
  }
  const value = stringify(raw);
  if (value === undefined) {
    ctx.debug('failed to convert extracted time to string', { source });
    return undefined;
  }
  try {
    return parse(value, ctx.clock.nowNs());
  } catch (err) {
    ctx.debug('failed to parse time', { error: (err as Error).message, value });
    return undefined;
  }
}

/**
 * A least-recently-used map of stream key → timestamps: reading or writing a stream makes it the
 * most recent; past `capacity` streams the least recent one is forgotten.
 */
class RecentStreams {
  private readonly byKey = new Map<string, StreamTimestamps>();

  constructor(private readonly capacity: number) {}

  get(key: string): StreamTimestamps | undefined {
    const value = this.byKey.get(key);
    if (value !== undefined) {
      this.byKey.delete(key);
      this.byKey.set(key, value);
    }
    return value;
  }

  set(key: string, value: StreamTimestamps): void {
    this.byKey.delete(key);
    this.byKey.set(key, value);
    if (this.byKey.size > this.capacity) this.byKey.delete(this.byKey.keys().next().value!);
  }
}
