/**
 * stage.match — runs nested stages on entries whose labels and line match a reduced LogQL
 * selector (`action = "keep"`), or drops those entries (`action = "drop"`). Reference quirks
 * kept: label regexes are fully anchored, line regexes are not, a missing label compares as `""`;
 * the nested pipeline first copies every current label into the extracted map again, overwriting
 * same-named keys; an empty `action` means keep; keep needs nested stages and drop forbids them;
 * `pipeline_name` has no observable effect; an empty `drop_counter_reason` means the default.
 *
 * When every nested stage works per entry, the whole block is one per-entry function, so a
 * config with hundreds of match blocks costs one selector test per block and entry. Nested
 * stages that hold or split entries (multiline, limit, cri) make it an operator: matching entries
 * go into the nested pipeline, the others pass straight on, and the nested pipeline completes
 * (and flushes) when the source does.
 */
import { Observable } from 'rxjs';
import { Inlet } from '../core/inlet.js';
import { seedLabels, type Entry } from '../core/entry.js';
import { ConfigError, ConfigErrors, FieldError } from '../lib/config/errors.js';
import { compileSelector, parseSelector, SelectorError } from '../lib/logql/selector.js';
import { defineStage, type BuildContext, type BuiltPipeline, type StageImpl, type StageSpec } from '../core/stage.js';
import { NO_NAMES } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';

export interface MatchConfig {
  readonly selector: string;
  /** `keep` (the default; `""` means keep too) or `drop`. */
  readonly action: string;
  readonly drop_counter_reason: string;
  readonly pipeline_name: string;
  /** Nested stages (`stage.*` blocks inside the match block). */
  readonly stages?: readonly StageSpec[];
}

const DEFAULT_REASON = 'match_stage';

type EntryPredicate = (labels: Readonly<Record<string, string>>, line: string) => boolean;

export const match = defineStage<MatchConfig>({
  name: 'match',
  doc: 'Runs nested stages on entries matching a log selector with optional line filters, or drops them.',
  example: String.raw`stage.match {
  selector = "{app=\"checkout\"} |= \"error\""

  stage.static_labels {
    values = { severity = "error" }
  }
}

stage.match {
  selector = "{app=\"healthcheck\"}"
  action   = "drop"
}`,
  fields: {
    selector: { kind: t.string, required: true, doc: 'Stream selector plus line filters: `{app="api"} |= "error"`.' },
    action: { kind: t.string, default: 'keep', doc: '`keep` runs the nested stages on matching entries; `drop` drops them.' },
    drop_counter_reason: {
      kind: t.string,
      default: DEFAULT_REASON,
      doc: '`reason` label of `logs_process_dropped_lines_total` for `drop`.',
    },
    pipeline_name: { kind: t.string, default: '', doc: 'Name of the nested pipeline (informational).' },
  },
  stages: true,
  validate: validateMatch,
  build: buildMatch,
  // The selector only reads labels; nested stages run after whatever came before the match.
  partitioning: (config) => ({ writes: NO_NAMES, state: { by: 'none' }, nested: config.stages ?? [] }),
});

function validateMatch(config: MatchConfig): void {
  if (config.selector === '') throw new FieldError('selector', 'selector statement required for match stage');
  const action = actionOf(config);
  const nested = config.stages ?? [];
  if (action === 'keep' && nested.length === 0)
    throw new ConfigError("match stage requires at least one additional stage to be defined in '- stages'");
  if (action === 'drop' && nested.length > 0) throw new ConfigError('match stage configured to drop entries cannot contains stages');
  compileMatcher(config.selector);
}

function actionOf(config: MatchConfig): 'keep' | 'drop' {
  if (config.action === 'keep' || config.action === '') return 'keep';
  if (config.action === 'drop') return 'drop';
  throw new FieldError('action', "match stage action should be 'keep' or 'drop'");
}

function compileMatcher(selector: string): EntryPredicate {
  try {
    return compileSelector(parseSelector(selector));
  } catch (err) {
    if (err instanceof SelectorError) throw new FieldError('selector', `invalid selector syntax for match stage: ${err.message}`);
    throw err;
  }
}

function buildMatch(config: MatchConfig, ctx: BuildContext): StageImpl {
  const matches = compileMatcher(config.selector);
  if (actionOf(config) === 'drop') {
    const reason = config.drop_counter_reason || DEFAULT_REASON;
    return {
      kind: 'map',
      process: (entry) => {
        if (!matches(entry.labels, entry.line)) return entry;
        ctx.metrics.droppedLines.inc({ reason });
        return null;
      },
    };
  }
  const nested = buildNestedPipeline(config, ctx);
  const { process } = nested;
  if (process) {
    return {
      kind: 'map',
      process: (entry) => {
        if (!matches(entry.labels, entry.line)) return entry;
        seedLabels(entry);
        return process(entry);
      },
      dispose: () => nested.dispose(),
    };
  }
  return {
    kind: 'operator',
    operator: (source) => routeThrough(source, matches, nested),
    dispose: () => nested.dispose(),
    pending: () => nested.pending(),
    held: () => nested.held(),
  };
}

/**
 * Builds the nested stages. A failure keeps its position at the nested stage and carries the
 * reference's wrapping words, `match stage failed to create pipeline`; the reference also prints
 * its whole config struct there (`from config {Selector:… Stages:[0xc…]}`), pointers included,
 * which is left out.
 */
function buildNestedPipeline(config: MatchConfig, ctx: BuildContext): BuiltPipeline {
  const wrap = (err: ConfigError) => new ConfigError(`match stage failed to create pipeline: ${err.reason}`, err.pos, err.blockPath);
  try {
    return ctx.buildNested(config.stages ?? [], ['stage.match', ...(config.pipeline_name ? [config.pipeline_name] : [])]);
  } catch (err) {
    if (err instanceof ConfigErrors) throw new ConfigErrors(err.errors.map(wrap));
    if (err instanceof ConfigError) throw wrap(err);
    throw err;
  }
}

/**
 * Sends matching entries through the nested pipeline and the others straight on. Downstream
 * completes once the source has completed and the nested pipeline has flushed and completed.
 */
function routeThrough(source: Observable<Entry>, matches: EntryPredicate, nested: BuiltPipeline): Observable<Entry> {
  return new Observable<Entry>((subscriber) => {
    const matched = new Inlet<Entry>();
    let sourceDone = false;
    let nestedDone = false;
    const completeWhenBoth = () => {
      if (sourceDone && nestedDone) subscriber.complete();
    };
    const nestedSubscription = nested.operator(matched).subscribe({
      next: (entry) => subscriber.next(entry),
      error: (err) => subscriber.error(err),
      complete: () => {
        nestedDone = true;
        completeWhenBoth();
      },
    });
    const sourceSubscription = source.subscribe({
      next: (entry) => {
        if (!matches(entry.labels, entry.line)) {
          subscriber.next(entry);
          return;
        }
        seedLabels(entry);
        matched.next(entry);
      },
      error: (err) => subscriber.error(err),
      complete: () => {
        sourceDone = true;
        matched.complete();
        completeWhenBoth();
      },
    });
    return () => {
      sourceSubscription.unsubscribe();
      nestedSubscription.unsubscribe();
    };
  });
}
