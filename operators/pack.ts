/**
 * stage.pack — replaces the line with a JSON object holding the listed extracted values and the
 * original line under `_entry`, and removes the packed labels.
 *
 * Reference quirks kept:
 * - only the extracted map is read: labels are packed because they were seeded into it, and a
 *   label added later without touching the map (static_labels) is neither packed nor removed;
 * - values that do not convert to text (null, lists, objects) are skipped, and such a name stays
 *   a label; every packed name that is also a label leaves the label set;
 * - packed keys are sorted by their bytes and come first, `_entry` always last, no spaces; every
 *   value is a JSON string written as Go's encoder writes it, HTML-escaped (`<` → `\u003c`) with
 *   `\b`/`\f` as `\u0008`/`\u000c`; a listed name `_entry` is written twice, as the reference does;
 * - `ingest_timestamp` (default true) sets the timestamp to the time the stage runs.
 */
import { FieldError } from '../lib/config/errors.js';
import { goJsonQuote } from '../lib/go/gojson.js';
import { compareUtf8 } from '../lib/go/gostring.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { names } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { stringify } from '../lib/go/values.js';

export interface PackConfig {
  /** Names of extracted values (labels are seeded there) to pack. May be empty. */
  readonly labels: readonly string[];
  readonly ingest_timestamp: boolean;
}

/** The key the original line is stored under. */
export const PACKED_ENTRY_KEY = '_entry';

export const pack = defineStage<PackConfig>({
  name: 'pack',
  doc: 'Wraps the line in a JSON object with the listed labels and extracted values; packed labels leave the label set.',
  example: `stage.pack {
  labels = ["pod", "container"]
}`,
  fields: {
    labels: { kind: t.list(t.string), required: true, doc: 'Names of extracted values and labels to pack.' },
    ingest_timestamp: { kind: t.bool, default: true, doc: 'Replaces the timestamp with the time the stage runs.' },
  },
  validate: validatePack,
  build: buildPack,
  partitioning: (config) => ({ writes: names(config.labels), state: { by: 'none' } }),
});

function validatePack(config: PackConfig): void {
  if (!Array.isArray(config.labels)) throw new FieldError('labels', 'labels must be a list of strings');
  for (const name of config.labels) {
    if (typeof name !== 'string') throw new FieldError('labels', 'labels must be a list of strings');
  }
}

/**
 * The packed line: `{"<k>":"<v>",…,"_entry":"<line>"}` with keys in byte order.
 *
 * @example packLine([['pod', 'p1'], ['app', 'x']], 'hi') === '{"app":"x","pod":"p1","_entry":"hi"}'
 */
export function packLine(values: ReadonlyArray<readonly [string, string]>, line: string): string {
  const sorted = values.length > 1 ? [...values].sort(([a], [b]) => compareUtf8(a, b)) : values;
  let out = '{';
  for (const [name, value] of sorted) out += `${quote(name)}:${quote(value)},`;
  return `${out}"${PACKED_ENTRY_KEY}":${quote(line)}}`;
}

// Characters goJsonQuote would rewrite (surrogates included, paired or not): most log text has
// none, and then the quoted form is the text itself.
const NEEDS_ESCAPE = /["\\<>&\u0000-\u001f\u2028\u2029\ud800-\udfff]/;

function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? goJsonQuote(text) : `"${text}"`;
}

function buildPack(config: PackConfig, ctx: BuildContext): StageImpl {
  // A name listed twice is packed once, as the reference collects them in a map.
  const names = [...new Set(config.labels)];
  const ingestTimestamp = config.ingest_timestamp;
  return {
    kind: 'map',
    process: (entry) => {
      const { extracted, labels } = entry;
      const packed: Array<[string, string]> = [];
      for (const name of names) {
        if (!Object.hasOwn(extracted, name)) continue;
        const value = stringify(extracted[name]);
        if (value === undefined) continue;
        packed.push([name, value]);
      }
      entry.line = packLine(packed, entry.line);
      for (const [name] of packed) delete labels[name];
      if (ingestTimestamp) entry.timestamp = ctx.clock.nowNs();
      return entry;
    },
  };
}
