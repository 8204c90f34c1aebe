/**
 * stage.logfmt — parses the line (or an extracted value) as logfmt and stores mapped keys, and
 * keys matching `regex`, in the extracted map.
 *
 * Reference quirks kept (go-logfmt's decoder, see lib/logfmt):
 * - values are always strings (`duration=125` → `"125"`; the spec's "numbers keep their type"
 *   is not what the reference does); a bare `key`, `key=` and `key=""` all give `""`;
 * - every line of the input is a record; keys from all records are collected, later values win;
 * - the first syntax error stops decoding, and what was decoded before it stays extracted; a
 *   record of 64 KiB or more fails before anything of it is decoded;
 * - a mapped key that is absent is simply not created (no null, unlike stage.json);
 * - the mapping is inverted (logfmt key → extracted name), so two names mapped to the same key
 *   keep one of them — here the last written (the reference's choice is unspecified);
 * - a key can be stored twice: under its mapped name and, when `regex` matches it, its own;
 * - `source = ""` means the line (accepted, unlike stage.json); an absent or non-convertible
 *   source is a no-op.
 */
import { ConfigError, FieldError } from '../lib/config/errors.js';
import { decodeLogfmt } from '../lib/logfmt.js';
import { compileFieldRegex } from '../core/field-regex.js';
import { setOwn } from '../core/entry.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { PER_ENTRY } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { stringify } from '../lib/go/values.js';

export interface LogfmtConfig {
  /** Extracted name → logfmt key; `""` means the same name. */
  readonly mapping: Readonly<Record<string, string>>;
  /** RE2 pattern over logfmt key names; `""` means none. */
  readonly regex: string;
  /** Extracted name to parse; `""` means the line. */
  readonly source: string;
}

export const logfmt = defineStage<LogfmtConfig>({
  name: 'logfmt',
  doc: 'Parses the line or an extracted value as logfmt and extracts the mapped keys.',
  example: `stage.logfmt {
  mapping = { level = "", duration = "took" }
}`,
  fields: {
    mapping: { kind: t.map(t.string), default: {}, doc: 'Extracted name → logfmt key. An empty key means the same name.' },
    regex: { kind: t.string, default: '', doc: 'Logfmt keys whose names match (unanchored RE2) are extracted under their own names.' },
    source: { kind: t.string, default: '', doc: 'Extracted name to parse. Empty means the line.' },
  },
  validate: validateLogfmt,
  build: buildLogfmt,
  partitioning: () => PER_ENTRY,
});

function validateLogfmt(config: LogfmtConfig): void {
  if (Object.keys(config.mapping).length === 0 && config.regex === '') {
    throw new ConfigError('logfmt mapping or regex is required');
  }
  for (const [name, key] of Object.entries(config.mapping)) {
    if (typeof key !== 'string') throw new FieldError('mapping', `value of ${JSON.stringify(name)} must be a string`);
  }
  if (config.regex !== '') compileFieldRegex('regex', config.regex);
}

function buildLogfmt(config: LogfmtConfig, ctx: BuildContext): StageImpl {
  const nameByKey = new Map<string, string>();
  for (const [name, key] of Object.entries(config.mapping)) nameByKey.set(key || name, name);
  const keyRegex = config.regex === '' ? undefined : compileFieldRegex('regex', config.regex);
  const { source } = config;

  return {
    kind: 'map',
    process: (entry) => {
      const { extracted } = entry;
      let input = entry.line;
      if (source !== '') {
        if (!Object.hasOwn(extracted, source)) return entry;
        const text = stringify(extracted[source]);
        if (text === undefined) return entry;
        input = text;
      }
      const { pairs, error } = decodeLogfmt(input);
      for (const [key, value] of pairs) {
        const text = value ?? '';
        const name = nameByKey.get(key);
        if (name !== undefined) setOwn(extracted, name, text);
        if (keyRegex?.test(key)) setOwn(extracted, key, text);
      }
      if (error) ctx.debug('logfmt: decoding stopped early', { error: error.message });
      return entry;
    },
  };
}
