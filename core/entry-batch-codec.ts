/**
 * Entries packed into one string to cross to another thread: structured cloning copies every
 * object and property one by one (several microseconds per entry), while one string is copied in
 * one piece. Label sets repeat (a batch holds few streams), so each distinct set is written once
 * and entries refer to it. Every text is length-prefixed, so any character may occur in it.
 *
 * Layout: `<sets>,` then per set `<pairs>,` and its names and values; `<entries>,` then per entry
 * `<set>,<timestamp>,` its line, `<pairs>,` its metadata names and values, and its extracted map
 * as JSON (empty text for an empty map). A text is `<length>,<text>`.
 */
import { copyMap, setOwn, type Entry, type Labels, type MetadataPair } from './entry.js';

export function encodeEntries(entries: readonly Entry[]): string {
  const sets = new Map<string, number>();
  let table = '';
  let body = '';
  for (const entry of entries) {
    const encoded = encodeLabels(entry.labels);
    let set = sets.get(encoded);
    if (set === undefined) {
      set = sets.size;
      sets.set(encoded, set);
      table += encoded;
    }
    body += `${set},${entry.timestamp},${text(entry.line)}${entry.structuredMetadata.length},`;
    for (const pair of entry.structuredMetadata) body += text(pair.name) + text(pair.value);
    body += text(hasKeys(entry.extracted) ? JSON.stringify(entry.extracted, bigintAsNumber) : '');
  }
  return `${sets.size},${table}${entries.length},${body}`;
}

export function decodeEntries(packed: string): Entry[] {
  const reader = new Reader(packed);
  const sets: Labels[] = [];
  for (let s = reader.number(); s > 0; s--) {
    const labels: Labels = {};
    for (let p = reader.number(); p > 0; p--) {
      const name = reader.text();
      setOwn(labels, name, reader.text());
    }
    sets.push(labels);
  }
  const count = reader.number();
  const entries: Entry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const labels = copyMap(sets[reader.number()]!);
    const timestamp = BigInt(reader.until(','));
    const line = reader.text();
    const structuredMetadata: MetadataPair[] = [];
    for (let p = reader.number(); p > 0; p--) structuredMetadata.push({ name: reader.text(), value: reader.text() });
    const extracted = reader.text();
    entries[i] = { labels, line, timestamp, structuredMetadata, extracted: extracted === '' ? {} : JSON.parse(extracted) };
  }
  return entries;
}

function encodeLabels(labels: Labels): string {
  let out = '';
  let count = 0;
  for (const name in labels) {
    out += text(name) + text(labels[name]!);
    count++;
  }
  return `${count},${out}`;
}

function text(value: string): string {
  return `${value.length},${value}`;
}

function hasKeys(map: object): boolean {
  for (const _ in map) return true;
  return false;
}

function bigintAsNumber(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}

class Reader {
  private pos = 0;

  constructor(private readonly packed: string) {}

  until(delimiter: string): string {
    const end = this.packed.indexOf(delimiter, this.pos);
    if (end < 0) throw new Error('truncated entry batch');
    const value = this.packed.slice(this.pos, end);
    this.pos = end + 1;
    return value;
  }

  number(): number {
    return Number(this.until(','));
  }

  text(): string {
    const length = this.number();
    const value = this.packed.slice(this.pos, this.pos + length);
    this.pos += length;
    return value;
  }
}
