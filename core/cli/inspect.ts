import type { Entry } from '../entry';
import type { StageTrace } from '../trace';

/**
 * One stage's effect on an entry as `--inspect` prints it: what changed in labels, line,
 * timestamp, structured metadata and extracted values, or that the stage dropped or held it.
 */
export function describeStageTrace(entryNumber: number, event: StageTrace): string {
  const where = `entry ${entryNumber} ${event.path.join(' > ')}:`;
  if (event.before && !event.after) return `${where} dropped or held\n`;
  if (!event.before && event.after) return `${where} emitted ${JSON.stringify(event.after.line)}\n`;
  if (!event.before || !event.after) return '';
  const changes = diffEntries(event.before, event.after);
  return `${where} ${changes.length === 0 ? 'no change' : changes.join('; ')}\n`;
}

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
