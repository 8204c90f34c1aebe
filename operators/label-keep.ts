/**
 * stage.label_keep — reduces the label set to the listed names. Every other label goes, the
 * reserved `__` labels such as the tenant included; an empty label set is still forwarded.
 */
import { FieldError } from '../lib/config/errors.js';
import { own, setOwn, type Labels } from '../core/entry.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { t } from '../lib/config/schema.js';

export interface LabelKeepConfig {
  readonly values: readonly string[];
}

export const labelKeep = defineStage<LabelKeepConfig>({
  name: 'label_keep',
  doc: 'Reduces the label set of an entry to the labels named in `values`.',
  example: `stage.label_keep {
  values = ["app", "env", "level"]
}`,
  fields: {
    values: { kind: t.list(t.string), required: true, doc: 'Names of the labels to keep.' },
  },
  validate: validateLabelKeep,
  build: buildLabelKeep,
  // Every label but the kept ones is removed.
  partitioning: (config) => ({ writes: { allBut: new Set(config.values) }, state: { by: 'none' } }),
});

function validateLabelKeep(config: LabelKeepConfig): void {
  if (config.values.length === 0) throw new FieldError('values', 'labelallow stage config cannot be empty');
}

function buildLabelKeep(config: LabelKeepConfig): StageImpl {
  const keep = [...new Set(config.values)];
  return {
    kind: 'map',
    process: (entry) => {
      const kept: Labels = {};
      for (const name of keep) {
        const value = own(entry.labels, name);
        if (value !== undefined) setOwn(kept, name, value);
      }
      entry.labels = kept;
      return entry;
    },
  };
}
