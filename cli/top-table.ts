/**
 * What `rivulet top` shows: each component's entries in, out and dropped, read from the series of
 * a run server's `/metrics` that carry its `component_id`, and the table it prints. Which series
 * give which column depends on the component's type (its id without the label):
 *
 * - in: `rivulet_component_received_entries_total` for a component with a receiver (logs.process,
 *   sinks); for a source, what it read or was pushed (FLOW_SERIES);
 * - out: `rivulet_component_sent_entries_total` for a component that forwards (sources,
 *   logs.process); for a sink, what it delivered (logs.write's sent entries, logs.write.jetstream's
 *   published entries);
 * - dropped: the component's own dropped series (FLOW_SERIES), summed over their other labels.
 *
 * A column with no series for a component reads `-`.
 */
import { RECEIVED_ENTRIES, SENT_ENTRIES } from '../core/inspect/flow-counters.js';

/** A component's totals; undefined where it has no series for the column. */
export interface ComponentFlow {
  readonly in?: number;
  readonly out?: number;
  readonly dropped?: number;
}

export type FlowColumn = keyof ComponentFlow;

/** Series that give a column for one component type, beside the generic in/out counters. */
export const FLOW_SERIES: Readonly<Record<string, Partial<Record<FlowColumn, readonly string[]>>>> = {
  'logs.source.file': { in: ['logs_source_file_read_lines_total'], dropped: ['logs_source_file_dropped_entries_total'] },
  'logs.source.stdin': { in: ['logs_source_stdin_read_lines_total'] },
  'logs.source.api': { in: ['logs_source_api_entries_total'] },
  'logs.source.jetstream': { in: ['logs_source_jetstream_received_entries_total'] },
  'logs.process': { dropped: ['logs_process_dropped_lines_total'] },
  'logs.write': { out: ['logs_write_sent_entries_total'], dropped: ['logs_write_dropped_entries_total'] },
  'logs.write.jetstream': { out: ['logs_write_jetstream_published_entries_total'], dropped: ['logs_write_jetstream_failed_entries_total'] },
};

const GENERIC: Record<FlowColumn, readonly string[]> = { in: [RECEIVED_ENTRIES], out: [SENT_ENTRIES], dropped: [] };

/** What `rivulet top --help` says of its columns, written from FLOW_SERIES so both agree. */
export function flowColumnsHelp(): string[] {
  const lines = ["columns, from the /metrics series with each component's component_id (- when none):"];
  const described: Record<FlowColumn, string> = {
    in: `IN: ${RECEIVED_ENTRIES} (what its receivers took over), except`,
    out: `OUT: ${SENT_ENTRIES} (what it handed to other components, once per receiver), except`,
    dropped: 'DROPPED: only',
  };
  for (const column of ['in', 'out', 'dropped'] as const) {
    lines.push(`  ${described[column]}`);
    for (const [type, series] of Object.entries(FLOW_SERIES)) {
      if (series[column]) lines.push(`    ${type}: ${series[column].join(', ')}`);
    }
  }
  lines.push('  IN/S, OUT/S, DROPPED/S: the change over the last interval, a second');
  return lines;
}

/** The type of a component: its id, without the module path, without the last (label) part. */
function typeOf(componentId: string): string {
  const own = componentId.slice(componentId.lastIndexOf('/') + 1);
  const dot = own.lastIndexOf('.');
  return dot < 0 ? own : own.slice(0, dot);
}

/**
 * A series' component as the run server names it: what a component registers carries its id
 * within its module and the module's path (`component_path="/pipeline.default"`; `/` outside
 * modules), what the runtime counts for it its full id alone.
 */
function fullId(componentId: string, componentPath: string | undefined): string {
  return componentPath === undefined || componentPath === '/' ? componentId : `${componentPath.slice(1)}/${componentId}`;
}

function unescapeLabel(raw: string): string {
  return raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** Which series give `column` for `componentId`: its type's own ones, else the generic counter. */
function seriesFor(componentId: string, column: FlowColumn): readonly string[] {
  return FLOW_SERIES[typeOf(componentId)]?.[column] ?? GENERIC[column];
}

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every component's in, out and dropped totals in a Prometheus text exposition. */
export function componentFlows(metricsText: string): Map<string, ComponentFlow> {
  // name → component id → sum of its samples
  const sums = new Map<string, Map<string, number>>();
  for (const line of metricsText.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const open = line.indexOf('{');
    if (open < 0) continue;
    const close = line.lastIndexOf('}');
    const name = line.slice(0, open);
    let id: string | undefined;
    let path: string | undefined;
    for (const m of line.slice(open + 1, close).matchAll(LABEL)) {
      if (m[1] === 'component_id') id = unescapeLabel(m[2]!);
      if (m[1] === 'component_path') path = unescapeLabel(m[2]!);
    }
    if (id === undefined) continue;
    const componentId = fullId(id, path);
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(' ')[0],
    );
    let byComponent = sums.get(name);
    if (!byComponent) sums.set(name, (byComponent = new Map()));
    byComponent.set(componentId, (byComponent.get(componentId) ?? 0) + value);
  }
  const ids = new Set<string>();
  for (const byComponent of sums.values()) for (const id of byComponent.keys()) ids.add(id);
  const flows = new Map<string, ComponentFlow>();
  for (const id of [...ids].sort()) {
    const total = (column: FlowColumn): number | undefined => {
      let sum: number | undefined;
      for (const name of seriesFor(id, column)) {
        const value = sums.get(name)?.get(id);
        if (value !== undefined) sum = (sum ?? 0) + value;
      }
      return sum;
    };
    const flow = { in: total('in'), out: total('out'), dropped: total('dropped') };
    if (flow.in !== undefined || flow.out !== undefined || flow.dropped !== undefined) flows.set(id, flow);
  }
  return flows;
}

const COLUMNS: readonly FlowColumn[] = ['in', 'out', 'dropped'];

/**
 * The table: a row per component of `now`, its totals and, against `before` taken `seconds`
 * earlier, its rates a second (one decimal; `-` without an earlier total).
 */
export function flowTable(
  now: ReadonlyMap<string, ComponentFlow>,
  before: ReadonlyMap<string, ComponentFlow> | undefined,
  seconds: number,
): string {
  const rows: string[][] = [['COMPONENT', 'IN', 'IN/S', 'OUT', 'OUT/S', 'DROPPED', 'DROPPED/S']];
  for (const [id, flow] of now) {
    const row = [id];
    for (const column of COLUMNS) {
      const total = flow[column];
      const earlier = before?.get(id)?.[column];
      row.push(total === undefined ? '-' : String(total));
      row.push(total === undefined || earlier === undefined || seconds <= 0 ? '-' : ((total - earlier) / seconds).toFixed(1));
    }
    rows.push(row);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n') + '\n';
}
