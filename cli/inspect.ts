import { diffEntries } from '../core/entry-diff.js';
import type { StageTrace } from '../core/trace.js';

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
