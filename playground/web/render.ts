import type { EntryJson, EntryTrace, Fate, RunResult, StageInfo, TraceStep, Trigger } from '../api.js';
import { entryChanges, type EntryChange } from '../../core/inspect/entry-diff.js';
import { formatOffset, showValue } from './diff.js';
import { h } from './dom.js';
import { joinedInputs, lineList, type JoinedInput } from './joins.js';

/** What the views need besides the result: how to select an entry and jump to a stage. */
export interface ViewActions {
  select(trace: number): void;
  jumpTo(line: number, col: number): void;
}

const OUTCOME_TEXT: Record<TraceStep['outcome'], string> = {
  changed: 'changed',
  unchanged: 'no change',
  dropped: 'dropped',
  held: 'held',
  passed: 'passed',
  released: 'flushed',
  matched: 'matched',
  'not-matched': 'not matched',
};

const FATE_TEXT: Record<Fate['kind'], string> = { forwarded: 'forwarded', dropped: 'dropped', held: 'held', merged: 'joined' };

/** A row of the output table: a forwarded entry, or (when shown) an input that was not forwarded. */
interface Row {
  readonly trace: number;
  readonly entry: EntryJson | null;
  readonly output?: number;
  readonly fate: Fate;
}

/** The output table: forwarded entries first, then the inputs that were dropped, held or joined. */
export function renderOutput(
  table: HTMLTableElement,
  result: RunResult,
  selected: number | undefined,
  showDropped: boolean,
  actions: ViewActions,
): void {
  const rows: Row[] = result.entries.map((entry, i) => ({
    trace: result.outputs[i]!.trace,
    entry,
    output: i,
    fate: { kind: 'forwarded', output: i },
  }));
  if (showDropped) {
    for (const trace of result.traces) {
      if (trace.fate.kind === 'forwarded' || trace.origin.kind !== 'input') continue;
      rows.push({ trace: trace.id, entry: lastEntry(trace), fate: trace.fate });
    }
  }
  // Only entries something was merged into can have been joined.
  const joinTargets = new Set(result.traces.flatMap((t) => (t.fate.kind === 'merged' ? [t.fate.into] : [])));
  const startDate = result.startedAt.slice(0, 10);
  const body = h('tbody');
  for (const row of rows) {
    const entry = row.entry;
    const isSelected = row.trace === selected;
    const joined = row.output !== undefined && joinTargets.has(row.trace) ? joinedInputs(result, row.trace) : [];
    const tr = h(
      'tr',
      {
        class: `${row.output === undefined ? 'not-forwarded' : ''}${isSelected ? ' selected' : ''}`,
        tabindex: 0,
        'aria-selected': isSelected ? 'true' : 'false',
        'data-trace': row.trace,
        ...(row.output !== undefined ? { 'data-output': row.output } : {}),
      },
      h(
        'td',
        { class: 'num' },
        row.output !== undefined
          ? String(row.output + 1)
          : h('span', { class: `badge ${row.fate.kind}`, title: fateText(row.fate, result) }, FATE_TEXT[row.fate.kind]),
      ),
      h('td', { class: 'ts', title: entry?.timestamp ?? '' }, entry ? compactTimestamp(entry.timestamp, startDate) : ''),
      pairsCell('labels', entry?.labels),
      h(
        'td',
        { class: 'line', title: entry?.line ?? '' },
        joined.length > 0
          ? h(
              'span',
              { class: 'badge merged joined-count', title: `Joined from input lines ${lineList(joined.map((j) => j.line))}` },
              `${joined.length} lines`,
            )
          : null,
        entry ? oneLine(entry.line) : '',
      ),
      pairsCell('metadata', entry?.structured_metadata),
      pairsCell('extracted', entry?.extracted),
    );
    tr.addEventListener('click', () => actions.select(row.trace));
    tr.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        actions.select(row.trace);
      } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const next = (event.key === 'ArrowDown' ? tr.nextElementSibling : tr.previousElementSibling) as HTMLElement | null;
        next?.focus();
      }
    });
    body.append(tr);
  }
  if (rows.length === 0)
    body.append(
      h(
        'tr',
        {},
        h('td', { colspan: 6, class: 'empty' }, result.errors.length > 0 ? 'No output: the config has errors.' : 'Nothing was forwarded.'),
      ),
    );
  table.tBodies[0]?.remove();
  table.append(body);
}

/**
 * A timestamp on one line: the time of day, with the date only when it is not the run's start
 * date (the cell's title has the whole timestamp).
 */
function compactTimestamp(timestamp: string, startDate: string): string {
  const [date, time = ''] = timestamp.replace(/Z$/, '').split('T');
  return date === startDate ? time : `${date} ${time}`;
}

/** A table cell holds one line: line breaks are shown as ↵ (the cell's title has the text as it is). */
function oneLine(text: string): string {
  return text.replace(/\r?\n/g, ' ↵ ');
}

/** A cell of key=value pairs on one line, every pair in its title. */
function pairsCell(cls: string, map: Record<string, unknown> | undefined): HTMLElement {
  if (!map) return h('td', { class: cls });
  const title = Object.entries(map)
    .map(([key, value]) => `${key}=${showValue(value)}`)
    .join('\n');
  return h('td', { class: cls, title }, pairs(map));
}

function pairs(map: Record<string, unknown>): HTMLElement {
  const list = h('span', { class: 'pairs' });
  for (const [key, value] of Object.entries(map))
    list.append(
      h('span', { class: 'pair' }, h('span', { class: 'key' }, key), '=', h('span', { class: 'value' }, oneLine(showValue(value)))),
    );
  return list;
}

/** The entry as the trace last saw it (for inputs that were not forwarded). */
function lastEntry(trace: EntryTrace): EntryJson | null {
  for (let i = trace.steps.length - 1; i >= 0; i--) {
    const step = trace.steps[i]!;
    if (step.after) return step.after;
    if (step.before) return step.before;
  }
  return null;
}

/** The stage-by-stage view of one traced entry. */
export function renderTrace(container: HTMLElement, result: RunResult, traceId: number | undefined, actions: ViewActions): void {
  container.replaceChildren();
  const trace = traceId === undefined ? undefined : result.traces[traceId];
  if (!trace) {
    const hint =
      result.errors.length > 0
        ? 'Fix the config errors listed above to run the pipeline.'
        : result.traces.length === 0
          ? 'Run the pipeline to see what each stage does.'
          : 'Select an entry in the table to see what each stage did to it.';
    container.append(h('p', { class: 'hint' }, hint));
    return;
  }
  const stages = result.stages;
  const fate = h('p', { class: `fate fate-${trace.fate.kind}` }, fateText(trace.fate, result));
  if (trace.fate.kind === 'merged') {
    const into = trace.fate.into;
    const show = h('button', { type: 'button', class: 'link' }, `Show ${traceName(into, result)}`);
    show.addEventListener('click', () => actions.select(into));
    fate.append(' ', show);
  }
  container.append(h('h3', { id: 'trace-title' }, traceTitle(trace, result)), fate);
  const joined = joinedInputs(result, trace.id);
  if (joined.length > 0) container.append(joinedList(joined, actions));
  const list = h('ol', { class: 'steps', 'aria-labelledby': 'trace-title' });
  for (const step of trace.steps) list.append(stepItem(step, stages[step.stage]!, trace, result, actions));
  container.append(list);
  const final = lastEntry(trace);
  if (final) {
    container.append(
      h(
        'details',
        { class: 'final' },
        h('summary', {}, trace.fate.kind === 'forwarded' ? 'Forwarded entry (JSON)' : 'Entry as last seen (JSON)'),
        h('pre', {}, JSON.stringify(final, null, 2)),
      ),
    );
  }
}

/** The input lines a joined entry was made of, each selectable. */
function joinedList(joined: readonly JoinedInput[], actions: ViewActions): HTMLElement {
  const list = h('ol', { class: 'joined-lines', 'aria-labelledby': 'joined-title' });
  for (const input of joined) {
    const name = `Input line ${input.line}`;
    const head: Node = input.carrier
      ? h('span', { class: 'joined-name' }, `${name} (this entry)`)
      : (() => {
          const button = h('button', { type: 'button', class: 'link joined-name' }, name);
          button.addEventListener('click', () => actions.select(input.trace));
          return button;
        })();
    list.append(h('li', { 'data-trace': input.trace }, head, ' ', h('code', {}, input.text)));
  }
  return h('section', { class: 'joined' }, h('h4', { id: 'joined-title' }, `Joined from ${joined.length} input lines`), list);
}

function stepItem(step: TraceStep, stage: StageInfo, trace: EntryTrace, result: RunResult, actions: ViewActions): HTMLElement {
  const jump = h('button', { class: 'stage-link', type: 'button', title: `Show line ${stage.line} in the config` }, stage.name);
  jump.addEventListener('click', () => actions.jumpTo(stage.line, stage.col));
  const head = h(
    'div',
    { class: 'step-head' },
    h('span', { class: `badge ${step.outcome}` }, OUTCOME_TEXT[step.outcome]),
    jump,
    h('span', { class: 'where' }, `line ${stage.line}`),
    h('span', { class: 'time' }, formatOffset(step.atMs)),
  );
  const item = h('li', { class: `step outcome-${step.outcome}`, style: `--depth: ${stage.depth}`, 'data-stage': stage.index }, head);
  const note = stepNote(step, trace, result);
  if (note) item.append(h('p', { class: 'note' }, note));
  if (step.before && step.after) {
    const changes = entryChanges(step.before, step.after);
    if (changes.length > 0) item.append(diffTable(changes));
  } else if (!step.before && step.after) {
    item.append(h('p', { class: 'note' }, 'Line: ', h('code', {}, step.after.line)));
  }
  return item;
}

function stepNote(step: TraceStep, trace: EntryTrace, result: RunResult): string | undefined {
  switch (step.outcome) {
    case 'dropped':
      return step.reason;
    case 'held':
      if (trace.fate.kind === 'merged') return `Joined into ${traceName(trace.fate.into, result)}.`;
      return 'Still held at the end of input.';
    case 'released': {
      const waited =
        step.releasedAtMs !== undefined && step.before
          ? `Held for ${formatOffset(step.releasedAtMs - step.atMs).slice(1)}, then sent on `
          : 'Sent on ';
      return `${waited}${step.trigger ? triggerText(step.trigger, result) : ''} at ${formatOffset(step.releasedAtMs ?? step.atMs)}.`;
    }
    case 'matched':
      return step.after || step.before ? 'The selector matched: the entry went through the nested stages below.' : undefined;
    case 'not-matched':
      return 'The selector did not match: the entry passed on unchanged.';
    case 'passed':
      return 'Sent on at once.';
    default:
      return undefined;
  }
}

function diffTable(changes: readonly EntryChange[]): HTMLElement {
  const body = h('tbody');
  for (const c of changes) {
    const sign = c.op === 'added' ? '+' : c.op === 'removed' ? '−' : '~';
    body.append(
      h(
        'tr',
        { class: `change ${c.op}` },
        h('td', { class: 'sign', 'aria-label': c.op }, sign),
        h('th', { scope: 'row' }, c.key === '' ? c.part : `${c.part}.${c.key}`),
        h('td', { class: 'before' }, showValue(c.before)),
        h('td', { class: 'after' }, showValue(c.after)),
      ),
    );
  }
  return h(
    'table',
    { class: 'diff' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Change')),
        h('th', { scope: 'col' }, 'Field'),
        h('th', { scope: 'col' }, 'Before'),
        h('th', { scope: 'col' }, 'After'),
      ),
    ),
    body,
  );
}

export function traceTitle(trace: EntryTrace, result: RunResult): string {
  const name = traceName(trace.id, result);
  if (trace.origin.kind === 'input') {
    const out = trace.fate.kind === 'forwarded' ? `Output #${trace.fate.output + 1} · ` : '';
    return `${out}input line ${trace.origin.line}`;
  }
  return name;
}

/** How a trace is referred to: by its output number when it has one. */
function traceName(id: number, result: RunResult): string {
  const trace = result.traces[id];
  if (!trace) return `entry ${id}`;
  if (trace.fate.kind === 'forwarded') return `output #${trace.fate.output + 1}`;
  if (trace.origin.kind === 'input') return `input line ${trace.origin.line}`;
  return `an entry sent on by ${result.stages[trace.origin.stage]?.name ?? 'a stage'}`;
}

export function fateText(fate: Fate, result: RunResult): string {
  const stage = (i: number) => {
    const s = result.stages[i];
    return s ? `${s.name} (line ${s.line})` : 'a stage';
  };
  switch (fate.kind) {
    case 'forwarded':
      return `Forwarded as output #${fate.output + 1}.`;
    case 'dropped':
      return `Dropped by ${stage(fate.stage)}: ${fate.reason}.`;
    case 'held':
      return `Held by ${stage(fate.stage)} at the end of input.`;
    case 'merged':
      return `Joined by ${stage(fate.stage)} into ${traceName(fate.into, result)}.`;
  }
}

export function triggerText(trigger: Trigger, result: RunResult): string {
  switch (trigger.kind) {
    case 'input': {
      const trace = result.traces.find((t) => t.origin.kind === 'input' && t.origin.input === trigger.input);
      return trace && trace.origin.kind === 'input' ? `when input line ${trace.origin.line} arrived` : 'when the next input arrived';
    }
    case 'timer':
      return 'by a timer on the virtual clock';
    case 'end':
      return 'at the end of input';
  }
}

/** The run in time order: arrivals, flushes and the end of input, on the virtual clock. */
export function renderTimeline(container: HTMLElement, result: RunResult, actions: ViewActions): void {
  container.replaceChildren();
  const events: Array<{ atMs: number; order: number; what: string; detail: string; trace?: number }> = [];
  for (const trace of result.traces) {
    if (trace.origin.kind !== 'input') continue;
    events.push({
      atMs: trace.atMs,
      order: events.length,
      what: `Input line ${trace.origin.line} arrived`,
      detail: fateText(trace.fate, result),
      trace: trace.id,
    });
  }
  for (const flush of result.flushes) {
    const stage = result.stages[flush.stage];
    events.push({
      atMs: flush.atMs,
      order: events.length,
      what: `${stage?.name ?? 'stage'} flushed`,
      detail: `Sent on ${traceName(flush.trace, result)} ${triggerText(flush.trigger, result)}.`,
      trace: flush.trace,
    });
  }
  events.push({
    atMs: result.endMs,
    order: events.length,
    what: 'End of input',
    detail: 'Stateful stages flushed what they held; pending timers ran.',
  });
  events.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
  container.append(
    h(
      'p',
      { class: 'hint' },
      `The virtual clock starts at ${result.startedAt}. Entries arrive at their arrival_ms offsets; time moves only between arrivals.`,
    ),
  );
  const body = h('tbody');
  for (const event of events) {
    const what: Node =
      event.trace !== undefined
        ? (() => {
            const button = h('button', { type: 'button', class: 'link' }, event.what);
            button.addEventListener('click', () => actions.select(event.trace!));
            return button;
          })()
        : document.createTextNode(event.what);
    body.append(h('tr', {}, h('td', { class: 'time' }, formatOffset(event.atMs)), h('td', {}, what), h('td', {}, event.detail)));
  }
  container.append(
    h(
      'table',
      { class: 'timeline' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col' }, 'Outcome')),
      ),
      body,
    ),
  );
}

/** The Prometheus text, with `stage.metrics` series set apart from the comment lines. */
export function renderMetrics(pre: HTMLElement, result: RunResult): void {
  pre.replaceChildren();
  if (result.metrics.trim() === '') {
    pre.append('No metrics: the run did not complete.');
    return;
  }
  for (const line of result.metrics.split('\n')) {
    const cls = line.startsWith('#') ? 'metric-comment' : line.startsWith('logs_process_custom_') ? 'metric-custom' : 'metric-series';
    pre.append(h('span', { class: cls }, line), '\n');
  }
}

/** A one-line summary of the run for the status area. */
export function runSummary(result: RunResult): string {
  const inputs = result.traces.filter((t) => t.origin.kind === 'input');
  const count = (kind: Fate['kind']) => inputs.filter((t) => t.fate.kind === kind).length;
  const parts = [`${inputs.length} in`, `${result.entries.length} out`];
  if (count('dropped') > 0) parts.push(`${count('dropped')} dropped`);
  if (count('merged') > 0) parts.push(`${count('merged')} joined`);
  if (count('held') > 0) parts.push(`${count('held')} held`);
  if (result.flushes.length > 0) parts.push(`${result.flushes.length} flushed`);
  return parts.join(' · ');
}
