import { describe, expect, it } from 'vitest';
import { describeChange, entryChanges, entryParts, type EntryParts } from '../../../core/inspect/entry-diff.js';
import { type Entry, makeEntry } from '../../../core/entry.js';

const before = makeEntry({
  labels: { app: 'api', env: 'dev' },
  line: 'a',
  timestamp: 1n,
  structuredMetadata: [{ name: 'trace', value: 't1' }],
  extracted: { n: 1n, gone: true },
});
const after = makeEntry({
  labels: { app: 'api', env: 'prod', level: 'info' },
  line: 'b',
  timestamp: 2n,
  structuredMetadata: [],
  extracted: { n: 1, added: { x: [1] } },
});

describe('entryChanges', () => {
  it('lists each changed part in order: labels, line, timestamp, metadata, extracted', () => {
    expect(entryChanges(entryParts(before), entryParts(after))).toEqual([
      { part: 'labels', key: 'env', op: 'changed', before: 'dev', after: 'prod' },
      { part: 'labels', key: 'level', op: 'added', after: 'info' },
      { part: 'line', key: '', op: 'changed', before: 'a', after: 'b' },
      { part: 'timestamp', key: '', op: 'changed', before: 1n, after: 2n },
      { part: 'structured_metadata', key: 'trace', op: 'removed', before: 't1' },
      { part: 'extracted', key: 'added', op: 'added', after: { x: [1] } },
      { part: 'extracted', key: 'gone', op: 'removed', before: true },
    ]);
  });

  it('compares values as JSON, so a bigint equals the number the JSON form shows', () => {
    const json: EntryParts = { labels: {}, line: '', timestamp: '1970-01-01T00:00:00Z', structured_metadata: {}, extracted: { n: 1 } };
    expect(entryChanges(json, { ...json, extracted: { n: 1n } })).toEqual([]);
  });

  it('diffs the JSON form too, timestamps as text', () => {
    const json: EntryParts = { labels: {}, line: '', timestamp: '1970-01-01T00:00:00Z', structured_metadata: { a: '1' }, extracted: {} };
    expect(entryChanges(json, { ...json, timestamp: '1970-01-01T00:00:01Z', structured_metadata: { a: '2' } })).toEqual([
      { part: 'timestamp', key: '', op: 'changed', before: '1970-01-01T00:00:00Z', after: '1970-01-01T00:00:01Z' },
      { part: 'structured_metadata', key: 'a', op: 'changed', before: '1', after: '2' },
    ]);
  });

  it('reports keys named like Object.prototype members as added', () => {
    const json: EntryParts = { labels: {}, line: '', timestamp: '', structured_metadata: {}, extracted: {} };
    expect(entryChanges(json, { ...json, labels: { constructor: 'x' } })).toEqual([
      { part: 'labels', key: 'constructor', op: 'added', after: 'x' },
    ]);
  });
});

describe('describeChange', () => {
  const diffEntries = (a: Entry, b: Entry) => entryChanges(entryParts(a), entryParts(b)).map(describeChange);

  it('words each change as --inspect prints it', () => {
    expect(diffEntries(before, after)).toEqual([
      'labels ~env="dev"->"prod"',
      'labels +level="info"',
      'line "a" -> "b"',
      'timestamp 1 -> 2',
      'structured_metadata -trace',
      'extracted +added={"x":[1]}',
      'extracted -gone',
    ]);
  });

  it('finds nothing between equal entries', () => {
    expect(diffEntries(before, { ...before })).toEqual([]);
  });

  it('shows bigints in a changed value as numbers', () => {
    expect(describeChange({ part: 'extracted', key: 'n', op: 'changed', before: 1n, after: { m: 2n } })).toBe('extracted ~n=1->{"m":2}');
  });
});
