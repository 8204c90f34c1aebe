/**
 * stage.output — replaces the line with an extracted value. A missing or non-stringifiable value
 * (null, lists) leaves the line unchanged; labels are usable as sources through label seeding.
 */
import { own } from '../core/entry.js';
import { FieldError } from '../lib/config/errors.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { stringify } from '../lib/go/values.js';

export interface OutputConfig {
  readonly source: string;
}

export const output = defineStage<OutputConfig>({
  name: 'output',
  doc: 'Replaces the line of the forwarded entry with the extracted value named by `source`.',
  example: `stage.json {
  expressions = { msg = "" }
}

stage.output {
  source = "msg"
}`,
  fields: {
    source: { kind: t.string, required: true, doc: 'Extracted name whose value becomes the line.' },
  },
  validate: validateOutput,
  build: buildOutput,
  partitioning: () => PER_ENTRY,
});

function validateOutput(config: OutputConfig): void {
  if (config.source === '') throw new FieldError('source', 'output source value is required if output is specified');
}

function buildOutput(config: OutputConfig): StageImpl {
  const { source } = config;
  return {
    kind: 'map',
    process: (entry) => {
      const value = stringify(own(entry.extracted, source));
      if (value !== undefined) entry.line = value;
      return entry;
    },
  };
}
