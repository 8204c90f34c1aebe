import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { snappyDecode } from '../../../lib/loki/compression.js';
import { parseLabelText } from '../../../lib/loki/label_text.js';
import { decodePushRequest } from '../../../lib/loki/wire.js';
import { encodeBatch, entryBytes, tenantOf, type QueuedEntry } from '../../../sinks/loki/batch.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

const queued = (entry: Entry): QueuedEntry => ({ entry, tenant: tenantOf(entry, ''), bytes: entryBytes(entry) });
const entry = (line: string, labels: Record<string, string>, timestamp = 1n): Entry => ({
  labels,
  line,
  timestamp,
  structuredMetadata: [],
  extracted: {},
});

describe('push batches', () => {
  it('groups entries into streams in order of first appearance, external labels under the entry’s own', () => {
    const batch = encodeBatch(
      [entry('1', { app: 'a', __tenant_id__: 't' }), entry('2', { app: 'b' }), entry('3', { app: 'a', __tenant_id__: 't' })].map(queued),
      { app: 'external', cluster: 'eu' },
    );
    const streams = decodePushRequest(snappyDecode(batch.body, 1 << 20));
    expect(streams.map((s) => [s.labels, s.entries.map((e) => e.line)])).toEqual([
      ['{app="a", cluster="eu"}', ['1', '3']],
      ['{app="b", cluster="eu"}', ['2']],
    ]);
    expect(batch.streams).toBe(2);
  });

  it('counts line and structured metadata bytes, in UTF-8', () => {
    expect(entryBytes({ ...entry('héllo', {}), structuredMetadata: [{ name: 'k', value: 'vv' }] })).toBe(9);
  });

  it('takes the tenant from the label, else the default', () => {
    expect(tenantOf(entry('x', { __tenant_id__: 'a' }), 'd')).toBe('a');
    expect(tenantOf(entry('x', { __tenant_id__: '' }), 'd')).toBe('d');
    expect(tenantOf(entry('x', {}), 'd')).toBe('d');
  });

  it('loses no entry and keeps each stream’s order, for any label sets', () => {
    const labels = fc.dictionary(fc.constantFrom('app', 'env', 'pod'), fc.constantFrom('x', 'y', 'z é'), { maxKeys: 3 });
    fc.assert(
      fc.property(fc.array(fc.tuple(labels, fc.string({ maxLength: 10 })), { maxLength: 30 }), (items) => {
        const entries = items.map(([l, line], i) => entry(line, l, BigInt(i)));
        if (entries.length === 0) return;
        const streams = decodePushRequest(snappyDecode(encodeBatch(entries.map(queued), {}).body, 1 << 20));
        const decoded = streams.flatMap((s) => s.entries.map((e) => ({ labels: parseLabelText(s.labels), i: Number(e.timestampNs) })));
        expect(decoded.length).toBe(entries.length);
        for (const d of decoded) expect(d.labels).toEqual(entries[d.i]!.labels);
        for (const s of streams) {
          const order = s.entries.map((e) => e.timestampNs);
          expect(order).toEqual([...order].sort((a, b) => (a < b ? -1 : 1)));
        }
      }),
      { numRuns },
    );
  });
});
