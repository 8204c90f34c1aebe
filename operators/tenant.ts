/**
 * stage.tenant — sets the tenant, stored in the reserved label `__tenant_id__`. Exactly one of
 * `label`, `source`, `value` must be set; an empty resulting tenant never overwrites one already set.
 */
import { ConfigError } from '../lib/config/errors.js';
import { own, TENANT_LABEL } from '../core/entry.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { names } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { stringify } from '../lib/go/values.js';

export interface TenantConfig {
  readonly label: string;
  readonly source: string;
  readonly value: string;
}

export const tenant = defineStage<TenantConfig>({
  name: 'tenant',
  doc: 'Sets the tenant ID from a label, an extracted value or a fixed value.',
  example: `stage.json {
  expressions = { customer_id = "" }
}

stage.tenant {
  source = "customer_id"
}`,
  fields: {
    label: { kind: t.string, default: '', doc: 'Label whose value becomes the tenant ID.' },
    source: { kind: t.string, default: '', doc: 'Extracted name whose value becomes the tenant ID.' },
    value: { kind: t.string, default: '', doc: 'Fixed tenant ID.' },
  },
  validate: validateTenant,
  build: buildTenant,
  partitioning: () => ({ writes: names([TENANT_LABEL]), state: { by: 'none' } }),
});

function validateTenant(config: TenantConfig): void {
  const set = [config.label, config.source, config.value].filter((v) => v !== '').length;
  if (set === 0) throw new ConfigError('label, source or value config are required');
  if (set > 1) throw new ConfigError('label, source and value are mutually exclusive: you should set source, value or label but not all');
}

function buildTenant(config: TenantConfig): StageImpl {
  const resolve: (entry: Parameters<Extract<StageImpl, { kind: 'map' }>['process']>[0]) => string | undefined = config.value
    ? () => config.value
    : config.source
      ? (entry) => stringify(own(entry.extracted, config.source))
      : (entry) => own(entry.labels, config.label);
  return {
    kind: 'map',
    process: (entry) => {
      const id = resolve(entry);
      if (id) entry.labels[TENANT_LABEL] = id;
      return entry;
    },
  };
}
