/**
 * stage.metrics — updates custom counters, gauges and histograms from each entry; entries pass
 * unchanged. Reference quirks kept: series labels are the entry's current label set minus `__…`
 * and invalid names, one series per full label set; a `match_all` counter counts every entry
 * without reading `source` (with `count_entry_bytes` it adds the line's UTF-8 bytes instead;
 * with `action = "add"` but no `count_entry_bytes` it never counts anything); the
 * `value` filter compares the stringified source and skips unconvertible values; numeric actions
 * skip values that do not convert to a float (Go float syntax, then a Go duration in seconds);
 * `count_entry_bytes` needs `match_all` AND `action = "add"` although the reference's message says
 * "or"; an empty `prefix` means the default; idle series are exported one last time at a scrape,
 * then removed; metrics sharing a `name` within one stage: the last definition is the one updated.
 * Where the reference crashes, this stage skips the update instead: a negative counter add, a
 * histogram series with an entry label named `le`; it rejects bad histogram buckets up front.
 */
import { Buffer } from 'node:buffer';
import {
  DEFAULT_BUCKETS,
  EntrySeries,
  formatGoFloatG,
  histogramBounds,
  registerCustomMetric,
  type CustomMetric,
  type CustomMetricType,
  type SeriesRef,
} from './custom-metrics.js';
import type { Entry } from '../../core/entry.js';
import { FieldError } from '../../lib/config/errors.js';
import { defineStage, type BuildContext, type StageImpl } from '../../core/stage.js';
import { NO_NAMES } from '../../core/stage-partitioning.js';
import { t, type FieldSpec } from '../../lib/config/schema.js';
import { stringify, toFloat } from '../../lib/go/values.js';

interface MetricCommonConfig {
  readonly name: string;
  readonly description: string;
  /** Extracted key to read; empty means `name`. */
  readonly source: string;
  /** Empty means `logs_process_custom_`. */
  readonly prefix: string;
  /** Nanoseconds; at least one second. */
  readonly max_idle_duration: bigint;
  /** When set, only entries whose stringified source equals it update the metric. */
  readonly value: string;
}

export interface CounterMetricConfig extends MetricCommonConfig {
  readonly action: 'inc' | 'add';
  readonly match_all: boolean;
  readonly count_entry_bytes: boolean;
}

export interface GaugeMetricConfig extends MetricCommonConfig {
  readonly action: 'set' | 'inc' | 'dec' | 'add' | 'sub';
}

export interface HistogramMetricConfig extends MetricCommonConfig {
  readonly buckets: readonly number[];
}

export interface MetricsConfig {
  readonly 'metric.counter': readonly CounterMetricConfig[];
  readonly 'metric.gauge': readonly GaugeMetricConfig[];
  readonly 'metric.histogram': readonly HistogramMetricConfig[];
  /** The metric blocks' names in the order written (set from config files; see buildMetrics). */
  readonly blockOrder?: readonly MetricBlockName[];
}

type MetricBlockName = 'metric.counter' | 'metric.gauge' | 'metric.histogram';

const DEFAULT_PREFIX = 'logs_process_custom_';
const MIN_IDLE_NS = 1_000_000_000n;
const COUNTER_ACTIONS = ['inc', 'add'];
const GAUGE_ACTIONS = ['set', 'inc', 'dec', 'add', 'sub'];

const commonFields: Record<string, FieldSpec> = {
  name: { kind: t.string, required: true, doc: 'Metric name, after the prefix.' },
  description: { kind: t.string, default: '', doc: 'Help text.' },
  source: { kind: t.string, default: '', doc: 'Extracted key to read; empty means the metric name.' },
  prefix: { kind: t.string, default: DEFAULT_PREFIX, doc: 'Prefix of the metric name; empty means the default.' },
  max_idle_duration: { kind: t.duration, default: 300_000_000_000n, doc: 'Series not updated for this long are removed (at least `1s`).' },
  value: { kind: t.string, default: '', doc: 'Only entries whose source equals this value update the metric.' },
};

export const metrics = defineStage<MetricsConfig>({
  name: 'metrics',
  doc: 'Updates custom counters, gauges and histograms from extracted values; entries pass unchanged.',
  example: `stage.logfmt {
  mapping = { duration = "" }
}

stage.metrics {
  metric.counter {
    name        = "lines_total"
    description = "Lines seen by this pipeline."
    match_all   = true
    action      = "inc"
  }

  metric.histogram {
    name        = "request_duration_seconds"
    description = "Request durations from the duration field."
    source      = "duration"
    buckets     = [0.01, 0.1, 1]
  }
}`,
  fields: {},
  blocks: {
    'metric.counter': {
      doc: 'A counter.',
      multiple: true,
      fields: {
        ...commonFields,
        action: { kind: t.string, required: true, doc: '`inc` adds 1, `add` adds the source value.' },
        match_all: { kind: t.bool, default: false, doc: 'Counts every entry without reading the source.' },
        count_entry_bytes: { kind: t.bool, default: false, doc: 'With `match_all` and `add`: adds the line size in bytes.' },
      },
    },
    'metric.gauge': {
      doc: 'A gauge.',
      multiple: true,
      fields: {
        ...commonFields,
        action: { kind: t.string, required: true, doc: '`set`, `inc`, `dec`, `add` or `sub`.' },
      },
    },
    'metric.histogram': {
      doc: 'A histogram.',
      multiple: true,
      fields: {
        ...commonFields,
        buckets: { kind: t.list(t.number), required: true, doc: 'Bucket upper bounds, increasing; empty means the defaults.' },
      },
    },
  },
  blockOrderKey: 'blockOrder',
  validate: validateMetrics,
  build: buildMetrics,
  // Series are kept per label set, and set gauges and idle expiry need one owner per series.
  partitioning: () => ({ writes: NO_NAMES, state: { by: 'stream' } }),
});

function validateMetrics(config: MetricsConfig): void {
  config['metric.counter'].forEach(validateCounter);
  config['metric.gauge'].forEach(validateGauge);
  config['metric.histogram'].forEach(validateHistogram);
}

/** Fails at an attribute of the `index`th `metric.<kind>` block (at the block when not written). */
function failure(kind: string, config: MetricCommonConfig, index: number) {
  return (field: string, reason: string): never => {
    throw new FieldError(field, `metric.${kind} ${JSON.stringify(config.name)}: ${reason}`, {
      nested: [{ block: `metric.${kind}`, index }],
    });
  };
}

type Fail = (field: string, reason: string) => never;

function validateCommon(config: MetricCommonConfig, fail: Fail): void {
  if (config.max_idle_duration < MIN_IDLE_NS) fail('max_idle_duration', 'max_idle_duration must be greater or equal than 1s');
}

function validateCounter(config: CounterMetricConfig, index: number): void {
  const fail = failure('counter', config, index);
  validateCommon(config, fail);
  if (!COUNTER_ACTIONS.includes(config.action)) fail('action', "the 'action' counter field must be either 'inc' or 'add'");
  if (config.match_all && config.value !== '') fail('value', "a 'counter' metric supports either 'match_all' or a 'value', but not both");
  // The reference's text says "or" but its check needs both.
  if (config.count_entry_bytes && (!config.match_all || config.action !== 'add'))
    fail(
      'count_entry_bytes',
      "the 'count_entry_bytes' counter field must be specified along with match_all set to true or action set to 'add'",
    );
}

function validateGauge(config: GaugeMetricConfig, index: number): void {
  const fail = failure('gauge', config, index);
  validateCommon(config, fail);
  if (!GAUGE_ACTIONS.includes(config.action))
    fail('action', "the 'action' gauge field must be one of the following values: [set, inc, dec, add, sub]");
}

function validateHistogram(config: HistogramMetricConfig, index: number): void {
  const fail = failure('histogram', config, index);
  validateCommon(config, fail);
  const bounds = histogramBounds(config.buckets);
  if (typeof bounds === 'string') fail('buckets', bounds);
}

/** Updates one metric from one entry. */
type MetricUpdate = (entry: Entry, series: SeriesRef) => void;

interface Definition {
  readonly config: MetricCommonConfig;
  readonly type: CustomMetricType;
  readonly buckets?: readonly number[];
  readonly update: (metric: MetricWriter, ctx: BuildContext) => MetricUpdate;
}

/** The part of a metric an update writes to. */
type MetricWriter = Pick<CustomMetric, 'add' | 'set' | 'observe' | 'options'>;

/**
 * A metric that also notes each update it makes, for `--inspect` and the playground's traces:
 * `counter logs_process_custom_lines_total{app="api"} +1`, `gauge … set 3`, `histogram … observe 0.25`.
 */
function noting(metric: CustomMetric, type: CustomMetricType, note: (effect: string) => void): MetricWriter {
  const series = (ref: SeriesRef) => {
    const labels = Object.entries(ref.labels()).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
    return `${type} ${metric.options.name}${labels.length > 0 ? `{${labels.join(',')}}` : ''}`;
  };
  return {
    options: metric.options,
    add: (ref, delta) => {
      metric.add(ref, delta);
      note(`${series(ref)} ${delta < 0 ? '-' : '+'}${formatGoFloatG(Math.abs(delta))}`);
    },
    set: (ref, value) => {
      metric.set(ref, value);
      note(`${series(ref)} set ${formatGoFloatG(value)}`);
    },
    observe: (ref, value) => {
      const recorded = metric.observe(ref, value);
      if (recorded) note(`${series(ref)} observe ${formatGoFloatG(value)}`);
      return recorded;
    },
  };
}

function buildMetrics(config: MetricsConfig, ctx: BuildContext): StageImpl {
  // Keyed by `name` like the reference's own table, filled in the order the blocks were written
  // whatever their type: a later definition of a name replaces the earlier one. (The reference
  // still registers the earlier one, but it never gets a series, so leaving it out exports the
  // same samples.) A programmatic config has no written order: counters, gauges, then histograms.
  const definitions = new Map<string, Definition>();
  const next = { 'metric.counter': 0, 'metric.gauge': 0, 'metric.histogram': 0 };
  const order =
    config.blockOrder ?? (['metric.counter', 'metric.gauge', 'metric.histogram'] as const).flatMap((name) => config[name].map(() => name));
  for (const name of order) {
    const index = next[name]++;
    if (name === 'metric.counter') {
      const counter = config[name][index]!;
      definitions.set(counter.name, { config: counter, type: 'counter', update: counterUpdate(counter) });
    } else if (name === 'metric.gauge') {
      const gauge = config[name][index]!;
      definitions.set(gauge.name, { config: gauge, type: 'gauge', update: gaugeUpdate(gauge) });
    } else {
      const histogram = config[name][index]!;
      const bounds = histogramBounds(histogram.buckets);
      const buckets = typeof bounds === 'string' ? DEFAULT_BUCKETS : bounds;
      definitions.set(histogram.name, { config: histogram, type: 'histogram', buckets, update: histogramUpdate(histogram) });
    }
  }

  const registered: CustomMetric[] = [];
  const updates: MetricUpdate[] = [];
  try {
    for (const def of definitions.values()) {
      const metric = registerCustomMetric(ctx.metrics.registry, {
        name: (def.config.prefix || DEFAULT_PREFIX) + def.config.name,
        help: def.config.description,
        type: def.type,
        buckets: def.buckets,
        maxIdleNs: def.config.max_idle_duration,
        clock: ctx.clock,
      });
      registered.push(metric);
      const effects = ctx.effects;
      updates.push(def.update(effects ? noting(metric, def.type, (e) => effects.note(e)) : metric, ctx));
    }
  } catch (err) {
    for (const metric of registered) metric.dispose();
    throw err;
  }

  const series = new EntrySeries(ctx.clock);
  return {
    kind: 'map',
    process: (entry) => {
      series.reset(entry.labels);
      for (const update of updates) update(entry, series);
      return entry;
    },
    dispose: () => {
      for (const metric of registered) metric.dispose();
    },
  };
}

const SKIP = Symbol('skip');

/** The source value when the entry has it and it passes the `value` filter, else SKIP. */
function filteredSource(config: MetricCommonConfig): (entry: Entry) => unknown {
  const source = config.source || config.name;
  const wanted = config.value;
  return (entry) => {
    if (!Object.hasOwn(entry.extracted, source)) return SKIP;
    const value = entry.extracted[source];
    if (wanted !== '' && stringify(value) !== wanted) return SKIP;
    return value;
  };
}

function counterUpdate(config: CounterMetricConfig) {
  return (metric: MetricWriter, ctx: BuildContext): MetricUpdate => {
    if (config.match_all) {
      if (config.count_entry_bytes) return (entry, series) => metric.add(series, Buffer.byteLength(entry.line, 'utf8'));
      // The reference hands `add` a nil value here, which fails its float conversion: such a
      // counter never gets a series.
      if (config.action === 'add') return () => {};
      return (_entry, series) => metric.add(series, 1);
    }
    const read = filteredSource(config);
    if (config.action === 'inc') {
      return (entry, series) => {
        if (read(entry) !== SKIP) metric.add(series, 1);
      };
    }
    return (entry, series) => {
      const found = read(entry);
      const amount = found === SKIP ? undefined : toFloat(found);
      if (amount === undefined) return;
      if (amount < 0) {
        ctx.debug('counter add skipped: negative value', { metric: metric.options.name, value: amount });
        return;
      }
      metric.add(series, amount);
    };
  };
}

function gaugeUpdate(config: GaugeMetricConfig) {
  return (metric: MetricWriter): MetricUpdate => {
    const read = filteredSource(config);
    const { action } = config;
    if (action === 'inc' || action === 'dec') {
      const delta = action === 'inc' ? 1 : -1;
      return (entry, series) => {
        if (read(entry) !== SKIP) metric.add(series, delta);
      };
    }
    return (entry, series) => {
      const found = read(entry);
      const amount = found === SKIP ? undefined : toFloat(found);
      if (amount === undefined) return;
      if (action === 'set') metric.set(series, amount);
      else metric.add(series, action === 'add' ? amount : -amount);
    };
  };
}

function histogramUpdate(config: HistogramMetricConfig) {
  return (metric: MetricWriter, ctx: BuildContext): MetricUpdate => {
    const read = filteredSource(config);
    return (entry, series) => {
      const found = read(entry);
      const amount = found === SKIP ? undefined : toFloat(found);
      if (amount === undefined) return;
      if (!metric.observe(series, amount))
        ctx.debug('histogram observation skipped: the entry has a label named "le"', { metric: metric.options.name });
    };
  };
}
