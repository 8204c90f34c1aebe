import type { Entry } from './entry';
import { formatRFC3339Nano } from './time/rfc3339';

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
