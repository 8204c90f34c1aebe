/**
 * stage.drop — drops entries when every configured condition holds (several drop stages act as
 * OR). Reference quirks kept: `longer_than` counts UTF-8 bytes and needs strictly more; `older_than`
 * compares against the wall clock; a source-only drop needs each listed key to be present (a null
 * value is enough); with `value`/`expression` absent keys are skipped when joining, a present but
 * unconvertible value (null, list) keeps the entry, and no present key at all joins to `""`; the
 * source list is split on `,` without trimming; `value` must equal the joined text exactly; an
 * empty `separator` or `drop_counter_reason` means the default; `longer_than = "0"` and
 * `older_than = "0s"` mean "not set".
 */
import { Buffer } from 'node:buffer';
import { ByteSizeError, parseBase2Bytes } from '../lib/go/bytesize.js';
import type { Entry } from '../core/entry.js';
import { ConfigError, FieldError } from '../lib/config/errors.js';
import type { Regex } from '../lib/regex/index.js';
import { compileFieldRegex } from '../core/field-regex.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { stringify } from '../lib/go/values.js';

export interface DropConfig {
  /** Extracted name, or a comma-separated list of names; empty means the line. */
  readonly source: string;
  readonly value: string;
  /** RE2, searched unanchored in the line or in the joined source values. */
  readonly expression: string;
  readonly separator: string;
  /** Nanoseconds; 0 means not set. */
  readonly older_than: bigint;
  /** A base-2 size such as `8KB`; empty or zero means not set. */
  readonly longer_than: string;
  readonly drop_counter_reason: string;
}

const DEFAULT_SEPARATOR = ';';
const DEFAULT_REASON = 'drop_stage';

export const drop = defineStage<DropConfig>({
  name: 'drop',
  doc: 'Drops entries matching every configured condition; use several drop stages for OR.',
  example: `stage.drop {
  source = "level"
  value  = "debug"
}

stage.drop {
  older_than          = "24h"
  drop_counter_reason = "too_old"
}`,
  fields: {
    source: { kind: t.string, default: '', doc: 'Extracted name or comma-separated names; empty means the line.' },
    value: { kind: t.string, default: '', doc: 'Drops when the (joined) source value equals this exactly. Needs `source`.' },
    expression: { kind: t.string, default: '', doc: 'RE2 searched in the line or the joined source values.' },
    separator: { kind: t.string, default: DEFAULT_SEPARATOR, doc: 'Placed between the values of several sources.' },
    older_than: { kind: t.duration, default: 0n, doc: 'Drops entries whose timestamp is older than now minus this duration.' },
    longer_than: { kind: t.string, default: '', doc: 'Drops lines longer than this many bytes (`10B`, `8KiB`, `1MB`).' },
    drop_counter_reason: { kind: t.string, default: DEFAULT_REASON, doc: '`reason` label of `logs_process_dropped_lines_total`.' },
  },
  validate: validateDrop,
  build: buildDrop,
  partitioning: () => PER_ENTRY,
});

function validateDrop(config: DropConfig): void {
  const longerThan = parseLongerThan(config.longer_than);
  if (config.source === '' && config.expression === '' && config.older_than === 0n && longerThan === 0n) {
    throw new ConfigError('drop stage config must contain at least one of `source`, `expression`, `older_than` or `longer_than`');
  }
  if (config.value !== '' && config.expression !== '') {
    throw new ConfigError('drop stage config error, `value` and `expression` cannot both be defined at the same time');
  }
  if (config.value !== '' && config.source === '')
    throw new FieldError('value', 'drop stage config must contain `source` if `value` is specified');
  if (config.expression !== '') compileExpression(config.expression);
}

function parseLongerThan(text: string): bigint {
  if (text === '') return 0n;
  try {
    return parseBase2Bytes(text);
  } catch (err) {
    if (err instanceof ByteSizeError) throw new FieldError('longer_than', err.message);
    throw err;
  }
}

function compileExpression(pattern: string): Regex {
  return compileFieldRegex('expression', pattern, 'drop stage regex compilation error: ');
}

type Condition = (entry: Entry) => boolean;

function buildDrop(config: DropConfig, ctx: BuildContext): StageImpl {
  const reason = config.drop_counter_reason || DEFAULT_REASON;
  const separator = config.separator || DEFAULT_SEPARATOR;
  const sources = config.source === '' ? [] : config.source.split(',');
  const conditions: Condition[] = [];

  // Cheapest checks first, as the reference orders them: any false condition keeps the entry.
  const longerThan = parseLongerThan(config.longer_than);
  if (longerThan !== 0n) conditions.push(longerThanCondition(longerThan));
  const olderThan = config.older_than;
  if (olderThan !== 0n) conditions.push((entry) => entry.timestamp < ctx.clock.nowNs() - olderThan);

  const regex = config.expression === '' ? undefined : compileExpression(config.expression);
  const hasMatcher = regex !== undefined || config.value !== '';
  if (sources.length > 0 && !hasMatcher) {
    conditions.push((entry) => sources.every((key) => Object.hasOwn(entry.extracted, key)));
  } else if (sources.length === 0 && regex) {
    conditions.push((entry) => regex.test(entry.line));
  } else if (sources.length > 0) {
    const matches = regex ? (text: string) => regex.test(text) : (text: string) => text === config.value;
    conditions.push((entry) => {
      const joined = joinSources(entry, sources, separator);
      return joined !== undefined && matches(joined);
    });
  }

  return {
    kind: 'map',
    process: (entry) => {
      for (const holds of conditions) if (!holds(entry)) return entry;
      ctx.metrics.droppedLines.inc({ reason });
      return null;
    },
  };
}

function longerThanCondition(limit: bigint): Condition {
  // A UTF-16 unit is at most 3 UTF-8 bytes, so short lines need no byte count at all.
  const limitNumber = Number(limit);
  return (entry) => {
    const { line } = entry;
    if (line.length * 3 <= limitNumber) return false;
    if (line.length > limitNumber) return true;
    return Buffer.byteLength(line, 'utf8') > limitNumber;
  };
}

/** The present source values joined, or undefined when one of them does not convert to text. */
function joinSources(entry: Entry, sources: readonly string[], separator: string): string | undefined {
  let joined = '';
  let first = true;
  for (const key of sources) {
    if (!Object.hasOwn(entry.extracted, key)) continue;
    const text = stringify(entry.extracted[key]);
    if (text === undefined) return undefined;
    joined = first ? text : joined + separator + text;
    first = false;
  }
  return joined;
}
