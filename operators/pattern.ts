/**
 * stage.pattern — extracts the named captures of a LogQL pattern (`<ip> - <_> "<method> <path>"`)
 * from the line or from an extracted value. Reference quirks kept: matching is Loki's lenient
 * single pass, so a capture whose following literal is missing takes the rest of the input and
 * later captures are simply not produced; text after a trailing literal is ignored; an empty input
 * never matches; a `source` that is missing or not convertible to text leaves the entry unchanged,
 * while an explicitly empty `source` is a config error; with `labels_from_groups` every produced
 * capture also overrides the label of the same name (an empty capture gives an empty label).
 */
import { FieldError } from '../lib/config/errors.js';
import { parsePattern, type LogqlPattern } from '../lib/logql/pattern.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { ALL_NAMES, NO_NAMES } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { isValidUtf8String } from '../lib/go/values.js';
import { sourceText } from '../core/entry.js';

export interface PatternConfig {
  readonly pattern: string;
  /** Extracted name to parse; absent means the log line. */
  readonly source?: string;
  readonly labels_from_groups: boolean;
}

export const pattern = defineStage<PatternConfig>({
  name: 'pattern',
  doc: 'Extracts the named captures of a LogQL pattern from the line or an extracted value.',
  example: String.raw`stage.pattern {
  pattern = "<ip> - - [<_>] \"<method> <path> <_>\" <status> <_>"
}`,
  fields: {
    pattern: {
      kind: t.string,
      required: true,
      doc: 'LogQL pattern: `<name>` captures, `<_>` skips, anything else is literal. At least one capture must be named.',
    },
    source: { kind: t.string, doc: 'Extracted name to parse instead of the line. Must not be empty when set.' },
    labels_from_groups: { kind: t.bool, default: false, doc: 'Also set each named capture as a label, overriding an existing one.' },
  },
  validate: validatePattern,
  build: buildPattern,
  // Group names become labels when labels_from_groups is set.
  partitioning: (config) => ({ writes: config.labels_from_groups ? ALL_NAMES : NO_NAMES, state: { by: 'none' } }),
});

function validatePattern(config: PatternConfig): void {
  compilePattern(config);
}

function compilePattern(config: PatternConfig): LogqlPattern {
  if (config.pattern === '') throw new FieldError('pattern', 'pattern is required');
  if (config.source === '') throw new FieldError('source', 'empty source');
  try {
    return parsePattern(config.pattern);
  } catch (err) {
    throw new FieldError('pattern', `failed to parse pattern: ${(err as Error).message}`);
  }
}

function buildPattern(config: PatternConfig): StageImpl {
  const matcher = compilePattern(config);
  const { source, labels_from_groups: labelsFromGroups } = config;
  return {
    kind: 'map',
    process: (entry) => {
      const input = sourceText(entry, source);
      if (input === undefined) return entry;
      const captures = matcher.match(input);
      if (captures === null) return entry;
      for (const [name, value] of captures) {
        entry.extracted[name] = value;
        if (labelsFromGroups && isValidUtf8String(value)) entry.labels[name] = value;
      }
      return entry;
    },
  };
}
