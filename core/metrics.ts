import { goExposition } from '../lib/go-exposition.js';
import { AggregatorRegistry, Counter, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/**
 * The counters every logs pipeline shares. They are registered once per prom-client registry and
 * shared by the top-level pipeline, nested `match` pipelines and every stage, as the reference does
 * (a vector with no series is not exported).
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

const metricsByRegistry = new WeakMap<Registry, ProcessMetrics>();

/** The shared pipeline counters on `registry`, created on first use. */
export function processMetrics(registry: Registry): ProcessMetrics {
  let metrics = metricsByRegistry.get(registry);
  if (!metrics) {
    let cri: CriMetrics | undefined;
    metrics = {
      registry,
      droppedLines: new Counter({
        name: 'logs_process_dropped_lines_total',
        help: 'A count of all log lines dropped as a result of a pipeline stage',
        labelNames: ['reason'],
        registers: [registry],
      }),
      droppedLinesByLabel: new Counter({
        name: 'logs_process_dropped_lines_by_label_total',
        help: 'A count of all log lines dropped as a result of a pipeline stage',
        labelNames: ['label_name', 'label_value'],
        registers: [registry],
      }),
      truncatedFields: new Counter({
        name: 'logs_process_truncated_fields_total',
        help: 'A count of all log lines, labels, extracted values, or structured_metadata truncated as a result of a pipeline stage',
        labelNames: ['field'],
        registers: [registry],
      }),
      cri: () => {
        cri ??= {
          partialLinesFlushed: new Counter({
            name: 'logs_process_cri_partial_lines_flushed_total',
            help: 'A count of partial lines that were flushed prematurely due to the max_partial_lines limit being exceeded',
            registers: [registry],
          }),
          linesTruncated: new Counter({
            name: 'logs_process_cri_lines_truncated_total',
            help: 'A count of lines that were truncated due to the max_partial_line_size limit',
            registers: [registry],
          }),
        };
        return cri;
      },
    };
    metricsByRegistry.set(registry, metrics);
  }
  return metrics;
}

/** A registry for a whole process: process metrics plus every component's. */
export function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Metric families kept elsewhere (a worker thread's registry), as prom-client lists them. */
export type MetricFamilies = MetricObjectWithValues<MetricValue<string>>[];
type MetricsSource = () => Promise<MetricFamilies[]>;

const sourcesByRegistry = new WeakMap<Registry, Set<MetricsSource>>();

/**
 * Adds families kept outside `registry` (pipelines on worker threads) to what `exposeMetrics`
 * serves for it; returns the function that takes them away again.
 */
export function addMetricsSource(registry: Registry, source: MetricsSource): () => void {
  let sources = sourcesByRegistry.get(registry);
  if (!sources) sourcesByRegistry.set(registry, (sources = new Set()));
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
  const sources = sourcesByRegistry.get(registry);
  if (!sources || sources.size === 0) return registry.metrics();
  const remote = (await Promise.all([...sources].map((source) => source()))).flat();
  const remoteNames = new Set(remote.flatMap((families) => families.map((family) => family.name)));
  const local = (await registry.getMetricsAsJSON()).map((family) =>
    // A family only this registry has is served as it is, whatever its cluster aggregator says.
    remoteNames.has(family.name) ? family : { ...family, aggregator: 'first' as const },
  );
  return AggregatorRegistry.aggregate([local, ...remote]).metrics();
}
