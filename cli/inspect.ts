import { dropCounterReason } from '../core/drop-reason.js';
import type { StageList } from '../core/stage-list.js';
import type { EntryTrace, Fate, TraceStep, Trigger } from '../core/trace.js';

/** How `--inspect` prints: with ANSI colours (stderr is a terminal) or plain. */
export interface InspectOptions {
  readonly colour: boolean;
}

const STYLE = { bold: '1', red: '31', green: '32', yellow: '33', cyan: '36', dim: '2' } as const;
type Style = keyof typeof STYLE;

/**
 * The entries' stories as `rivulet process --inspect` prints them, from the same traces the
 * playground shows: per entry a header with its fate (forwarded, dropped and why, joined into
 * another entry, still held), then each stage that did something to it, named with its block's
 * line (`stage.json@3`) and indented inside a `stage.match`. Stages that left it as it was are
 * left out. A summary line ends the text.
 *
 * ```
 * entry 1 (stdin:1): forwarded as output 1
 *   stage.cri@1: labels +stream="stdout"; line "2024-05-01T10:00:00Z stdout F hi" -> "hi"; …
 *   stage.metrics@4: counter logs_process_custom_lines_total{stream="stdout"} +1
 * entry 2 (stdin:2): dropped by stage.drop@2: every condition held: the line matches "debug" (counted as reason "noise")
 *   stage.drop@2: dropped
 * summary: 2 entries in, 1 out, 1 dropped (1 by stage.drop@2, reason "noise")
 * ```
 */
export function describeTraces(traces: readonly EntryTrace[], stages: StageList, options: InspectOptions): string {
  const paint = (style: Style, text: string) => (options.colour ? `\x1b[${STYLE[style]}m${text}\x1b[0m` : text);
  const stageName = (stage: number) => {
    const info = stages.infos[stage];
    if (!info) return 'the pipeline';
    return paint('cyan', info.line > 0 ? `${info.name}@${info.line}` : info.name);
  };
  const names = entryNames(traces, stageName);
  const name = (trace: number) => names.get(trace) ?? `trace ${trace}`;
  // Trace → the entries an operator joined into it, by stage.
  const joinedFrom = new Map<number, Map<number, number[]>>();
  for (const trace of traces) {
    if (trace.fate.kind !== 'merged') continue;
    const byStage = joinedFrom.get(trace.fate.into) ?? new Map<number, number[]>();
    byStage.set(trace.fate.stage, [...(byStage.get(trace.fate.stage) ?? []), trace.id]);
    joinedFrom.set(trace.fate.into, byStage);
  }

  const fateText = (fate: Fate): string => {
    switch (fate.kind) {
      case 'forwarded':
        return paint('green', `forwarded as output ${fate.output + 1}`);
      case 'dropped':
        return `${paint('red', 'dropped')} by ${stageName(fate.stage)}: ${fate.reason}`;
      case 'merged':
        return `${paint('yellow', `joined into ${name(fate.into)}`)} by ${stageName(fate.stage)}`;
      case 'held':
        return fate.stage >= 0
          ? `${paint('yellow', 'still held')} by ${stageName(fate.stage)} at end of input, not forwarded`
          : paint('yellow', 'not forwarded');
    }
  };

  let out = '';
  for (const trace of traces) {
    const from = trace.origin.kind === 'input' ? `stdin:${trace.origin.line}` : `sent on again by ${stageName(trace.origin.stage)}`;
    const joins = joinedFrom.get(trace.id) ?? new Map<number, number[]>();
    let story = '';
    for (const step of trace.steps) {
      const joined = joins.get(step.stage);
      const parts = stepParts(step, describeTrigger);
      // The entries joined into this one are told at the stage that sent it on.
      if (joined && (step.outcome === 'passed' || step.outcome === 'released')) {
        joins.delete(step.stage);
        parts.splice(step.outcome === 'released' ? 1 : 0, 0, paint('yellow', `joined from ${listNames(joined, name)}`));
      }
      if (parts.length === 0) continue;
      const depth = stages.infos[step.stage]?.depth ?? 0;
      story += `${'  '.repeat(depth + 1)}${stageName(step.stage)}: ${parts.join('; ')}\n`;
    }
    for (const [stage, joined] of joins) story += `  ${stageName(stage)}: ${paint('yellow', `joined from ${listNames(joined, name)}`)}\n`;
    const untouched = story === '' && trace.fate.kind === 'forwarded' ? ', no stage changed it' : '';
    out += `${paint('bold', name(trace.id))} (${from}): ${fateText(trace.fate)}${untouched}\n${story}`;
  }
  return out + paint('bold', summary(traces, stages, stageName)) + '\n';

  function describeTrigger(trigger: Trigger | undefined): string {
    if (trigger?.kind === 'end') return 'at end of input';
    if (trigger?.kind === 'input') return `when entry ${trigger.input + 1} arrived`;
    return 'by a timer';
  }
}

/** What to print for one step; nothing for a stage that left the entry as it was. */
function stepParts(step: TraceStep, describeTrigger: (trigger: Trigger | undefined) => string): string[] {
  const effects = step.effects ?? [];
  switch (step.outcome) {
    case 'changed':
    case 'unchanged':
    case 'passed':
    case 'not-matched':
      return [...step.changes, ...effects];
    case 'matched':
      // The nested stages that follow tell what the branch did.
      return ['matched', ...effects];
    case 'dropped':
      return ['dropped', ...effects];
    case 'held':
      return ['held'];
    case 'released':
      return [`held, released ${describeTrigger(step.trigger)}`, ...step.changes];
  }
}

/**
 * Each trace's name: `entry N` for input N (counted like the entries read, from 1); an entry an
 * operator sent on a second time (the rest of a cut multiline block) is `entry N (part 2)`.
 */
function entryNames(traces: readonly EntryTrace[], stageName: (stage: number) => string): Map<number, string> {
  const names = new Map<number, string>();
  const parts = new Map<number, number>();
  for (const trace of traces) {
    if (trace.origin.kind === 'input') {
      names.set(trace.id, `entry ${trace.origin.input + 1}`);
      continue;
    }
    const base = names.get(trace.origin.from);
    if (base === undefined) {
      names.set(trace.id, `an entry of ${stageName(trace.origin.stage)}`);
      continue;
    }
    const part = (parts.get(trace.origin.from) ?? 1) + 1;
    parts.set(trace.origin.from, part);
    parts.set(trace.id, part);
    names.set(trace.id, `${base.replace(/ \(part \d+\)$/, '')} (part ${part})`);
  }
  return names;
}

/** `entry 1`, `entries 1, 2 and 3` (rather than `entry 1, entry 2 and entry 3`). */
function listNames(traces: readonly number[], name: (trace: number) => string): string {
  const names = traces.map(name);
  if (names.length === 1) return names[0]!;
  const plain = names.every((n) => /^entry \d+$/.test(n));
  const items = plain ? names.map((n) => n.slice('entry '.length)) : names;
  return `${plain ? 'entries ' : ''}${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** `summary: 5 entries in, 3 out, 1 dropped (1 by stage.drop@2, reason "noise"), 1 joined into another entry`. */
function summary(traces: readonly EntryTrace[], stages: StageList, stageName: (stage: number) => string): string {
  const count = (kind: Fate['kind']) => traces.filter((t) => t.fate.kind === kind).length;
  const inputs = traces.filter((t) => t.origin.kind === 'input').length;
  const parts = [`${inputs} ${inputs === 1 ? 'entry' : 'entries'} in`, `${count('forwarded')} out`];
  const drops = new Map<number, number>();
  for (const t of traces) if (t.fate.kind === 'dropped') drops.set(t.fate.stage, (drops.get(t.fate.stage) ?? 0) + 1);
  if (drops.size > 0) {
    const byStage = [...drops].map(([stage, n]) => {
      const spec = stages.specs[stage];
      const reason = spec ? dropCounterReason(spec) : undefined;
      return `${n} by ${stageName(stage)}${reason === undefined ? '' : `, reason ${JSON.stringify(reason)}`}`;
    });
    parts.push(`${count('dropped')} dropped (${byStage.join('; ')})`);
  }
  const merged = count('merged');
  if (merged > 0) parts.push(`${merged} joined into ${merged === 1 ? 'another entry' : 'other entries'}`);
  const held = count('held');
  if (held > 0) parts.push(`${held} still held at end of input`);
  const split = traces.length - inputs;
  if (split > 0) parts.push(`${split} sent on again as ${split === 1 ? 'a further entry' : 'further entries'}`);
  return `summary: ${parts.join(', ')}`;
}
