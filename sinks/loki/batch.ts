/**
 * Turns queued entries into one push request: entries grouped into streams by label set (in
 * order of first appearance, each stream keeping its entries' order), the external labels added
 * under the entry's own, the reserved tenant label removed, then encoded as protobuf and
 * compressed with snappy.
 */
import type { Buffer } from 'node:buffer';
import { TENANT_LABEL, type Entry, type Labels } from '../../core/entry.js';
import { snappyEncode } from '../../lib/loki/compression.js';
import { formatLabelText } from '../../lib/loki/label_text.js';
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
