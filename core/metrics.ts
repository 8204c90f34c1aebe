import { goExposition } from '../lib/go-exposition.js';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';

/**
 * The counters every logs pipeline shares. They are registered once per prom-client registry and
 * shared by the top-level pipeline, nested `match` pipelines and every stage, as the reference does
 * (a vector with no series is not exported). In a config each component has a registry of its own
 * (`componentRegistry`), so each logs.process counts in its own, labelled with its component_id.
 */
export interface ProcessMetrics {
  readonly registry: Registry;
  readonly droppedLines: Counter<'reason'>;
  readonly droppedLinesByLabel: Counter<'label_name' | 'label_value'>;
  readonly truncatedFields: Counter<'field'>;
  /** The cri stage's counters, registered the first time a cri stage is built (not before, as in the reference). */
  readonly cri: () => CriMetrics;
}

export interface CriMetrics {
  readonly partialLinesFlushed: Counter<string>;
  readonly linesTruncated: Counter<string>;
}

/** Makes metric families registered on one registry, with their label names typed. */
export interface FamilyMaker {
  counter<L extends string = string>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  gauge<L extends string = string>(name: string, help: string, labelNames?: readonly L[]): Gauge<L>;
  histogram<L extends string = string>(name: string, help: string, labelNames?: readonly L[]): Histogram<L>;
}

function familyMaker(registry: Registry): FamilyMaker {
  const registers = [registry];
  return {
    counter: (name, help, labelNames = []) => new Counter({ name, help, labelNames, registers }),
    gauge: (name, help, labelNames = []) => new Gauge({ name, help, labelNames, registers }),
    histogram: (name, help, labelNames = []) => new Histogram({ name, help, labelNames, registers }),
  };
}

/**
 * Makes `create` run once per prom-client registry: the function returned hands back what
 * `create` made for a registry the first time it was asked. prom-client refuses a second family
 * of one name in a registry, so every component registers its families through this and all its
 * instances sharing a registry add to the same families. `make` registers families on the
 * registry. A registry that goes takes its entry with it.
 *
 * @example
 *   const echoMetrics = perRegistry((_registry, make) => ({
 *     entries: make.counter('logs_echo_entries_total', 'Entries written.', ['component_id']),
 *   }));
 *   echoMetrics(registry).entries.inc({ component_id: 'logs.echo.out' }); // one counter per registry
 */
export function perRegistry<T>(create: (registry: Registry, make: FamilyMaker) => T): (registry: Registry) => T {
  const made = new WeakMap<Registry, T>();
  return (registry) => {
    if (made.has(registry)) return made.get(registry) as T;
    const value = create(registry, familyMaker(registry));
    made.set(registry, value);
    return value;
  };
}

/** The shared pipeline counters on `registry`, created on first use. */
export const processMetrics: (registry: Registry) => ProcessMetrics = perRegistry((registry, make) => {
  let cri: CriMetrics | undefined;
  return {
    registry,
    droppedLines: make.counter('logs_process_dropped_lines_total', 'A count of all log lines dropped as a result of a pipeline stage', [
      'reason',
    ]),
    droppedLinesByLabel: make.counter(
      'logs_process_dropped_lines_by_label_total',
      'A count of all log lines dropped as a result of a pipeline stage',
      ['label_name', 'label_value'],
    ),
    truncatedFields: make.counter(
      'logs_process_truncated_fields_total',
      'A count of all log lines, labels, extracted values, or structured_metadata truncated as a result of a pipeline stage',
      ['field'],
    ),
    cri: () => {
      cri ??= {
        partialLinesFlushed: make.counter(
          'logs_process_cri_partial_lines_flushed_total',
          'A count of partial lines that were flushed prematurely due to the max_partial_lines limit being exceeded',
        ),
        linesTruncated: make.counter(
          'logs_process_cri_lines_truncated_total',
          'A count of lines that were truncated due to the max_partial_line_size limit',
        ),
      };
      return cri;
    },
  };
});

/** A registry for a whole process: process metrics plus every component's. */
export function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Metric families kept elsewhere (a worker thread's registry), as prom-client lists them. */
export type MetricFamilies = MetricObjectWithValues<MetricValue<string>>[];
type MetricsSource = () => Promise<MetricFamilies[]>;

/** The sources added to each registry (an empty set for a registry with none). */
const metricsSources = perRegistry((): Set<MetricsSource> => new Set());

/**
 * Adds families kept outside `registry` (pipelines on worker threads) to what `exposeMetrics`
 * serves for it; returns the function that takes them away again.
 */
export function addMetricsSource(registry: Registry, source: MetricsSource): () => void {
  const sources = metricsSources(registry);
  sources.add(source);
  return () => sources.delete(source);
}

/**
 * The exposition text of `registry` plus every added source, as the reference's Go client writes
 * it (see goExposition). A family found in several places (one stage's counter on every thread,
 * the shared pipeline counters) is summed, which is what one registry would have counted: every
 * series is counted by one thread only or adds up.
 */
export async function exposeMetrics(registry: Registry): Promise<string> {
  return goExposition(await gatheredMetrics(registry));
}

async function gatheredMetrics(registry: Registry): Promise<string> {
  const sources = metricsSources(registry);
  if (sources.size === 0) return registry.metrics();
  return (await aggregated(registry, sources)).metrics();
}

/**
 * `registry`'s families with every added source's (worker threads', components' labelled), as
 * `exposeMetrics` serves them: what to read a component's series from in a graph's registry.
 */
export async function gatheredFamilies(registry: Registry): Promise<MetricFamilies> {
  const sources = metricsSources(registry);
  if (sources.size === 0) return registry.getMetricsAsJSON();
  return (await aggregated(registry, sources)).getMetricsAsJSON();
}

async function aggregated(registry: Registry, sources: ReadonlySet<MetricsSource>): Promise<Registry> {
  const remote = (await Promise.all([...sources].map((source) => source()))).flat();
  const remoteNames = new Set(remote.flatMap((families) => families.map((family) => family.name)));
  const local = (await registry.getMetricsAsJSON()).map((family) =>
    // A family only this registry has is served as it is, whatever its cluster aggregator says.
    remoteNames.has(family.name) ? family : { ...family, aggregator: 'first' as const },
  );
  return AggregatorRegistry.aggregate([local, ...remote]);
}

/**
 * Where a component is in the config, as the reference labels every series the component
 * registers: `component_id` is its id (`logs.process.default`), `component_path` the module it
 * runs in (`/` for the root config; `/<module component id>` inside a module).
 */
export interface ComponentLabels {
  readonly component_id: string;
  readonly component_path: string;
}

/** The registry of one component, and how to take its series off the exposition when it goes. */
export interface ComponentRegistry {
  readonly registry: Registry;
  readonly remove: () => void;
}

/**
 * A registry of a component's own, whose families (worker threads' included) `exposeMetrics`
 * serves with `parent`'s, every series labelled with `labels` — the reference's registerer that
 * wraps a component's registrations with constant labels. A registry per component, rather than
 * labels on the shared families, keeps two components' counters of the same name apart
 * (`logs_process_dropped_lines_total` of two logs.process) and leaves every metric's own label
 * names as they are. A series that already names its `component_id` (sources and sinks label
 * their own series) keeps it and its label order; `component_path` is added after it.
 */
export function componentRegistry(parent: Registry, labels: ComponentLabels): ComponentRegistry {
  const registry = new Registry();
  const remove = addMetricsSource(parent, async () => [withComponentLabels(await gatheredFamilies(registry), labels)]);
  return { registry, remove };
}

/**
 * `families` with `labels` on every series. They are summed by name with the other components'
 * at exposition: series of different components never share a label set, so the sum is a union
 * whatever aggregator the family was made with (a thread's copies were summed already).
 */
export function withComponentLabels(families: MetricFamilies, labels: ComponentLabels): MetricFamilies {
  return families.map((family) => ({
    ...family,
    aggregator: 'sum' as const,
    values: family.values.map((value) => ({ ...value, labels: labelled(value.labels, labels) })),
  }));
}

function labelled(own: Partial<Record<string, string | number>>, labels: ComponentLabels): Partial<Record<string, string | number>> {
  if ('component_id' in own && 'component_path' in own) return own;
  if (!('component_id' in own)) return { component_id: labels.component_id, component_path: labels.component_path, ...own };
  const out: Partial<Record<string, string | number>> = {};
  for (const [name, value] of Object.entries(own)) {
    out[name] = value;
    if (name === 'component_id') out.component_path = labels.component_path;
  }
  return out;
}
