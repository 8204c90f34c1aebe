/**
 * stage.label_drop — removes the listed labels. `values` is required and non-empty (the
 * reference's docs call it optional, its code does not); names are not validated; the extracted
 * map keeps the seeded copies, so a dropped label can be re-created from it.
 */
import { setOwn, type Labels } from '../core/entry.js';
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { names } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';

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
  partitioning: (config) => ({ writes: names(config.values), state: { by: 'none' } }),
});

function validateLabelDrop(config: LabelDropConfig): void {
  if (config.values.length === 0) throw new FieldError('values', 'labeldrop stage config cannot be empty');
}

function buildLabelDrop(config: LabelDropConfig): StageImpl {
  const names = [...config.values];
  return {
    kind: 'map',
    process: (entry) => {
      if (names.some((name) => Object.hasOwn(entry.labels, name))) entry.labels = labelsWithout(entry.labels, names);
      return entry;
    },
  };
}

/**
 * The label set minus `names`, as a new object in the same order. Not `delete`: V8 turns an
 * object that loses a property other than its last into a slow dictionary, and every later
 * stage and the writer would read this one's labels that way.
 */
function labelsWithout(labels: Labels, names: readonly string[]): Labels {
  const kept: Labels = {};
  // for…in walks the object's cached key list; Object.keys would allocate an array per entry.
  for (const name in labels) if (!names.includes(name)) setOwn(kept, name, labels[name]);
  return kept;
}
