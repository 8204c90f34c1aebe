import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { entryToJson, formatEntry } from '../../core/entry-json.js';
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

const awkwardKey = fc.constantFrom('0', '10', '2', 'a"b', 'é', '\u2028', '__proto__x', 'z');
const awkwardEntry: fc.Arbitrary<Entry> = fc.record({
  labels: fc.dictionary(awkwardKey, fc.string()),
  line: fc.string({ unit: 'binary' }),
  timestamp: fc.bigInt({ min: -62135596800000000000n, max: 253402300799999999999n }),
  structuredMetadata: fc.array(fc.record({ name: awkwardKey, value: fc.string() }), { maxLength: 4 }),
  extracted: fc.dictionary(
    awkwardKey,
    fc.oneof(fc.string(), fc.integer(), fc.bigInt(), fc.boolean(), fc.constant(null), fc.array(fc.string())),
  ),
});

describe('entryToJson', () => {
  it('writes the same bytes as JSON.stringify of the view object', () => {
    fc.assert(
      fc.property(fc.oneof(entryArbitrary(), awkwardEntry), fc.boolean(), (entry, withExtracted) => {
        expect(entryToJson(entry, withExtracted)).toBe(viewJson(entry, withExtracted));
      }),
    );
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
