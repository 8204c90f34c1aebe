/**
 * stage.hostevent — extracts fields from a host event message (the reference's
 * `stage.windowsevent`): the first CRLF-blank-line section becomes `Description`, later sections
 * give `key: value` fields, prefixed by a section title (`Subject_SecurityID`), with continuation
 * lines appended after a comma. Reference quirks kept: keys lose tabs, CR, LF and spaces and follow
 * the UTF-8 label-name rule, so `PackageName(NTLMonly)` stays as it is; values have tabs, CR and
 * LF deleted (not replaced); a key already extracted is stored as `<key>_extracted` unless
 * `overwrite_existing`; a source value that is not convertible to text drops the whole entry,
 * without a metric.
 */
import { eventMessageStep, parseHostEvent } from '../lib/hostevent.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { checkFieldLabelName } from '../core/field-label-name.js';

export interface HostEventConfig {
  readonly source: string;
  readonly drop_invalid_labels: boolean;
  readonly overwrite_existing: boolean;
}

export const hostEvent = defineStage<HostEventConfig>({
  name: 'hostevent',
  doc: 'Extracts the description and the key: value fields of a host event log message.',
  fields: {
    source: { kind: t.string, default: 'message', doc: 'Extracted name holding the message.' },
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
  validate: validateHostEvent,
  build: buildHostEvent,
  partitioning: () => PER_ENTRY,
});

function validateHostEvent(config: HostEventConfig): void {
  checkFieldLabelName('source', config.source);
}

function buildHostEvent(config: HostEventConfig): StageImpl {
  const options = { dropInvalidLabels: config.drop_invalid_labels, overwriteExisting: config.overwrite_existing };
  return {
    kind: 'map',
    process: eventMessageStep(config.source, (message, extracted) => parseHostEvent(message, extracted, options)),
  };
}
