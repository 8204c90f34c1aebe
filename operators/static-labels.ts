/**
 * stage.static_labels — sets fixed labels on every entry. Reference quirks kept: a pair whose
 * value is empty is ignored entirely (it neither sets nor removes the label); the extracted map is
 * not touched.
 */
import { setOwn } from '../core/entry.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { names } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { checkFieldLabelName } from '../core/field-label-name.js';

export interface StaticLabelsConfig {
  readonly values: Readonly<Record<string, string>>;
}

export const staticLabels = defineStage<StaticLabelsConfig>({
  name: 'static_labels',
  doc: 'Adds each key with its fixed value as a label.',
  example: `stage.static_labels {
  values = { env = "prod", team = "payments" }
}`,
  fields: {
    values: { kind: t.map(t.string), required: true, doc: 'Label name to fixed value. Empty values are ignored.' },
  },
  validate: validateStaticLabels,
  build: buildStaticLabels,
  partitioning: (config) => ({ writes: names(Object.keys(config.values)), state: { by: 'none' } }),
});

function validateStaticLabels(config: StaticLabelsConfig): void {
  for (const name of Object.keys(config.values)) {
    checkFieldLabelName('values', name);
  }
}

function buildStaticLabels(config: StaticLabelsConfig): StageImpl {
  const pairs = Object.entries(config.values).filter(([, value]) => value !== '');
  return {
    kind: 'map',
    process: (entry) => {
      for (const [name, value] of pairs) setOwn(entry.labels, name, value);
      return entry;
    },
  };
}
