/**
 * stage.limit — throttles entries with a token bucket of `burst` tokens, initially full and
 * refilled at `rate` tokens per second; each entry takes one token. With `drop = true` an entry
 * that finds no token is dropped; with `drop = false` it waits for one, in arrival order.
 *
 * Reference quirks kept:
 * - the bucket is golang.org/x/time/rate's: fractional tokens, refill computed from the elapsed
 *   nanoseconds as Go's `Duration.Seconds() × rate`, capped at `burst`; a wait is the token deficit
 *   divided by the rate, truncated to whole nanoseconds (so a deficit worth under 1 ns does not
 *   wait at all); a refused entry leaves the bucket untouched; a clock that steps back refills
 *   nothing; a rate of at least the largest float64 means "no limit";
 * - in wait mode the next entry reserves its token only once the previous one has left the stage,
 *   as the reference's blocking call does, so its wait starts then;
 * - drops count `logs_process_dropped_lines_total{reason="ratelimit_drop_stage"}`;
 * - `by_label_name` reads the entry's labels, not the extracted map: without the label an entry is
 *   never limited and takes no token; each value (the empty one too) has its own bucket, created
 *   full on first sight; a drop also counts
 *   `logs_process_dropped_lines_by_label_total{label_name, label_value}`;
 * - buckets by value live in two generations of `max_distinct_labels` values (anything below
 *   10000 is raised to 10000): when the new generation fills up it becomes the old one, the older
 *   one is forgotten (those values restart with a full bucket), a value found only in the old
 *   generation is promoted with its bucket, and every rotation resets the whole by-label metric
 *   family, which all limit stages of a registry share.
 *
 * Where we differ on purpose (the reference blocks its goroutine and so the whole pipeline):
 * - wait mode holds entries in a FIFO of at most `MAX_HELD_ENTRIES` per subscription, releasing
 *   them on the injected scheduler; `pending()` lets the component acknowledge a batch only once
 *   its held entries have left, which is the back-pressure the reference gets from blocking. An
 *   entry arriving while the FIFO is full is dropped and counted under `ratelimit_queue_full`;
 * - at end of input the held entries keep leaving at the configured rate and the stage completes
 *   after the last one (the reference discards its one waiting entry at stop); entries still held
 *   when the subscription is torn down are counted under `ratelimit_discarded_on_stop` instead of
 *   vanishing silently.
 */
import { FieldError } from '../../lib/config/errors.js';
import { GenerationalBuckets } from './generational-buckets.js';
import { holdUntilTokens, type HeldEntries } from './hold-until-tokens.js';
import { TokenBucket } from './token-bucket.js';
import { defineStage, type BuildContext, type StageImpl } from '../../core/stage.js';
import { NO_NAMES, type StagePartitioning } from '../../core/stage-partitioning.js';
import { t } from '../../lib/config/schema.js';

export interface LimitConfig {
  /** Tokens per second; required, > 0. */
  readonly rate: number;
  /** Bucket size; required, > 0. */
  readonly burst: number;
  readonly drop: boolean;
  /** Limits each value of this label separately; needs `drop = true`. */
  readonly by_label_name: string;
  /** Values tracked per generation with `by_label_name`; below 10000 means 10000. */
  readonly max_distinct_labels: number;
}

/** The `reason` of drops for lack of a token, as the reference names it. */
export const RATELIMIT_DROP_REASON = 'ratelimit_drop_stage';
/** The `reason` of entries refused because the wait-mode FIFO is full. */
export const QUEUE_FULL_REASON = 'ratelimit_queue_full';
/** The `reason` of held entries discarded because the subscription ended before they left. */
export const DISCARDED_ON_STOP_REASON = 'ratelimit_discarded_on_stop';
/** The reference raises any smaller `max_distinct_labels` to this. */
export const MIN_DISTINCT_LABELS = 10_000;
/**
 * How many entries one wait-mode limit holds at most. At a few hundred bytes per held entry this
 * is tens of MiB (see bench/stages-time.ts); a component that awaits `pending()` never gets close.
 */
export const MAX_HELD_ENTRIES = 100_000;

export const limit = defineStage<LimitConfig>({
  name: 'limit',
  doc: 'Rate-limits entries with a token bucket: drops them, or holds them until a token is available.',
  example: `stage.limit {
  rate  = 100
  burst = 200
  drop  = true
}`,
  fields: {
    rate: { kind: t.number, required: true, doc: 'Tokens added per second (entries per second on average).' },
    burst: { kind: t.int, required: true, doc: 'Bucket size: how many entries may pass at once after a quiet period.' },
    drop: { kind: t.bool, default: false, doc: 'Drop entries over the limit instead of holding them until a token is available.' },
    by_label_name: {
      kind: t.string,
      default: '',
      doc: 'Limit each value of this label separately; entries without it are not limited. Needs `drop = true`.',
    },
    max_distinct_labels: { kind: t.int, default: MIN_DISTINCT_LABELS, doc: 'Label values tracked with `by_label_name` (at least 10000).' },
  },
  validate: validateLimit,
  build: buildLimit,
  partitioning: (config): StagePartitioning => ({
    writes: NO_NAMES,
    state: config.by_label_name
      ? { by: 'labels', names: [config.by_label_name] }
      : { by: 'all', reason: 'stage.limit without by_label_name keeps one rate for all entries' },
  }),
});

export function validateLimit(config: LimitConfig): void {
  const reason = 'limit stage failed to parse rate or burst';
  if (!(config.rate > 0)) throw new FieldError('rate', reason);
  if (!(config.burst > 0)) throw new FieldError('burst', reason);
  if (config.by_label_name !== '' && !config.drop) throw new FieldError('by_label_name', 'when ratelimiting by label, drop must be true');
}

/** A built wait-mode limit: an operator plus what a component needs to delay acknowledgements. */
export interface WaitingLimitImpl extends HeldEntries {
  readonly kind: 'operator';
}

function buildLimit(config: LimitConfig, ctx: BuildContext): StageImpl {
  const { droppedLines, droppedLinesByLabel } = ctx.metrics;
  const { clock } = ctx;
  const newBucket = () => new TokenBucket(config.rate, config.burst);

  if (config.by_label_name !== '') {
    const name = config.by_label_name;
    const buckets = new GenerationalBuckets(Math.max(config.max_distinct_labels, MIN_DISTINCT_LABELS), newBucket, () =>
      droppedLinesByLabel.reset(),
    );
    return {
      kind: 'map',
      process: (entry) => {
        if (!Object.hasOwn(entry.labels, name)) return entry;
        const value = entry.labels[name]!;
        if (buckets.getOrCreate(value).allow(clock.nowNs())) return entry;
        droppedLines.inc({ reason: RATELIMIT_DROP_REASON });
        droppedLinesByLabel.inc({ label_name: name, label_value: value });
        return null;
      },
    };
  }

  const bucket = newBucket();
  if (config.drop) {
    // Dropping needs no timer: a per-entry filter the pipeline can fuse with its neighbours.
    return {
      kind: 'map',
      process: (entry) => {
        if (bucket.allow(clock.nowNs())) return entry;
        droppedLines.inc({ reason: RATELIMIT_DROP_REASON });
        return null;
      },
    };
  }

  const held = holdUntilTokens(bucket, clock, {
    maxHeld: MAX_HELD_ENTRIES,
    onQueueFull: () => {
      droppedLines.inc({ reason: QUEUE_FULL_REASON });
      ctx.debug('limit: hold queue full, dropping entry', { max_held: MAX_HELD_ENTRIES });
    },
    onDiscard: (count) => {
      droppedLines.inc({ reason: DISCARDED_ON_STOP_REASON }, count);
      ctx.debug('limit: discarding held entries on stop', { count });
    },
  });
  const impl: WaitingLimitImpl = { kind: 'operator', ...held };
  return impl;
}
