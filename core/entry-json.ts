import type { Entry } from './entry.js';
import { formatRFC3339Nano, parseRFC3339 } from '../lib/time/rfc3339.js';
import type { Clock } from './clock.js';

/**
 * The JSON line form of an entry used by `rivulet process` and `logs.echo`:
 * `{"labels":{..},"line":..,"timestamp":"…9 fraction digits…Z","structured_metadata":{..}}`,
 * plus `extracted` when asked (values as JSON; bigint as a number).
 */
export function entryToJson(entry: Entry, withExtracted: boolean): string {
  const view: Record<string, unknown> = {
    labels: sortedObject(entry.labels),
    line: entry.line,
    timestamp: formatRFC3339Nano(entry.timestamp),
    structured_metadata: Object.fromEntries(entry.structuredMetadata.map((p) => [p.name, p.value])),
  };
  if (withExtracted) view.extracted = entry.extracted;
  return JSON.stringify(view, (_key, value) => (typeof value === 'bigint' ? Number(value) : value));
}

function sortedObject(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(labels).sort()) out[name] = labels[name]!;
  return out;
}

/** One line of the JSON-lines input form (`rivulet process --input jsonl`, the playground). */
export function parseInputEntry(text: string, clock: Clock): Entry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`invalid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('expected a JSON object');
  const obj = value as Record<string, unknown>;
  if (typeof obj.line !== 'string') throw new Error('"line" must be a string');
  const labels = stringMap(obj.labels, 'labels');
  const metadata = stringMap(obj.structured_metadata, 'structured_metadata');
  let timestamp: bigint;
  if (obj.timestamp === null || obj.timestamp === undefined) timestamp = clock.nowNs();
  else if (typeof obj.timestamp === 'string') timestamp = parseRFC3339(obj.timestamp);
  else throw new Error('"timestamp" must be an RFC 3339 string or null');
  const extracted = obj.extracted ?? {};
  if (extracted === null || typeof extracted !== 'object' || Array.isArray(extracted)) throw new Error('"extracted" must be an object');
  return {
    labels,
    line: obj.line,
    timestamp,
    structuredMetadata: Object.entries(metadata).map(([name, v]) => ({ name, value: v })),
    extracted: { ...(extracted as Record<string, unknown>) },
  };
}

function stringMap(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`"${field}" must be an object of strings`);
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new Error(`"${field}.${k}" must be a string`);
  }
  return value as Record<string, string>;
}
