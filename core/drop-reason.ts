import { formatGoDuration } from '../lib/go/duration.js';
import type { StageSpec } from './stage.js';

/**
 * Why a per-entry stage dropped an entry, told from its config: a drop stage drops only when
 * every configured condition holds, so the conditions it was given are the reason. The counter
 * reason is the `reason` label the drop was counted under.
 */
export function dropReason(spec: StageSpec): string {
  const c = spec.config as Record<string, unknown>;
  const counter = dropCounterReason(spec);
  const counted = ` (counted as reason "${counter}")`;
  switch (spec.def.name) {
    case 'drop':
      return `every condition held: ${dropConditions(c).join(' and ')}${counted}`;
    case 'sampling':
      return `not kept by sampling at rate ${String(c.rate)}${counted}`;
    case 'match':
      return `matched selector ${c.selector as string} with action "drop"${counted}`;
    case 'limit':
      return c.by_label_name
        ? `over the rate limit of ${String(c.rate)}/s (burst ${String(c.burst)}) for its value of label ${c.by_label_name as string}${counted}`
        : `over the rate limit of ${String(c.rate)}/s (burst ${String(c.burst)})${counted}`;
    case 'hostevent':
    case 'eventlogmessage':
      return `the value of ${c.source as string} is not text`;
    default:
      return `dropped by stage.${spec.def.name}`;
  }
}

/**
 * The `reason` label of `logs_process_dropped_lines_total` a stage counts its drops under, or
 * undefined for a stage that does not count them there.
 */
export function dropCounterReason(spec: StageSpec): string | undefined {
  const c = spec.config as Record<string, unknown>;
  switch (spec.def.name) {
    case 'drop':
      return (c.drop_counter_reason as string) || 'drop_stage';
    case 'sampling':
      // Sampling has no fallback: an empty reason is counted as written.
      return (c.drop_counter_reason as string | undefined) ?? 'sampling_stage';
    case 'match':
      return (c.drop_counter_reason as string) || 'match_stage';
    case 'limit':
      return 'ratelimit';
    default:
      return undefined;
  }
}

function dropConditions(c: Record<string, unknown>): string[] {
  const source = c.source as string;
  const what = source === '' ? 'the line' : `the value of ${source}`;
  const out: string[] = [];
  if (c.value) out.push(`${what} is ${JSON.stringify(c.value)}`);
  else if (c.expression) out.push(`${what} matches ${JSON.stringify(c.expression)}`);
  else if (source !== '') out.push(`${source} is present`);
  if (typeof c.older_than === 'bigint' && c.older_than > 0n)
    out.push(`the timestamp is older than ${formatGoDuration(c.older_than)} before now`);
  if (c.longer_than && c.longer_than !== '0') out.push(`the line is longer than ${c.longer_than as string}`);
  return out;
}
