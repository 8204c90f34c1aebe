/**
 * stage.labels — sets labels from extracted values (or from structured metadata). Reference
 * quirks kept: a null or empty source means the label's own name; values that don't stringify
 * (null, lists) are skipped; with `source_type = "structured_metadata"` the first pair of that name
 * is used and the metadata stays on the entry; the extracted map is never written.
 */
import { own, setOwn } from '../core/entry.js';
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { names } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { stringify } from '../lib/go/values.js';
import { checkFieldLabelName } from '../core/field-label-name.js';

export interface LabelsConfig {
  /** Label name → source name; null or "" means the same name. */
  readonly values: Readonly<Record<string, string | null>>;
  readonly source_type: 'extracted' | 'structured_metadata';
}

export const labels = defineStage<LabelsConfig>({
  name: 'labels',
  doc: 'Sets labels from extracted values or structured metadata.',
  example: `stage.json {
  expressions = { level = "", app = "" }
}

stage.labels {
  values = { level = "", application = "app" }
}`,
  fields: {
    values: { kind: t.map(t.any), required: true, doc: 'Label to set → name to read. Empty means the same name.' },
    source_type: {
      kind: t.string,
      default: 'extracted',
      oneOf: ['extracted', 'structured_metadata'],
      doc: 'Where values are read from: `extracted` or `structured_metadata`.',
    },
  },
  validate: validateLabels,
  build: buildLabels,
  partitioning: (config) => ({ writes: names(Object.keys(config.values)), state: { by: 'none' } }),
});

function validateLabels(config: LabelsConfig): void {
  for (const [name, source] of Object.entries(config.values)) {
    checkFieldLabelName('values', name);
    if (source !== null && typeof source !== 'string')
      throw new FieldError('values', `value of ${JSON.stringify(name)} must be a string or null`);
  }
  if (config.source_type !== 'extracted' && config.source_type !== 'structured_metadata') {
    throw new FieldError(
      'source_type',
      `invalid source_type ${JSON.stringify(config.source_type)}, expected "extracted" or "structured_metadata"`,
    );
  }
}

function buildLabels(config: LabelsConfig): StageImpl {
  const mappings = Object.entries(config.values).map(([name, source]) => [name, source || name] as const);
  if (config.source_type === 'structured_metadata') {
    return {
      kind: 'map',
      process: (entry) => {
        for (const [name, source] of mappings) {
          const pair = entry.structuredMetadata.find((p) => p.name === source);
          if (pair) setOwn(entry.labels, name, pair.value);
        }
        return entry;
      },
    };
  }
  return {
    kind: 'map',
    process: (entry) => {
      for (const [name, source] of mappings) {
        const value = stringify(own(entry.extracted, source));
        if (value !== undefined) setOwn(entry.labels, name, value);
      }
      return entry;
    },
  };
}
