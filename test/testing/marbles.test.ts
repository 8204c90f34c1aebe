import { map } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { DEFAULT_START_NS, marbles } from '../../testing/index.js';
import { multiline, pack } from '../../operators/index.js';

const entry = (line: string, labels: Record<string, string> = {}): Entry => ({
  labels,
  line,
  timestamp: 1n,
  structuredMetadata: [],
  extracted: {},
});

describe('marbles', () => {
  it('plays a multiline idle flush out on virtual time', () => {
    marbles(multiline, { firstline: '^start', max_wait_time: '3s' }, ({ cold, expectObservable, stage }) => {
      const input = cold('a b 5s |', { a: entry('start'), b: entry('more') });
      expectObservable(stage(input).pipe(map((e) => e.line))).toBe('3001ms x 2000ms |', { x: 'start\nmore' });
    });
  });

  it('gives the stage a wall clock that follows the frames', () => {
    marbles(pack, { labels: ['app'] }, ({ cold, expectObservable, stage }) => {
      const input = cold('5ms a |', { a: entry('x', { app: 'api' }) });
      expectObservable(stage(input).pipe(map((e) => e.timestamp))).toBe('5ms t |', { t: DEFAULT_START_NS + 5_000_000n });
    });
  });

  it('copies and label-seeds the marble values, never mutating them', () => {
    const a = entry('x', { app: 'api' });
    marbles(pack, { labels: ['app'], ingest_timestamp: false }, ({ cold, expectObservable, stage }) => {
      expectObservable(stage(cold('a|', { a }))).toBe('a|', {
        a: { labels: {}, line: '{"app":"api","_entry":"x"}', timestamp: 1n, structuredMetadata: [], extracted: { app: 'api' } },
      });
    });
    expect(a).toEqual(entry('x', { app: 'api' }));
  });

  it('fails with the frames that differ', () => {
    expect(() =>
      marbles(multiline, { firstline: '^start' }, ({ cold, expectObservable, stage }) => {
        expectObservable(stage(cold('a|', { a: entry('start') })).pipe(map((e) => e.line))).toBe('a|', { a: 'other' });
      }),
    ).toThrow(/Expected values to be strictly deep-equal/);
  });
});
