/**
 * stage.structured_metadata_drop — removes every metadata pair whose name is listed; the
 * remaining pairs keep their order and labels are untouched. An empty list is a config error.
 */
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';

export interface StructuredMetadataDropConfig {
  readonly values: readonly string[];
}

export const structuredMetadataDrop = defineStage<StructuredMetadataDropConfig>({
  name: 'structured_metadata_drop',
  doc: 'Drops the named structured metadata from entries.',
  example: `stage.structured_metadata_drop {
  values = ["trace_id"]
}`,
  fields: {
    values: { kind: t.list(t.string), required: true, doc: 'Names of the metadata pairs to drop.' },
  },
  validate: validateStructuredMetadataDrop,
  build: buildStructuredMetadataDrop,
  partitioning: () => PER_ENTRY,
});

function validateStructuredMetadataDrop(config: StructuredMetadataDropConfig): void {
  if (config.values.length === 0) throw new FieldError('values', 'structured_metadata_drop stage config cannot be empty');
}

function buildStructuredMetadataDrop(config: StructuredMetadataDropConfig): StageImpl {
  const names = new Set(config.values);
  return {
    kind: 'map',
    process: (entry) => {
      if (entry.structuredMetadata.some((p) => names.has(p.name))) {
        entry.structuredMetadata = entry.structuredMetadata.filter((p) => !names.has(p.name));
      }
      return entry;
    },
  };
}
