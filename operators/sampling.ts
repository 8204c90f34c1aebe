/**
 * stage.sampling — keeps each entry with probability `rate` and drops the rest, counting the
 * drops. Reference quirk kept: each entry draws a uniform 63-bit integer and is kept iff it is
 * ≤ ⌊rate × 2^63⌋ (the float64 product of the rate and 2^63−1, which rounds to 2^63), so rate 1
 * keeps everything and rate 0 keeps only a draw of exactly 0. The drop counter's series exists
 * (at 0) from the moment the stage is built, and `drop_counter_reason = ""` counts under the empty
 * reason: unlike drop and match, sampling has no fallback to its default.
 */
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { formatFloat } from '../lib/go/strconv.js';

export interface SamplingConfig {
  /** The fraction of entries kept, 0 to 1 inclusive. */
  readonly rate: number;
  readonly drop_counter_reason: string;
}

const DEFAULT_REASON = 'sampling_stage';
const TWO_POW_63 = 2 ** 63;

export const sampling = defineStage<SamplingConfig>({
  name: 'sampling',
  doc: 'Keeps a random fraction `rate` of the entries and drops the others.',
  example: `stage.sampling {
  rate = 0.25
}`,
  fields: {
    rate: { kind: t.number, required: true, doc: 'Fraction of entries kept, from 0 to 1.' },
    drop_counter_reason: { kind: t.string, default: DEFAULT_REASON, doc: '`reason` label of `logs_process_dropped_lines_total`.' },
  },
  validate: validateSampling,
  build: buildSampling,
  // Each entry's coin is its own: no state to keep together.
  partitioning: () => PER_ENTRY,
});

function validateSampling(config: SamplingConfig): void {
  if (typeof config.rate !== 'number' || Number.isNaN(config.rate) || config.rate < 0 || config.rate > 1) {
    // The reference's text, comma and capital S included, prints the rate with Go's `%f`.
    throw new FieldError(
      'rate',
      `sampling stage failed to parse rate,Sampling Rate must be between 0.0 and 1.0, received ${formatFloat(config.rate, 'f', 6)}`,
    );
  }
}

function buildSampling(config: SamplingConfig, ctx: BuildContext): StageImpl {
  const reason = config.drop_counter_reason;
  // The reference takes its counter's child when the stage starts, which exports the series at 0.
  ctx.metrics.droppedLines.inc({ reason }, 0);
  // The draw scaled to a 63-bit integer against the reference's boundary; both sides are exact
  // in float64 (a power-of-two scaling and an integer-valued product), so no BigInt is needed.
  const boundary = Math.trunc(config.rate * TWO_POW_63);
  const { random } = ctx;
  return {
    kind: 'map',
    process: (entry) => {
      if (Math.floor(random() * TWO_POW_63) <= boundary) return entry;
      ctx.metrics.droppedLines.inc({ reason });
      return null;
    },
  };
}
