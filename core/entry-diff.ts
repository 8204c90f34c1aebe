import type { Entry } from './entry.js';

/** What changed between two states of an entry, one line per changed part, as `--inspect` and the playground word it. */
export function diffEntries(before: Entry, after: Entry): string[] {
  const changes: string[] = [];
  changes.push(...diffMaps('labels', before.labels, after.labels));
  if (before.line !== after.line) changes.push(`line ${JSON.stringify(before.line)} -> ${JSON.stringify(after.line)}`);
  if (before.timestamp !== after.timestamp) changes.push(`timestamp ${before.timestamp} -> ${after.timestamp}`);
  const meta = (e: Entry) => Object.fromEntries(e.structuredMetadata.map((p) => [p.name, p.value]));
  changes.push(...diffMaps('structured_metadata', meta(before), meta(after)));
  changes.push(...diffMaps('extracted', before.extracted, after.extracted));
  return changes;
}

function diffMaps(what: string, before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const out: string[] = [];
  const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x));
  for (const key of Object.keys(after)) {
    if (!(key in before)) out.push(`${what} +${key}=${show(after[key])}`);
    else if (show(before[key]) !== show(after[key])) out.push(`${what} ~${key}=${show(before[key])}->${show(after[key])}`);
  }
  for (const key of Object.keys(before)) if (!(key in after)) out.push(`${what} -${key}`);
  return out;
}
