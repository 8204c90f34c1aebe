/**
 * Turns queued entries into one push request: entries grouped into streams by label set (in
 * order of first appearance, each stream keeping its entries' order), the external labels added
 * under the entry's own, the reserved tenant label removed, then encoded as protobuf and
 * compressed with snappy.
 */
import type { Buffer } from 'node:buffer';
import { TENANT_LABEL, type Entry, type Labels } from '../../core/entry.js';
import { Fifo } from '../../lib/fifo.js';
import { snappyEncode } from '../../lib/loki/compression.js';
import { formatLabelText } from '../../lib/loki/label-text.js';
import { encodePushRequest, utf8Length, type WireEntry } from '../../lib/loki/wire.js';

/** An entry waiting in an endpoint's queue. */
export interface QueuedEntry {
  readonly entry: Entry;
  /** The tenant it is sent as: its `__tenant_id__` label, else the endpoint's `tenant_id`. */
  readonly tenant: string;
  /** Bytes of line and structured metadata: what batch_size and the queue capacity count. */
  readonly bytes: number;
  /** Its record's number in the endpoint's write-ahead log, when the endpoint keeps one. */
  readonly seq?: number;
}

/** The size an entry counts for: its line and its structured metadata names and values. */
export function entryBytes(entry: Entry): number {
  let bytes = utf8Length(entry.line);
  for (const pair of entry.structuredMetadata) bytes += utf8Length(pair.name) + utf8Length(pair.value);
  return bytes;
}

/** The tenant an entry is sent as. */
export function tenantOf(entry: Entry, defaultTenant: string): string {
  const tenant = Object.hasOwn(entry.labels, TENANT_LABEL) ? entry.labels[TENANT_LABEL]! : '';
  return tenant !== '' ? tenant : defaultTenant;
}

/** The labels a stream is sent with: external labels, then the entry's, minus the tenant label. */
export function streamLabels(entry: Entry, externalLabels: Labels): Labels {
  const labels: Labels = { ...externalLabels };
  for (const name in entry.labels) if (name !== TENANT_LABEL) labels[name] = entry.labels[name]!;
  return labels;
}

/** A queued item, taken either in its tenant's batch or (at a drain deadline) with everything left. */
interface Slot<T> {
  readonly item: T;
  taken: boolean;
}

/**
 * An endpoint's queue of entries, kept per tenant as well as in arrival order, so that forming a
 * batch never scans other tenants' entries. The next batch is the tenant of the oldest entry
 * waiting: that tenant's entries, oldest first, up to a byte budget (at least one). Arrival order
 * is a queue of slots, each also in its tenant's queue; a slot taken with its tenant's batch stays
 * behind in arrival order, marked, and is passed over once it reaches the front. Every entry is
 * thus pushed and shifted twice, whatever the number of tenants.
 */
export class TenantQueue<T extends { readonly tenant: string; readonly bytes: number }> {
  private readonly arrivals = new Fifo<Slot<T>>();
  private readonly byTenant = new Map<string, Fifo<Slot<T>>>();
  private waiting = 0;

  /** Entries waiting (not yet taken). */
  get length(): number {
    return this.waiting;
  }

  push(item: T): void {
    const slot: Slot<T> = { item, taken: false };
    this.arrivals.push(slot);
    let own = this.byTenant.get(item.tenant);
    if (!own) {
      own = new Fifo();
      this.byTenant.set(item.tenant, own);
    }
    own.push(slot);
    this.waiting++;
  }

  /** The oldest entry waiting, left in place. */
  peek(): T | undefined {
    let head = this.arrivals.peek();
    while (head?.taken) {
      this.arrivals.shift();
      head = this.arrivals.peek();
    }
    return head?.item;
  }

  /** The oldest entry's tenant's entries, in order, up to `maxBytes` (at least one). */
  takeBatch(maxBytes: number): T[] {
    const oldest = this.peek();
    if (oldest === undefined) return [];
    const own = this.byTenant.get(oldest.tenant)!;
    const taken: T[] = [];
    let bytes = 0;
    for (let slot = own.peek(); slot !== undefined; slot = own.peek()) {
      if (taken.length > 0 && bytes + slot.item.bytes > maxBytes) break;
      own.shift();
      slot.taken = true;
      taken.push(slot.item);
      bytes += slot.item.bytes;
    }
    if (own.length === 0) this.byTenant.delete(oldest.tenant);
    this.waiting -= taken.length;
    return taken;
  }

  /** Empties the queue and returns what was waiting, in arrival order. */
  takeAll(): T[] {
    const rest: T[] = [];
    for (const slot of this.arrivals.takeAll()) if (!slot.taken) rest.push(slot.item);
    this.byTenant.clear();
    this.waiting = 0;
    return rest;
  }
}

export interface EncodedBatch {
  /** The snappy-compressed protobuf body. */
  readonly body: Buffer;
  /** Size of the protobuf before compression. */
  readonly encodedBytes: number;
  readonly streams: number;
}

/** Encodes queued entries (one tenant) as a push body. */
export function encodeBatch(items: readonly QueuedEntry[], externalLabels: Labels): EncodedBatch {
  const streams = new StreamGroups(externalLabels);
  for (const item of items) {
    const { entry } = item;
    streams.of(entry).entries.push({ timestampNs: entry.timestamp, line: entry.line, structuredMetadata: entry.structuredMetadata });
  }
  const proto = encodePushRequest(streams.list);
  return { body: snappyEncode(proto), encodedBytes: proto.length, streams: streams.list.length };
}

/** A stream being built: its label text and its entries. */
interface BatchStream {
  readonly labels: string;
  readonly entries: WireEntry[];
}

/**
 * Label sets seen in a batch, as a trie of name then value in the labels' own order: the entries
 * of a stream carry their labels in the same order, so an entry finds its stream by lookups
 * alone, without sorting names or building a key for every entry.
 */
interface LabelTrie {
  readonly next: Map<string, Map<string, LabelTrie>>;
  stream?: BatchStream;
}

/**
 * The streams of one batch, in order of first appearance. The external labels are the same for
 * the whole batch, so the entry's own labels alone identify its stream; the merged label text is
 * built once per stream. A label order not seen yet is looked up by its sorted key, so the same
 * labels in another order still find the same stream.
 */
class StreamGroups {
  readonly list: BatchStream[] = [];
  private readonly trie: LabelTrie = { next: new Map() };
  private readonly bySortedKey = new Map<string, BatchStream>();

  constructor(private readonly externalLabels: Labels) {}

  of(entry: Entry): BatchStream {
    const node = this.trieNode(entry.labels);
    if (node.stream) return node.stream;
    const key = streamKey(entry.labels);
    let stream = this.bySortedKey.get(key);
    if (!stream) {
      stream = { labels: formatLabelText(streamLabels(entry, this.externalLabels)), entries: [] };
      this.bySortedKey.set(key, stream);
      this.list.push(stream);
    }
    node.stream = stream;
    return stream;
  }

  /** The trie node of a label set (the tenant label excluded), created on first sight. */
  private trieNode(labels: Labels): LabelTrie {
    let node = this.trie;
    for (const name in labels) {
      if (name === TENANT_LABEL) continue;
      let values = node.next.get(name);
      if (!values) {
        values = new Map();
        node.next.set(name, values);
      }
      const value = labels[name]!;
      let child = values.get(value);
      if (!child) {
        child = { next: new Map() };
        values.set(value, child);
      }
      node = child;
    }
    return node;
  }
}

/** A cheap identity for an entry's label set (the tenant label excluded), whatever its order. */
function streamKey(labels: Labels): string {
  const names = Object.keys(labels).sort();
  let key = '';
  for (const name of names) if (name !== TENANT_LABEL) key += name + '\u0000' + labels[name] + '\u0001';
  return key;
}
