/**
 * The log entry as it moves through a pipeline. Stages mutate entries in place for speed. A
 * logs.process component owns the entries it is sent (a sender hands over entries it will not
 * read again), and every `forward_to` receiver gets its own copy (the reference shares one object
 * between receivers and relies on consumers copying; we copy so no receiver can see another's
 * edits). A programmatic pipeline copies each entry at its ingress, as its source may reuse them.
 */
import { stringify } from '../lib/go/values.js';
import type { MetadataPair } from '../lib/loki/wire.js';

// Structured metadata is Loki's: its wire format declares the pair, entries carry it as sent.
export type { MetadataPair };

export type Labels = Record<string, string>;

/** The pipeline-private map of extracted values (string, number, boolean, null or JSON-like). */
export type Extracted = Record<string, unknown>;

export interface Entry {
  labels: Labels;
  line: string;
  /** Nanoseconds since the Unix epoch. */
  timestamp: bigint;
  structuredMetadata: MetadataPair[];
  extracted: Extracted;
}

/** The reserved label that carries the tenant set by `stage.tenant`. */
export const TENANT_LABEL = '__tenant_id__';

/** Builds an entry; missing parts default to empty. */
export function makeEntry(parts: Partial<Entry> & { line: string; timestamp: bigint }): Entry {
  return {
    labels: parts.labels ?? {},
    line: parts.line,
    timestamp: parts.timestamp,
    structuredMetadata: parts.structuredMetadata ?? [],
    extracted: parts.extracted ?? {},
  };
}

/**
 * Copies labels, metadata and the extracted map so stages may mutate the copy freely. Extracted
 * values are JSON-like data that stages replace rather than mutate, so a shallow copy of the map is
 * enough.
 */
export function cloneEntry(entry: Entry): Entry {
  return {
    labels: copyMap(entry.labels),
    line: entry.line,
    timestamp: entry.timestamp,
    structuredMetadata: entry.structuredMetadata.map((p) => ({ name: p.name, value: p.value })),
    extracted: copyMap(entry.extracted),
  };
}

/**
 * A shallow copy of a label set or extracted map, own symbol keys included (a trace tag rides on
 * the extracted map). Not a spread: V8 gives an object made by `{ ...map }` a shape that turns
 * every property added to it later (stages add labels and extracted values to every entry) into
 * a new shape, measured at about a microsecond a property; a copy made by `Object.assign` takes
 * the ordinary shared transitions.
 */
export function copyMap<T>(map: Record<string, T>): Record<string, T> {
  // Object.assign writes with [[Set]], which would take an own `__proto__` key for the prototype.
  return Object.hasOwn(map, '__proto__') ? { ...map } : Object.assign({}, map);
}

/**
 * The label set rendered the way the reference renders it for stream keys and fingerprints:
 * sorted names, `{a="1", b="2"}` with Go-quoted values.
 */
export function labelsKey(labels: Labels): string {
  const names = Object.keys(labels).sort();
  let out = '{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (i > 0) out += ', ';
    out += name + '=' + JSON.stringify(labels[name]);
  }
  return out + '}';
}

/** Copies every label into the extracted map, overwriting same-named keys (reference §1.3 step 3). */
export function seedLabels(entry: Entry): void {
  const { labels, extracted } = entry;
  for (const name in labels) extracted[name] = labels[name];
}

/** Sets a metadata pair, replacing an existing pair of the same name in place or appending it. */
export function setMetadata(entry: Entry, name: string, value: string): void {
  const list = entry.structuredMetadata;
  for (const pair of list) {
    if (pair.name === name) {
      pair.value = value;
      return;
    }
  }
  // The first pair gets a list of its own size: a push onto an empty array makes room for 17.
  if (list.length === 0) entry.structuredMetadata = [{ name, value }];
  else list.push({ name, value });
}

/**
 * Reads a key of a label set or extracted map only when the map itself holds it. Names come from
 * log text and configs, so `constructor` or `toString` must not find Object.prototype's members.
 */
export function own<T>(map: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** Stores a key as an own property, even one named `__proto__` (names come from log text). */
export function setOwn(map: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  else map[key] = value;
}

/**
 * The text a parsing stage reads: the line when `source` is unset, otherwise the extracted value
 * converted the Go way — undefined when that key is missing or does not convert (the stage then
 * leaves the entry alone).
 */
export function sourceText(entry: Entry, source: string | undefined): string | undefined {
  if (source === undefined) return entry.line;
  return stringify(own(entry.extracted, source));
}
