import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../../core/entry.js';
import { snappyDecode } from '../../../lib/loki/compression.js';
import { parseLabelText } from '../../../lib/loki/label-text.js';
import { decodePushRequest } from '../../../lib/loki/wire.js';
import { encodeBatch, entryBytes, TenantQueue, tenantOf, type QueuedEntry } from '../../../sinks/loki/batch.js';

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

/** The batch the queue forms, by a scan of everything waiting: the oldest entry's tenant, in order, up to `max` bytes. */
function modelTake(waiting: Array<{ tenant: string; bytes: number; id: number }>, max: number) {
  const tenant = waiting[0]!.tenant;
  const taken: typeof waiting = [];
  let bytes = 0;
  for (const item of waiting) {
    if (item.tenant !== tenant) continue;
    if (taken.length > 0 && bytes + item.bytes > max) break;
    taken.push(item);
    bytes += item.bytes;
  }
  for (const item of taken) waiting.splice(waiting.indexOf(item), 1);
  return taken;
}

describe('TenantQueue', () => {
  it('forms the same batches as a scan of the whole queue, through any mix of pushes and takes', () => {
    const op = fc.oneof(
      fc.record({ push: fc.record({ tenant: fc.constantFrom('a', 'b', 'c', ''), bytes: fc.integer({ min: 0, max: 40 }) }) }),
      fc.record({ take: fc.integer({ min: 0, max: 100 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const queue = new TenantQueue<{ tenant: string; bytes: number; id: number }>();
        const model: Array<{ tenant: string; bytes: number; id: number }> = [];
        let id = 0;
        for (const o of ops) {
          if ('push' in o) {
            const item = { ...o.push, id: id++ };
            queue.push(item);
            model.push(item);
          } else if (model.length > 0) {
            expect(queue.peek()).toBe(model[0]);
            expect(queue.takeBatch(o.take)).toEqual(modelTake(model, o.take));
          }
          expect(queue.length).toBe(model.length);
        }
        expect(queue.takeAll()).toEqual(model);
        expect(queue.length).toBe(0);
        expect(queue.peek()).toBeUndefined();
      }),
      { numRuns },
    );
  });
});
