/**
 * Turns queued entries into one push request: entries grouped into streams by label set (in
 * order of first appearance, each stream keeping its entries' order), the external labels added
 * under the entry's own, the reserved tenant label removed, then encoded as protobuf and
 * compressed with snappy.
 */
import { Buffer } from 'node:buffer';
import { TENANT_LABEL, type Entry, type Labels } from '../../core/entry.js';
import { snappyEncode } from '../../lib/loki/compression.js';
import { formatLabelText } from '../../lib/loki/label_text.js';
import { encodePushRequest, type WireEntry } from '../../lib/loki/wire.js';

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
  let bytes = Buffer.byteLength(entry.line, 'utf8');
  for (const pair of entry.structuredMetadata) bytes += Buffer.byteLength(pair.name, 'utf8') + Buffer.byteLength(pair.value, 'utf8');
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
  const streams = new Map<string, { labels: string; entries: WireEntry[] }>();
  for (const item of items) {
    // The external labels are the same for the whole batch, so the entry's own labels alone
    // identify its stream; the merged label text is built once per stream.
    const key = streamKey(item.entry.labels);
    let stream = streams.get(key);
    if (!stream) {
      stream = { labels: formatLabelText(streamLabels(item.entry, externalLabels)), entries: [] };
      streams.set(key, stream);
    }
    stream.entries.push({ timestampNs: item.entry.timestamp, line: item.entry.line, structuredMetadata: item.entry.structuredMetadata });
  }
  const proto = encodePushRequest([...streams.values()]);
  return { body: snappyEncode(proto), encodedBytes: proto.length, streams: streams.size };
}

/** A cheap identity for an entry's label set (the tenant label excluded). */
function streamKey(labels: Labels): string {
  const names = Object.keys(labels).sort();
  let key = '';
  for (const name of names) if (name !== TENANT_LABEL) key += name + '\u0000' + labels[name] + '\u0001';
  return key;
}
