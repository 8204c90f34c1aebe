import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { type EntryOutputFormat, entryJsonPieces, entryToJson, formatEntries, formatEntry } from '../../core/entry-json.js';
import { formatRFC3339Nano } from '../../lib/time/rfc3339.js';
import { entry as entryArbitrary } from '../../testing/arbitraries.js';

/** The JSON form as it was first written: a view object through JSON.stringify. */
function viewJson(entry: Entry, withExtracted: boolean): string {
  const labels: Record<string, string> = {};
  for (const name of Object.keys(entry.labels).sort()) labels[name] = entry.labels[name]!;
  const view: Record<string, unknown> = {
    labels,
    line: entry.line,
    timestamp: formatRFC3339Nano(entry.timestamp),
    structured_metadata: Object.fromEntries(entry.structuredMetadata.map((p) => [p.name, p.value])),
  };
  if (withExtracted) view.extracted = entry.extracted;
  return JSON.stringify(view, (_key, value) => (typeof value === 'bigint' ? Number(value) : value));
}

/** Plain text around one character at the edge of what JSON.stringify escapes. */
const edgeString = fc
  .tuple(
    fc.string({ maxLength: 8 }),
    fc.constantFrom('\u001f', ' ', '\u007f', '\ud7ff', '\ud800', '\udbff', '\udc00', '\udfff', '\ue000', '"', '\\', '\u2028'),
    fc.string({ maxLength: 8 }),
  )
  .map(([before, edge, after]) => before + edge + after);

const awkwardKey = fc.constantFrom('0', '10', '2', 'a"b', 'é', '\u2028', '__proto__x', 'z');
const awkwardEntry: fc.Arbitrary<Entry> = fc.record({
  labels: fc.dictionary(awkwardKey, fc.oneof(fc.string(), edgeString)),
  line: fc.string({ unit: 'binary' }),
  timestamp: fc.bigInt({ min: -62135596800000000000n, max: 253402300799999999999n }),
  structuredMetadata: fc.array(fc.record({ name: awkwardKey, value: fc.string() }), { maxLength: 4 }),
  extracted: fc.dictionary(
    awkwardKey,
    fc.oneof(fc.string(), fc.integer(), fc.bigInt(), fc.boolean(), fc.constant(null), fc.array(fc.string())),
  ),
});

/** Keys an object orders or reads unlike the rest: array indices (and near misses), `__proto__`, `toJSON`. */
const awkwardExtractedKey = fc.oneof(
  awkwardKey,
  fc.constantFrom('', '1', '01', '-1', '4294967294', '4294967295', '__proto__', 'constructor', 'toJSON', 'content'),
  fc.string({ unit: 'binary', maxLength: 6 }),
);

/** Every kind of value JSON.stringify treats its own way, flat or nested. */
const awkwardExtractedValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'binary', minLength: 40, maxLength: 80 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udc00', 'é', '😀', 'a') }),
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 1e21, 1e-7, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.integer(),
  fc.bigInt(),
  fc.constantFrom(10n ** 400n, -(10n ** 400n), 2n ** 53n + 1n),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(Symbol('s')),
  fc.constant(() => 'from toJSON'),
  fc.date(),
  fc.jsonValue({ maxDepth: 2 }),
  fc.array(fc.oneof(fc.bigInt(), fc.string(), fc.constant(undefined))),
  fc.dictionary(awkwardExtractedKey, fc.oneof(fc.string(), fc.bigInt(), fc.constant(undefined)), { maxKeys: 3 }),
);

const awkwardExtracted = fc.oneof(
  fc.dictionary(awkwardExtractedKey, awkwardExtractedValue, { maxKeys: 8 }),
  // Flat maps, the fast path, are the common case: give them most runs.
  fc.dictionary(
    awkwardExtractedKey,
    fc.oneof(fc.string({ unit: 'binary' }), edgeString, fc.double(), fc.bigInt(), fc.boolean(), fc.constant(null), fc.constant(undefined)),
    { maxKeys: 8 },
  ),
);

/** Entries whose extracted map may carry the line itself, as stage.cri's `content` does. */
const extractedEntry: fc.Arbitrary<Entry> = fc
  .record({ entry: awkwardEntry, extracted: awkwardExtracted, lineAs: fc.constantFrom('none', 'same', 'copy') })
  .map(({ entry, extracted, lineAs }) => {
    if (lineAs === 'same') extracted.content = entry.line;
    // An equal string that is another object, as a stage that rebuilt it would hold.
    if (lineAs === 'copy') extracted.content = ` ${entry.line}`.slice(1);
    return { ...entry, extracted };
  });

/**
 * Runs of entries drawing label names and extracted keys from a few, in varying orders, so the
 * layouts the writer keeps between entries are reused, changed and reused again.
 */
const poolKey = fc.constantFrom('app', 'job', 'pod', '0', '7', 'a"b', 'é');
const entryRun: fc.Arbitrary<Entry[]> = fc.array(
  fc.record({
    labels: fc.dictionary(poolKey, fc.string({ unit: 'binary' }), { maxKeys: 4 }),
    line: fc.string({ unit: 'binary' }),
    timestamp: fc.bigInt({ min: 1_700_000_000_000_000_000n, max: 1_700_000_003_000_000_000n }),
    structuredMetadata: fc.array(fc.record({ name: poolKey, value: fc.string() }), { maxLength: 2 }),
    extracted: fc.dictionary(poolKey, fc.oneof(fc.string(), fc.integer(), fc.constant(undefined), fc.array(fc.nat())), { maxKeys: 4 }),
  }),
  { maxLength: 30 },
);

/** Text longer than a short name, then one character at the edge of what JSON.stringify escapes. */
const longEdgeString = fc
  .tuple(
    fc.string({ minLength: 40, maxLength: 120 }),
    fc.constantFrom('\u0000', '\u001f', '"', '\\', '\ud800', '\udfff', '\ud83d\ude00', '\u2028', 'é', 'a'),
    fc.string({ maxLength: 8 }),
  )
  .map(([before, edge, after]) => before + edge + after);

/**
 * Values drawn again and again from more than the writer keeps per label name, awkward ones among
 * them: quotes, backslashes, control characters, lone and paired surrogates, non-ASCII, U+2028.
 */
const recurringValue = fc.constantFrom(
  'stdout',
  'stderr',
  'info',
  'WARN',
  'a"b',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  '\u0000',
  'é',
  '😀',
  '\ud800',
  'x\udc00',
  '\u2028',
  '',
  'checkout-7d9f8b-x2k4p',
  `plain text longer than a short name ${'and then some '.repeat(4)}`,
  `a "quoted" word in text longer than a short name ${'and then some '.repeat(4)}`,
);

/** Lines that end where a cut between JSON strings could be mistaken: escaped quotes, backslashes, commas. */
const cutEdgeLine = fc.stringMatching(/^[a\\",\][]{0,12}$/);

/** Runs whose labels, lines and extracted values recur, so that the text kept for them is reused, replaced and reused. */
const recurringRun: fc.Arbitrary<Entry[]> = fc.array(
  fc.record({
    labels: fc.dictionary(fc.constantFrom('app', 'pod', 'stream', 'level'), recurringValue, { maxKeys: 4 }),
    line: fc.oneof(recurringValue, longEdgeString, cutEdgeLine, fc.string({ unit: 'binary' })),
    timestamp: fc.bigInt({ min: 1_700_000_000_000_000_000n, max: 1_700_000_003_000_000_000n }),
    structuredMetadata: fc.array(fc.record({ name: fc.constantFrom('trace', 'span'), value: recurringValue }), { maxLength: 2 }),
    extracted: fc.dictionary(
      fc.constantFrom('flags', 'stream', 'time', 'msg', 'n'),
      fc.oneof(recurringValue, longEdgeString, fc.integer()),
      {
        maxKeys: 5,
      },
    ),
  }),
  { maxLength: 60 },
);

describe('entryToJson', () => {
  it('writes the same bytes as JSON.stringify of the view object', () => {
    fc.assert(
      fc.property(fc.oneof(entryArbitrary(), awkwardEntry), fc.boolean(), (entry, withExtracted) => {
        expect(entryToJson(entry, withExtracted)).toBe(viewJson(entry, withExtracted));
      }),
    );
  });

  it('writes extracted values of every kind as JSON.stringify does', () => {
    fc.assert(
      fc.property(extractedEntry, (entry) => {
        expect(entryToJson(entry, true)).toBe(viewJson(entry, true));
      }),
      { numRuns: 500 },
    );
  });

  it('writes each entry of a run alike whatever the entries before it', () => {
    fc.assert(
      fc.property(entryRun, fc.boolean(), (entries, withExtracted) => {
        expect(entries.map((e) => entryToJson(e, withExtracted))).toEqual(entries.map((e) => viewJson(e, withExtracted)));
      }),
    );
  });

  it('writes each entry of a run alike when its label values, lines and extracted values recur', () => {
    fc.assert(
      fc.property(recurringRun, fc.boolean(), (entries, withExtracted) => {
        expect(entries.map((e) => entryToJson(e, withExtracted))).toEqual(entries.map((e) => viewJson(e, withExtracted)));
      }),
      { numRuns: 300 },
    );
  });

  it('writes a label value that comes again as it did the first time, among more values than are kept', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(recurringValue, recurringValue), { minLength: 2, maxLength: 80 }), (values) => {
        const entries: Entry[] = values.map(([app, stream]) => ({
          labels: { stream, app },
          line: 'x',
          timestamp: 0n,
          structuredMetadata: [],
          extracted: {},
        }));
        expect(entries.map((e) => entryToJson(e, false))).toEqual(entries.map((e) => viewJson(e, false)));
      }),
    );
  });

  it('writes a short value that comes again as it did the first time, whether it needs escapes or not', () => {
    const twoValues = fc.constantFrom('plain', 'a"b', 'tab\there', '\ud800', 'é', '');
    fc.assert(
      fc.property(fc.array(fc.tuple(twoValues, twoValues), { minLength: 2, maxLength: 20 }), fc.boolean(), (values, withLine) => {
        const entries: Entry[] = values.map(([flags, stream]) => ({
          labels: {},
          line: withLine ? flags : 'x',
          timestamp: 0n,
          structuredMetadata: [],
          extracted: { flags, stream },
        }));
        expect(entries.map((e) => entryToJson(e, true))).toEqual(entries.map((e) => viewJson(e, true)));
      }),
    );
  });

  it('writes long strings with a character to escape near their end as JSON.stringify does', () => {
    fc.assert(
      fc.property(longEdgeString, longEdgeString, (line, value) => {
        const entry: Entry = { labels: { app: value }, line, timestamp: 0n, structuredMetadata: [], extracted: { value, content: line } };
        expect(entryToJson(entry, true)).toBe(viewJson(entry, true));
      }),
    );
  });

  it('writes an extracted map that is not a plain object as JSON.stringify does', () => {
    class Fields {
      constructor(readonly a: string) {}
      toJSON() {
        return { wrapped: this.a };
      }
    }
    const base: Entry = { labels: {}, line: 'x', timestamp: 0n, structuredMetadata: [], extracted: {} };
    for (const extracted of [
      Object.assign(Object.create(null), { b: 1, a: 'x' }),
      new Fields('v'),
      ['a', 1n] as unknown as Record<string, unknown>,
    ]) {
      const entry = { ...base, extracted };
      expect(entryToJson(entry, true)).toBe(viewJson(entry, true));
    }
  });

  it('sorts labels and writes bigint extracted values as numbers', () => {
    const entry: Entry = {
      labels: { job: 'x', app: 'a"b' },
      line: 'l\n',
      timestamp: 1_700_000_000_123_456_789n,
      structuredMetadata: [{ name: 'trace', value: '1' }],
      extracted: { n: 5n, s: 'v' },
    };
    expect(entryToJson(entry, true)).toBe(
      '{"labels":{"app":"a\\"b","job":"x"},"line":"l\\n","timestamp":"2023-11-14T22:13:20.123456789Z","structured_metadata":{"trace":"1"},"extracted":{"n":5,"s":"v"}}',
    );
  });
});

describe('formatEntries', () => {
  it('gives for a run of entries what formatEntry gives for each: the line, or the bytes of JSON.stringify of the view object', () => {
    fc.assert(
      fc.property(
        fc.oneof(recurringRun, entryRun, fc.array(fc.oneof(entryArbitrary(), awkwardEntry), { maxLength: 20 })),
        fc.constantFrom<EntryOutputFormat>('json', 'entry', 'line'),
        (entries, format) => {
          const lines: string[] = [];
          formatEntries(entries, format, lines);
          const reference = (e: Entry) => (format === 'line' ? e.line : viewJson(e, format === 'json'));
          expect(lines.slice(0, entries.length)).toEqual(entries.map(reference));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('formatEntry', () => {
  const entry: Entry = { labels: { app: 'api' }, line: 'GET /', timestamp: 0n, structuredMetadata: [], extracted: { path: '/' } };

  it('writes json, entry and line output', () => {
    expect(formatEntry(entry, 'json')).toBe(
      '{"labels":{"app":"api"},"line":"GET /","timestamp":"1970-01-01T00:00:00.000000000Z","structured_metadata":{},"extracted":{"path":"/"}}',
    );
    expect(formatEntry(entry, 'entry')).toBe(
      '{"labels":{"app":"api"},"line":"GET /","timestamp":"1970-01-01T00:00:00.000000000Z","structured_metadata":{}}',
    );
    expect(formatEntry(entry, 'line')).toBe('GET /');
  });
});

describe('entryJsonPieces', () => {
  it('gives the text entryToJson gives, the line in pieces of at most the piece length escaped', () => {
    fc.assert(
      fc.property(entryArbitrary(), fc.integer({ min: 2, max: 9 }), fc.boolean(), (entry, pieceLength, withExtracted) => {
        const withLineCopy = { ...entry, extracted: { ...entry.extracted, copy: entry.line } };
        for (const e of [entry, withLineCopy]) {
          const pieces = [...entryJsonPieces(e, withExtracted, pieceLength)];
          expect(pieces.join('')).toBe(entryToJson(e, withExtracted));
          // Each piece of the line is at most pieceLength code units, each escaped to at most six.
          const around = entryToJson({ ...e, line: '' }, withExtracted).length;
          for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(Math.max(6 * pieceLength, around));
        }
      }),
    );
  });
});
