import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a32 } from '../../../lib/fnv1a.js';
import { layoutDescription, parseLayoutDescription, partitionOf, partitionSubject } from '../../../lib/jetstream/partition.js';

describe('partitions', () => {
  it('hashes with FNV-1a 32 over UTF-8', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('hashes a string as its UTF-8 bytes, lone surrogates as U+FFFD', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        let hash = 0x811c9dc5;
        for (const byte of Buffer.from(text, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193);
        expect(fnv1a32(text)).toBe(hash >>> 0);
      }),
    );
  });

  it('maps a stream always to the same partition', () => {
    expect(partitionOf('{app="web", pod="pod-1"}', 12)).toBe(fnv1a32('{app="web", pod="pod-1"}') % 12);
    expect(partitionSubject('logs', 7)).toBe('logs.7');
  });

  it('records and reads the layout in the stream description', () => {
    expect(layoutDescription('logs.in', 12)).toBe('rivulet logs: subject_prefix=logs.in partitions=12');
    expect(parseLayoutDescription(layoutDescription('logs.in', 12))).toEqual({ prefix: 'logs.in', partitions: 12 });
    expect(parseLayoutDescription('something else')).toBeUndefined();
    expect(parseLayoutDescription(undefined)).toBeUndefined();
  });
});
