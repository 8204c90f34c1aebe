/**
 * fast-check arbitraries for what flows through a pipeline: label names and values (valid and
 * invalid), label sets, timestamps, whole entries and streams of entries with arrival times.
 * Log lines of the real formats are in `log-lines.ts`.
 */
import fc from 'fast-check';
import type { Entry, Labels, MetadataPair } from '../core/entry.js';
import { logLine } from './log-lines.js';

/** An entry and the virtual time, in ms from the start of a run, at which it arrives. */
export interface TimedEntry {
  readonly atMs: number;
  readonly entry: Entry;
}

/** A character that encodes to UTF-8 (no lone surrogate), ASCII most of the time. */
export const anyCharacter: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 4 },
    { arbitrary: fc.integer({ min: 0, max: 0x10ffff }).filter((cp) => cp < 0xd800 || cp > 0xdfff), weight: 1 },
  )
  .map((cp) => String.fromCodePoint(cp));

const LONE_SURROGATES = ['\uD800', '\uDBFF', '\uDC00', '\uDFFF'] as const;

/** Text holding at least one lone surrogate: a JS string that has no UTF-8 encoding. */
const withLoneSurrogate: fc.Arbitrary<string> = fc
  .tuple(
    fc.string({ unit: anyCharacter, maxLength: 4 }),
    fc.constantFrom(...LONE_SURROGATES),
    fc.string({ unit: anyCharacter, maxLength: 4 }),
  )
  .map(([before, surrogate, after]) => before + surrogate + after);

const COMMON_LABEL_NAMES = [
  'app',
  'env',
  'job',
  'level',
  'namespace',
  'pod',
  'container',
  'stream',
  'filename',
  'host',
  'service_name',
  'cluster',
] as const;
const LEGACY_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,11}$/;

export interface LabelNameOptions {
  /** Invalid names instead: empty, or (for UTF-8 names) holding a lone surrogate. Default false. */
  readonly invalid?: boolean;
  /** Names of the legacy scheme `[a-zA-Z_][a-zA-Z0-9_]*` only; invalid ones then break it. */
  readonly legacy?: boolean;
}

/**
 * Label names. Valid names are common ones, legacy-scheme names and UTF-8 names such as
 * `k8s.io/app` (the reference's default scheme accepts any valid UTF-8); none starts with the
 * reserved `__`.
 *
 * @example fc.sample(labelName(), 3) // ['app', 'k8s.io/app', 'xY_3']
 */
export function labelName(options: LabelNameOptions = {}): fc.Arbitrary<string> {
  const legacy = fc.oneof(
    fc.constantFrom(...COMMON_LABEL_NAMES),
    fc.stringMatching(LEGACY_NAME).filter((n) => !n.startsWith('__')),
  );
  if (options.invalid) {
    const notLegacy = fc.constantFrom('1abc', 'a-b', 'k8s.io/app', 'é', 'a b', 'service.name');
    return options.legacy ? fc.oneof(fc.constant(''), notLegacy, withLoneSurrogate) : fc.oneof(fc.constant(''), withLoneSurrogate);
  }
  if (options.legacy) return legacy;
  const utf8 = fc.oneof(
    fc.constantFrom('k8s.io/app', 'service.name', '1abc', 'a-b', 'é', '名前', 'with space', '🙂'),
    fc.string({ unit: anyCharacter, minLength: 1, maxLength: 8 }).filter((n) => !n.startsWith('__')),
  );
  return fc.oneof({ arbitrary: legacy, weight: 3 }, { arbitrary: utf8, weight: 1 });
}

export interface LabelValueOptions {
  /** Values that have no UTF-8 encoding instead. Default false. */
  readonly invalid?: boolean;
  /** Allows the empty value (which the reference treats as an absent label). Default false. */
  readonly allowEmpty?: boolean;
}

/** Label values: common words and arbitrary UTF-8 text. */
export function labelValue(options: LabelValueOptions = {}): fc.Arbitrary<string> {
  if (options.invalid) return withLoneSurrogate;
  const values = fc.oneof(
    { arbitrary: fc.constantFrom('api', 'web', 'prod', 'dev', 'info', 'error', 'stdout', '/var/log/app.log'), weight: 2 },
    { arbitrary: fc.string({ unit: anyCharacter, minLength: 1, maxLength: 12 }), weight: 1 },
  );
  return options.allowEmpty ? fc.oneof(fc.constant(''), values) : values;
}

export interface LabelSetOptions {
  readonly names?: fc.Arbitrary<string>;
  readonly values?: fc.Arbitrary<string>;
  readonly minSize?: number;
  readonly maxSize?: number;
}

/** Label sets of valid names and values (at most 4 labels by default). */
export function labelSet(options: LabelSetOptions = {}): fc.Arbitrary<Labels> {
  return fc
    .uniqueArray(fc.tuple(options.names ?? labelName(), options.values ?? labelValue()), {
      selector: ([name]) => name,
      minLength: options.minSize ?? 0,
      maxLength: options.maxSize ?? 4,
    })
    .map(toRecord);
}

// 2000-01-01T00:00:00Z and 2100-01-01T00:00:00Z.
const YEAR_2000_NS = 946_684_800_000_000_000n;
const YEAR_2100_NS = 4_102_444_800_000_000_000n;

export interface TimestampOptions {
  readonly min?: bigint;
  readonly max?: bigint;
}

/**
 * Timestamps in nanoseconds since the epoch (bigint): anywhere from 2000 to 2100 by default,
 * often on whole seconds or milliseconds, which is where formatting quirks hide.
 */
export function timestampNs(options: TimestampOptions = {}): fc.Arbitrary<bigint> {
  const min = options.min ?? YEAR_2000_NS;
  const max = options.max ?? YEAR_2100_NS;
  const any = fc.bigInt({ min, max });
  const clamp = (n: bigint) => (n < min ? min : n > max ? max : n);
  return fc.oneof(
    { arbitrary: any, weight: 2 },
    { arbitrary: any.map((n) => clamp(n - (n % 1_000_000_000n))), weight: 1 },
    { arbitrary: any.map((n) => clamp(n - (n % 1_000_000n))), weight: 1 },
  );
}

/** Structured metadata pairs with distinct names. */
export function structuredMetadata(options: { readonly maxLength?: number } = {}): fc.Arbitrary<MetadataPair[]> {
  return fc
    .uniqueArray(fc.tuple(labelName({ legacy: true }), labelValue()), { selector: ([name]) => name, maxLength: options.maxLength ?? 2 })
    .map((pairs) => pairs.map(([name, value]) => ({ name, value })));
}

/** Values a stage may find in the extracted map: text, numbers, booleans, null and JSON-like data. */
export const extractedValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.string({ unit: anyCharacter, maxLength: 12 }), weight: 4 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.boolean(), weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);

export interface EntryOptions {
  readonly labels?: fc.Arbitrary<Labels>;
  readonly line?: fc.Arbitrary<string>;
  readonly timestamp?: fc.Arbitrary<bigint>;
  readonly structuredMetadata?: fc.Arbitrary<MetadataPair[]>;
  /** The extracted map an entry arrives with (a pipeline seeds its labels on top). Default `{}`. */
  readonly extracted?: fc.Arbitrary<Record<string, unknown>>;
}

/** Whole entries: labels, a log line of any format, a timestamp, metadata. */
export function entry(options: EntryOptions = {}): fc.Arbitrary<Entry> {
  return fc
    .record({
      labels: options.labels ?? labelSet(),
      line: options.line ?? logLine(),
      timestamp: options.timestamp ?? timestampNs(),
      structuredMetadata: options.structuredMetadata ?? structuredMetadata(),
      extracted: options.extracted ?? fc.constant({}),
    })
    .map((parts) => ({ ...parts, labels: { ...parts.labels }, extracted: { ...parts.extracted } }));
}

export interface EntryStreamOptions extends Omit<EntryOptions, 'labels'> {
  /** Label sets of the streams entries are spread over; default 1 to 3 sets from `labelSet()`. */
  readonly streams?: fc.Arbitrary<Labels[]>;
  readonly minLength?: number;
  /** Default 8. */
  readonly maxLength?: number;
  /** Time between two arrivals in ms; default mostly 0 to 10 ms, sometimes up to 5 s. */
  readonly gapMs?: fc.Arbitrary<number>;
}

/**
 * Entries spread over a few streams (label sets), each with an arrival time; times never go
 * back. Feed them to `runStage` to exercise per-stream state and idle timers on virtual time.
 */
export function entryStream(options: EntryStreamOptions = {}): fc.Arbitrary<TimedEntry[]> {
  const streams = options.streams ?? fc.array(labelSet({ maxSize: 2 }), { minLength: 1, maxLength: 3 });
  const gap =
    options.gapMs ??
    fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.nat(10), weight: 2 }, { arbitrary: fc.nat(5000), weight: 1 });
  const item = fc.tuple(fc.nat(), entry({ ...options, labels: fc.constant({}) }), gap);
  return fc
    .tuple(streams, fc.array(item, { minLength: options.minLength ?? 0, maxLength: options.maxLength ?? 8 }))
    .map(([pool, items]) => {
      let atMs = 0;
      return items.map(([streamIndex, base, gapMs]) => {
        atMs += gapMs;
        const labels = pool.length === 0 ? {} : { ...pool[streamIndex % pool.length]! };
        return {
          atMs,
          entry: { ...base, labels, structuredMetadata: base.structuredMetadata.map((p) => ({ ...p })), extracted: { ...base.extracted } },
        };
      });
    });
}

function toRecord(pairs: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) {
    // Names come from generators that may produce `__proto__`-like text: keep them own keys.
    Object.defineProperty(out, name, { value, writable: true, enumerable: true, configurable: true });
  }
  return out;
}
