/**
 * Custom metrics for `stage.metrics`: counters, gauges and histograms whose series carry each
 * entry's label set and expire when idle, exported through a prom-client registry.
 *
 * The reference registers one collector per metric block and never unregisters it; series of a
 * torn-down stage are deleted, so a new pipeline can re-create a metric of the same name. Here
 * each metric name is one prom-client entry per registry (a `CustomMetricFamily`), shared by every
 * stage that defines that name; each stage owns its own `CustomMetric` (its series) inside the
 * family, and disposing the stage removes exactly those series.
 */
import type { Metric, Registry } from 'prom-client';
import type { Clock } from '../../core/clock.js';
import { ConfigError } from '../../lib/config/errors.js';
import { labelsKey, type Labels } from '../../core/entry.js';
import { formatFloat } from '../../lib/go/strconv.js';
import { isValidLabelName } from '../../lib/go/values.js';

export type CustomMetricType = 'counter' | 'gauge' | 'histogram';

/** The Prometheus client's default histogram buckets, used when a histogram lists none. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface CustomMetricOptions {
  /** The full metric name, prefix included. */
  readonly name: string;
  readonly help: string;
  readonly type: CustomMetricType;
  /** Histogram upper bounds, strictly increasing (see `histogramBounds`). */
  readonly buckets?: readonly number[];
  /** A series not updated for this long is exported one last time and then removed. */
  readonly maxIdleNs: bigint;
  readonly clock: Clock;
}

interface Series {
  readonly labels: Labels;
  value: number;
  /** Histogram only: observations per bucket (not cumulative), the last slot counting the rest. */
  readonly bucketCounts?: number[];
  count: number;
  lastUpdateSec: number;
}

interface ExportedValue {
  value: number;
  labels: Record<string, string>;
  metricName?: string;
}

const NS_PER_SECOND = 1_000_000_000n;

/**
 * The upper bounds a histogram uses: the defaults for an empty list, a trailing `+Inf` dropped
 * (it is always implied). Returns an error text when the bounds are not strictly increasing: the
 * Prometheus client's own text (`%f >= %f`, the first offending bound then the next one), which
 * the reference only hits as a panic at the first observation.
 */
export function histogramBounds(buckets: readonly number[]): readonly number[] | string {
  if (buckets.length === 0) return DEFAULT_BUCKETS;
  if (buckets.some(Number.isNaN)) return 'histogram buckets must not be NaN';
  for (let i = 0; i < buckets.length - 1; i++) {
    if (buckets[i]! >= buckets[i + 1]!)
      return `histogram buckets must be in increasing order: ${formatFloat(buckets[i]!, 'f', 6)} >= ${formatFloat(buckets[i + 1]!, 'f', 6)}`;
  }
  return buckets[buckets.length - 1] === Infinity ? buckets.slice(0, -1) : [...buckets];
}

/**
 * The label set of a metric series: the entry's labels minus reserved `__…` names and names that
 * are not valid label names, sorted by name as the reference exports them. Names outside the
 * legacy character set (valid under the UTF-8 scheme, e.g. `k8s.io/app`) are written the way the
 * reference's exposition escapes them for a scraper that did not ask for UTF-8 (`k8s_io_app`).
 */
export function seriesLabels(labels: Readonly<Labels>): Labels {
  const out: Labels = {};
  for (const name of Object.keys(labels).sort()) {
    if (name.startsWith('__') || !isValidLabelName(name)) continue;
    out[escapeName(name)] = labels[name]!;
  }
  return out;
}

/**
 * Prometheus' underscore escaping of a metric or label name for the classic text format (the same
 * rule for both): a valid legacy metric name is kept; otherwise every character other than a
 * letter, `_`, `:` or a digit after the first character becomes `_`.
 *
 * @example escapeName('k8s.io/app') === 'k8s_io_app'; escapeName('1abc') === '_abc'
 */
export function escapeName(name: string): string {
  if (/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) return name;
  let out = '';
  let first = true;
  for (const char of name) {
    out += /^[a-zA-Z_:]$/.test(char) || (!first && /^[0-9]$/.test(char)) ? char : '_';
    first = false;
  }
  return out;
}

/**
 * How an update addresses a series: its key (the entry's full label set rendered as text), the
 * labels a new series gets, and the time of the update in whole seconds. Each is computed on
 * demand, so a stage can share them between its metrics for one entry.
 */
export interface SeriesRef {
  key(): string;
  labels(): Labels;
  nowSec(): number;
}

/** Go's `time.Unix()` of the clock: whole seconds, rounded down also before 1970. */
export function clockSeconds(clock: Clock): number {
  const ns = clock.nowNs();
  const sec = ns / NS_PER_SECOND;
  return Number(ns < 0n && sec * NS_PER_SECOND !== ns ? sec - 1n : sec);
}

/**
 * The series identity of the entry being processed, shared by all metrics of the stage and
 * computed at most once per entry. A stage handles one entry at a time, so it keeps one instance
 * and resets it for each entry.
 */
export class EntrySeries implements SeriesRef {
  private labelSet: Readonly<Labels> = {};
  private cachedKey: string | undefined;
  private cachedNow: number | undefined;

  constructor(private readonly clock: Clock) {}

  reset(labels: Readonly<Labels>): void {
    this.labelSet = labels;
    this.cachedKey = undefined;
    this.cachedNow = undefined;
  }

  key(): string {
    return (this.cachedKey ??= labelsKey(this.labelSet));
  }

  labels(): Labels {
    return seriesLabels(this.labelSet);
  }

  nowSec(): number {
    return (this.cachedNow ??= clockSeconds(this.clock));
  }
}

/** One stage's series of one metric. */
export class CustomMetric {
  private readonly series = new Map<string, Series>();
  private readonly maxIdleSec: number;
  private disposed = false;

  constructor(
    readonly options: CustomMetricOptions,
    private readonly family: CustomMetricFamily,
  ) {
    // The reference compares whole seconds: a 1.5s idle limit acts as 1s.
    this.maxIdleSec = Number(options.maxIdleNs / NS_PER_SECOND);
  }

  /** Adds `delta` (counters: never negative; gauges: inc/dec/add/sub). */
  add(ref: SeriesRef, delta: number): void {
    const series = this.seriesFor(ref);
    series.value += delta;
    series.lastUpdateSec = ref.nowSec();
  }

  /** Sets a gauge. */
  set(ref: SeriesRef, value: number): void {
    const series = this.seriesFor(ref);
    series.value = value;
    series.lastUpdateSec = ref.nowSec();
  }

  /**
   * Records a histogram observation. Returns false (and records nothing) when the series would
   * carry a label named `le`, which the histogram reserves for its bucket bounds.
   */
  observe(ref: SeriesRef, value: number): boolean {
    let series = this.series.get(ref.key());
    if (!series) {
      const labels = ref.labels();
      if (Object.hasOwn(labels, 'le')) return false;
      series = this.createSeries(ref.key(), labels, ref.nowSec());
    }
    const bounds = this.options.buckets ?? DEFAULT_BUCKETS;
    // Upper bounds are inclusive; NaN falls in no finite bucket, only in the count.
    let i = 0;
    while (i < bounds.length && !(value <= bounds[i]!)) i++;
    series.bucketCounts![i]!++;
    series.value += value;
    series.count++;
    series.lastUpdateSec = ref.nowSec();
    return true;
  }

  /** The number of live series (for tests and diagnostics). */
  get size(): number {
    return this.series.size;
  }

  /** Deletes every series of this stage and leaves the family. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.series.clear();
    this.family.detach(this);
  }

  /** Exports the current series, then removes those idle for at least the idle limit. */
  collect(out: ExportedValue[]): void {
    const name = this.options.name;
    const bounds = this.options.buckets ?? DEFAULT_BUCKETS;
    for (const series of this.series.values()) {
      if (this.options.type !== 'histogram') {
        out.push({ value: series.value, labels: series.labels });
        continue;
      }
      let cumulative = 0;
      for (let i = 0; i < bounds.length; i++) {
        cumulative += series.bucketCounts![i]!;
        out.push({ metricName: `${name}_bucket`, value: cumulative, labels: { ...series.labels, le: formatGoFloatG(bounds[i]!) } });
      }
      out.push({ metricName: `${name}_bucket`, value: series.count, labels: { ...series.labels, le: '+Inf' } });
      out.push({ metricName: `${name}_sum`, value: series.value, labels: series.labels });
      out.push({ metricName: `${name}_count`, value: series.count, labels: series.labels });
    }
    const now = clockSeconds(this.options.clock);
    for (const [key, series] of this.series) {
      if (now - series.lastUpdateSec >= this.maxIdleSec) this.series.delete(key);
    }
  }

  /** Forgets every series (prom-client's `resetMetrics`). */
  reset(): void {
    this.series.clear();
  }

  private seriesFor(ref: SeriesRef): Series {
    return this.series.get(ref.key()) ?? this.createSeries(ref.key(), ref.labels(), ref.nowSec());
  }

  private createSeries(key: string, labels: Labels, nowSec: number): Series {
    const bucketSlots = this.options.type === 'histogram' ? (this.options.buckets ?? DEFAULT_BUCKETS).length + 1 : 0;
    const series: Series = {
      labels,
      value: 0,
      count: 0,
      lastUpdateSec: nowSec,
      ...(bucketSlots > 0 ? { bucketCounts: new Array<number>(bucketSlots).fill(0) } : {}),
    };
    this.series.set(key, series);
    return series;
  }
}

/**
 * The prom-client side of one metric name on one registry: registered once and kept, it exports
 * the series of every stage currently defining that name. HELP and TYPE come from the newest
 * definition; during a reload an older definition of another type no longer shows.
 */
export class CustomMetricFamily {
  readonly aggregator = 'sum';
  private readonly members = new Set<CustomMetric>();

  constructor(readonly name: string) {}

  attach(options: CustomMetricOptions): CustomMetric {
    const metric = new CustomMetric(options, this);
    this.members.add(metric);
    return metric;
  }

  detach(metric: CustomMetric): void {
    this.members.delete(metric);
  }

  async get(): Promise<{ name: string; help: string; type: CustomMetricType; aggregator: string; values: ExportedValue[] }> {
    const newest = [...this.members].at(-1);
    const type = newest?.options.type ?? 'untyped';
    const values: ExportedValue[] = [];
    for (const member of this.members) if (member.options.type === type) member.collect(values);
    return { name: this.name, help: newest?.options.help ?? '', type: type as CustomMetricType, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const member of this.members) member.reset();
  }
}

/**
 * Adds a stage's metric to the registry: the family of that name is created and registered on
 * first use and shared afterwards. A name outside the legacy character set is escaped as the
 * reference's exposition does (`my.app_lines` → `my_app_lines`).
 *
 * @throws ConfigError when the name belongs to a metric that is not a custom metric
 */
export function registerCustomMetric(registry: Registry, requested: CustomMetricOptions): CustomMetric {
  const options = { ...requested, name: escapeName(requested.name) };
  const existing = registry.getSingleMetric(options.name) as unknown;
  let family: CustomMetricFamily;
  if (existing instanceof CustomMetricFamily) {
    family = existing;
  } else if (existing !== undefined) {
    throw new ConfigError(`metric ${JSON.stringify(options.name)} is already registered by another component`);
  } else {
    family = new CustomMetricFamily(options.name);
    registry.registerMetric(family as unknown as Metric);
  }
  return family.attach(options);
}

/**
 * Go's `strconv.FormatFloat(n, 'g', -1, 64)`, which the text exposition uses for `le` bounds:
 * shortest round-trip digits, in exponent form (at least two exponent digits) when the decimal
 * exponent is below -4 or at least 6.
 *
 * @example formatGoFloatG(0.005) === '0.005'; formatGoFloatG(1e6) === '1e+06'; formatGoFloatG(1e-5) === '1e-05'
 */
export function formatGoFloatG(n: number): string {
  return formatFloat(n, 'g', -1);
}
