/**
 * stage.regex — extracts the named groups of an RE2 expression from the line or from an extracted
 * value. Reference quirks kept: the search is unanchored and only the first match counts; a named
 * group that did not take part in the match is stored as ""; unnamed groups are ignored; a `source`
 * that is missing or not convertible to text leaves the entry unchanged, while an explicitly empty
 * `source` is a config error (unlike stage.replace); with `labels_from_groups` every named group
 * also overrides the label of the same name (label values that are not valid UTF-8 are skipped).
 */
import { FieldError } from '../lib/config/errors.js';
import { compileFieldRegex } from '../core/field-regex.js';
import type { Regex } from '../lib/regex/index.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { ALL_NAMES, NO_NAMES } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { isValidUtf8String } from '../lib/go/values.js';
import { sourceText } from '../core/entry.js';

export interface RegexConfig {
  readonly expression: string;
  /** Extracted name to parse; absent means the log line. */
  readonly source?: string;
  readonly labels_from_groups: boolean;
}

export const regex = defineStage<RegexConfig>({
  name: 'regex',
  doc: 'Extracts the named groups of an RE2 regular expression from the line or an extracted value.',
  example: String.raw`stage.regex {
  expression = "^(?P<time>\\S+) (?P<level>[A-Z]+) (?P<msg>.*)$"
}`,
  fields: {
    expression: { kind: t.string, required: true, doc: 'RE2 expression; each named group `(?P<name>re)` is extracted under its name.' },
    source: { kind: t.string, doc: 'Extracted name to parse instead of the line. Must not be empty when set.' },
    labels_from_groups: { kind: t.bool, default: false, doc: 'Also set each named group as a label, overriding an existing one.' },
  },
  validate: validateRegex,
  build: buildRegex,
  // Group names become labels when labels_from_groups is set.
  partitioning: (config) => ({ writes: config.labels_from_groups ? ALL_NAMES : NO_NAMES, state: { by: 'none' } }),
});

function validateRegex(config: RegexConfig): void {
  compileExpression(config);
}

function compileExpression(config: RegexConfig): Regex {
  if (config.expression === '') throw new FieldError('expression', 'expression is required');
  if (config.source === '') throw new FieldError('source', 'empty source');
  return compileFieldRegex('expression', config.expression);
}

function buildRegex(config: RegexConfig): StageImpl {
  const expression = compileExpression(config);
  const groups: Array<[index: number, name: string]> = [];
  expression.groupNames.forEach((name, index) => {
    if (index > 0 && name) groups.push([index, name]);
  });
  const { source, labels_from_groups: labelsFromGroups } = config;
  return {
    kind: 'map',
    process: (entry) => {
      const input = sourceText(entry, source);
      if (input === undefined) return entry;
      const match = expression.exec(input);
      if (match === null) return entry;
      for (const [index, name] of groups) {
        const value = match.groups[index] ?? '';
        entry.extracted[name] = value;
        if (labelsFromGroups && isValidUtf8String(value)) entry.labels[name] = value;
      }
      return entry;
    },
  };
}
