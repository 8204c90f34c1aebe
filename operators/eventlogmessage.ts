/**
 * stage.eventlogmessage — deprecated predecessor of stage.hostevent: extracts `key: value` fields
 * from a host event message, one per CRLF line. Reference quirks kept: `source` and the keys follow
 * the legacy label-name rule `[a-zA-Z_][a-zA-Z0-9_]*` (invalid keys are sanitized or, with
 * `drop_invalid_labels`, skipped; a title line such as `Network connection detected:` becomes a
 * field with an empty value); a key already extracted is stored as `<key>_extracted` unless
 * `overwrite_existing`; a source value that is not convertible to text drops the whole entry,
 * without a metric.
 */
import { FieldError } from '../lib/config/errors.js';
import { eventMessageStep, parseEventLogMessage } from '../lib/hostevent.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { isLegacyLabelName } from '../lib/go/values.js';

export interface EventLogMessageConfig {
  readonly source: string;
  readonly drop_invalid_labels: boolean;
  readonly overwrite_existing: boolean;
}

export const eventLogMessage = defineStage<EventLogMessageConfig>({
  name: 'eventlogmessage',
  doc: 'Extracts key: value fields from a host event log message (deprecated: use stage.hostevent).',
  deprecated: 'use stage.hostevent',
  fields: {
    source: { kind: t.string, default: 'message', doc: 'Extracted name holding the message; must match `[a-zA-Z_][a-zA-Z0-9_]*`.' },
    drop_invalid_labels: {
      kind: t.bool,
      default: false,
      doc: 'Skip fields whose key is not a valid label name instead of replacing invalid characters with `_`.',
    },
    overwrite_existing: {
      kind: t.bool,
      default: false,
      doc: 'Overwrite an existing extracted value of the same name instead of storing under `<key>_extracted`.',
    },
  },
  validate: validateEventLogMessage,
  build: buildEventLogMessage,
  partitioning: () => PER_ENTRY,
});

function validateEventLogMessage(config: EventLogMessageConfig): void {
  if (!isLegacyLabelName(config.source)) throw new FieldError('source', `invalid label name: ${config.source}`);
}

function buildEventLogMessage(config: EventLogMessageConfig): StageImpl {
  const options = { dropInvalidLabels: config.drop_invalid_labels, overwriteExisting: config.overwrite_existing };
  return {
    kind: 'map',
    process: eventMessageStep(config.source, (message, extracted) => parseEventLogMessage(message, extracted, options)),
  };
}
