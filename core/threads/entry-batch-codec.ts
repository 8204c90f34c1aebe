/**
 * Entries packed to cross to another thread. Structured cloning copies every object and property
 * one by one (several microseconds per entry); here every text goes into one string, and every
 * number into typed arrays that are handed over rather than copied. Label sets repeat (a batch
 * holds few streams), so each distinct set is written once and entries refer to it.
 *
 * Layout: `texts` is every text one after another, `lengths` their lengths in order. `shape` is
 * the set count, each set's pair count, then per entry its set, its metadata pair count and its
 * flags. The texts are each set's names and values, then per entry its line, its metadata names
 * and values, its extracted map as JSON (when it has keys) and its timestamp in decimal (when it
 * does not fit the 64-bit slot in `timestamps`).
 */
import { fnv1a32 } from '../../lib/fnv1a.js';
import { copyMap, setOwn, type Entry, type Labels, type MetadataPair } from '../entry.js';

export interface PackedEntries {
  readonly texts: string;
  readonly lengths: Int32Array;
  readonly shape: Int32Array;
  readonly timestamps: BigInt64Array;
}

/** The buffers to transfer with a message that carries `packed`. */
export function packedBuffers(packed: PackedEntries): ArrayBuffer[] {
  return [packed.lengths.buffer, packed.shape.buffer, packed.timestamps.buffer] as ArrayBuffer[];
}

const HAS_EXTRACTED = 1;
const TIMESTAMP_AS_TEXT = 2;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Packs `entries`. A caller that has already looked up every entry's label set (to partition a
 * batch, say) passes the table and each entry's set in it; the pack then holds only the sets its
 * entries use.
 */
export function encodeEntries(
  entries: readonly Entry[],
  sets: LabelSets = new LabelSets(),
  setOf: ArrayLike<number> = entries.map((entry) => sets.indexOf(entry.labels)),
): PackedEntries {
  const texts: string[] = [];
  const lengths: number[] = [];
  const add = (text: string) => {
    texts.push(text);
    lengths.push(text.length);
  };
  // The table's sets this pack uses, numbered in the order they first occur.
  const localOf = new Int32Array(sets.size).fill(-1);
  const used: number[] = [];
  for (let i = 0; i < entries.length; i++) {
    const set = setOf[i]!;
    if (localOf[set] === -1) localOf[set] = used.push(set) - 1;
  }

  const shape: number[] = [];
  shape.push(used.length);
  for (const set of used) {
    const names = sets.names[set]!;
    const values = sets.values[set]!;
    shape.push(names.length);
    for (let p = 0; p < names.length; p++) {
      add(names[p]!);
      add(values[p]!);
    }
  }
  const timestamps = new BigInt64Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const metadata = entry.structuredMetadata;
    const extracted = hasKeys(entry.extracted);
    const fits = entry.timestamp >= INT64_MIN && entry.timestamp <= INT64_MAX;
    shape.push(localOf[setOf[i]!]!);
    shape.push(metadata.length);
    shape.push((extracted ? HAS_EXTRACTED : 0) | (fits ? 0 : TIMESTAMP_AS_TEXT));
    add(entry.line);
    for (let p = 0; p < metadata.length; p++) {
      add(metadata[p]!.name);
      add(metadata[p]!.value);
    }
    if (extracted) add(JSON.stringify(entry.extracted, bigintAsNumber));
    if (fits) timestamps[i] = entry.timestamp;
    else add(String(entry.timestamp));
  }
  return { texts: texts.join(''), lengths: Int32Array.from(lengths), shape: Int32Array.from(shape), timestamps };
}

export function decodeEntries(packed: PackedEntries): Entry[] {
  const { texts, lengths, shape, timestamps } = packed;
  let at = 0;
  let nextText = 0;
  const text = (): string => {
    const length = lengths[nextText++];
    if (length === undefined) throw new Error('truncated entry batch');
    const value = texts.slice(at, at + length);
    at += length;
    return value;
  };
  let nextShape = 0;
  const count = (): number => {
    const value = shape[nextShape++];
    if (value === undefined) throw new Error('truncated entry batch');
    return value;
  };

  const sets: Labels[] = [];
  for (let s = count(); s > 0; s--) {
    const labels: Labels = {};
    for (let p = count(); p > 0; p--) {
      const name = text();
      setOwn(labels, name, text());
    }
    sets.push(labels);
  }
  const entries: Entry[] = new Array(timestamps.length);
  for (let i = 0; i < entries.length; i++) {
    const set = sets[count()];
    if (set === undefined) throw new Error('entry batch refers to a missing label set');
    const pairs = count();
    const flags = count();
    const line = text();
    const structuredMetadata: MetadataPair[] = [];
    for (let p = pairs; p > 0; p--) structuredMetadata.push({ name: text(), value: text() });
    const extracted = flags & HAS_EXTRACTED ? JSON.parse(text()) : {};
    const timestamp = flags & TIMESTAMP_AS_TEXT ? BigInt(text()) : timestamps[i]!;
    entries[i] = { labels: copyMap(set), line, timestamp, structuredMetadata, extracted };
  }
  return entries;
}

/**
 * The distinct label sets of a batch, each kept as its names and values in their order (the same
 * pairs in another order make another set, so every entry gets its labels back as they were). A
 * lookup compares with the set matched last (entries come in runs of one stream), then with the
 * sets whose hash it shares; nothing is allocated unless the set is new.
 */
export class LabelSets {
  readonly names: string[][] = [];
  readonly values: string[][] = [];
  private last = -1;
  private readonly byHash = new Map<number, number[]>();

  get size(): number {
    return this.names.length;
  }

  indexOf(labels: Labels): number {
    if (this.last >= 0 && this.matches(this.last, labels)) return this.last;
    let hash: number | undefined;
    for (const name in labels) hash = fnv1a32(labels[name]!, fnv1a32(SEPARATOR, fnv1a32(name, hash)));
    hash ??= 0;
    const candidates = this.byHash.get(hash);
    if (candidates) {
      for (const set of candidates) if (this.matches(set, labels)) return (this.last = set);
    }
    const set = this.names.length;
    const names: string[] = [];
    const values: string[] = [];
    for (const name in labels) {
      names.push(name);
      values.push(labels[name]!);
    }
    this.names.push(names);
    this.values.push(values);
    if (candidates) candidates.push(set);
    else this.byHash.set(hash, [set]);
    return (this.last = set);
  }

  private matches(set: number, labels: Labels): boolean {
    const names = this.names[set]!;
    const values = this.values[set]!;
    let p = 0;
    for (const name in labels) {
      if (names[p] !== name || values[p] !== labels[name]) return false;
      p++;
    }
    return p === names.length;
  }
}

// Between a name and its value, so that `ab`=`c` and `a`=`bc` hash apart (a clash only costs a compare).
const SEPARATOR = '\u0000';

function hasKeys(map: object): boolean {
  for (const _ in map) return true;
  return false;
}

function bigintAsNumber(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}
