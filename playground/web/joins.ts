import type { EntryTrace, RunResult } from '../api.js';

/** An input line that went into a joined entry, as the joining stage received it. */
export interface JoinedInput {
  readonly trace: number;
  /** 1-based line of the input editor. */
  readonly line: number;
  readonly text: string;
  /** The input whose trace carried the joined entry on (the others were merged into it). */
  readonly carrier: boolean;
}

/**
 * The inputs a traced entry was joined from (multiline blocks, CRI partial lines), in input
 * order, the entry's own input among them; empty when nothing was merged into it. Entries merged
 * into an entry that was itself merged on are followed through.
 */
export function joinedInputs(result: RunResult, traceId: number): JoinedInput[] {
  const carrier = result.traces[traceId];
  if (!carrier) return [];
  const into = new Map<number, EntryTrace[]>();
  for (const trace of result.traces) {
    if (trace.fate.kind !== 'merged') continue;
    const list = into.get(trace.fate.into) ?? [];
    list.push(trace);
    into.set(trace.fate.into, list);
  }
  const merged: EntryTrace[] = [];
  const seen = new Set<number>([traceId]);
  const pending = [traceId];
  while (pending.length > 0) {
    for (const trace of into.get(pending.pop()!) ?? []) {
      if (seen.has(trace.id)) continue;
      seen.add(trace.id);
      merged.push(trace);
      pending.push(trace.id);
    }
  }
  if (merged.length === 0) return [];
  const joinStage = merged[0]!.fate.kind === 'merged' ? merged[0]!.fate.stage : undefined;
  const inputs: JoinedInput[] = [];
  for (const trace of [carrier, ...merged]) {
    if (trace.origin.kind !== 'input') continue;
    inputs.push({ trace: trace.id, line: trace.origin.line, text: lineSeenBy(trace, joinStage), carrier: trace.id === traceId });
  }
  return inputs.sort((a, b) => a.line - b.line);
}

/** The line as `stage` received it; the line as it arrived when the stage never saw it. */
function lineSeenBy(trace: EntryTrace, stage: number | undefined): string {
  const step = trace.steps.find((s) => s.stage === stage && s.before) ?? trace.steps.find((s) => s.before);
  return step?.before?.line ?? '';
}

/** `1, 2, 3`, or `1–4` for a run of consecutive lines. */
export function lineList(lines: readonly number[]): string {
  const consecutive = lines.length > 2 && lines.every((n, i) => i === 0 || n === lines[i - 1]! + 1);
  return consecutive ? `${lines[0]}–${lines[lines.length - 1]}` : lines.join(', ');
}
