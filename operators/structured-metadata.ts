/**
 * stage.structured_metadata — adds structured metadata from extracted values and labels. Four
 * steps in the reference's order: mapped extracted values, regex-matched extracted keys, mapped
 * labels, regex-matched labels. Labels named by the stage move to metadata (they are removed from
 * the label set), so a label value overrides an extracted value of the same name. The regex tests
 * key names unanchored.
 */
import { FieldError } from '../lib/config/errors.js';
import { own, setMetadata } from '../core/entry.js';
import { compileFieldRegex } from '../core/field-regex.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { names, ALL_NAMES } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { stringify } from '../lib/go/values.js';
import { checkFieldLabelName } from '../core/field-label-name.js';

export interface StructuredMetadataConfig {
  /** Metadata name → source name; null or "" means the same name. */
  readonly values: Readonly<Record<string, string | null>>;
  readonly regex: string;
}

export const structuredMetadata = defineStage<StructuredMetadataConfig>({
  name: 'structured_metadata',
  doc: 'Adds extracted values and labels to the entry as structured metadata; labels moved this way leave the label set.',
  example: `stage.json {
  expressions = { trace_id = "" }
}

stage.structured_metadata {
  values = { trace_id = "" }
}`,
  fields: {
    values: { kind: t.map(t.any), default: {}, doc: 'Metadata name → extracted name (empty: the same name).' },
    regex: { kind: t.string, default: '', doc: 'Extracted values and labels whose names match are added (unanchored RE2).' },
  },
  validate: validateStructuredMetadata,
  build: buildStructuredMetadata,
  // Labels it names (or its regex matches) move to metadata.
  partitioning: (config) => ({ writes: config.regex ? ALL_NAMES : names(Object.keys(config.values)), state: { by: 'none' } }),
});

function validateStructuredMetadata(config: StructuredMetadataConfig): void {
  for (const [name, source] of Object.entries(config.values)) {
    checkFieldLabelName('values', name);
    if (source !== null && typeof source !== 'string')
      throw new FieldError('values', `value of ${JSON.stringify(name)} must be a string or null`);
  }
  if (config.regex !== '') compileFieldRegex('regex', config.regex);
}

function buildStructuredMetadata(config: StructuredMetadataConfig): StageImpl {
  const mappings = Object.entries(config.values).map(([name, source]) => [name, source || name] as const);
  const regex = config.regex === '' ? undefined : compileFieldRegex('regex', config.regex);
  return {
    kind: 'map',
    process: (entry) => {
      const { extracted, labels } = entry;
      for (const [name, source] of mappings) {
        const value = stringify(own(extracted, source));
        if (value !== undefined) setMetadata(entry, name, value);
      }
      if (regex) {
        for (const key of Object.keys(extracted)) {
          if (!regex.test(key)) continue;
          const value = stringify(extracted[key]);
          if (value !== undefined) setMetadata(entry, key, value);
        }
      }
      // Removed after the loop, as the reference does: two names mapped to one label both get it.
      let moved: string[] | undefined;
      for (const [name, source] of mappings) {
        const value = own(labels, source);
        if (value === undefined) continue;
        setMetadata(entry, name, value);
        (moved ??= []).push(source);
      }
      if (moved) for (const source of moved) delete labels[source];
      if (regex) {
        for (const name of Object.keys(labels)) {
          if (!regex.test(name)) continue;
          setMetadata(entry, name, labels[name]!);
          delete labels[name];
        }
      }
      return entry;
    },
  };
}
