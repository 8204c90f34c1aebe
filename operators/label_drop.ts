/**
 * stage.label_drop — removes the listed labels. `values` is required and non-empty (the
 * reference's docs call it optional, its code does not); names are not validated; the extracted
 * map keeps the seeded copies, so a dropped label can be re-created from it.
 */
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { t } from '../core/schema.js';

export interface LabelDropConfig {
  readonly values: readonly string[];
}

export const labelDrop = defineStage<LabelDropConfig>({
  name: 'label_drop',
  doc: 'Drops the labels named in `values` from entries.',
  example: `stage.label_drop {
  values = ["filename", "pod_uid"]
}`,
  fields: {
    values: { kind: t.list(t.string), required: true, doc: 'Names of the labels to drop.' },
  },
  validate: validateLabelDrop,
  build: buildLabelDrop,
});

export function validateLabelDrop(config: LabelDropConfig): void {
  if (config.values.length === 0) throw new FieldError('values', 'labels list is empty');
}

function buildLabelDrop(config: LabelDropConfig): StageImpl {
  const names = [...config.values];
  return {
    kind: 'map',
    process: (entry) => {
      for (const name of names) delete entry.labels[name];
      return entry;
    },
  };
}
