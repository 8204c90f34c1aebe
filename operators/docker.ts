/**
 * stage.docker — reads the Docker json-file log format `{"log":…,"stream":…,"time":…}`: the
 * line becomes `log`, the label `stream` is set, the timestamp comes from `time`, and the
 * extracted keys `output`, `stream`, `timestamp` hold the raw strings. Reference quirks kept:
 * keys match case-insensitively as Go's encoding/json matches struct fields (`"LOG"`, `"Stream"`,
 * even `ſtream` and `tıme`); a JSON null leaves a field as it was; a non-string `log`/`stream`/`time`,
 * a document that is not an object, or an empty `log` leaves the entry untouched; the `stream`
 * label is set even when the document has no stream (to the empty string); a `time` that is not
 * strict RFC 3339 keeps the previous timestamp while still being extracted; other fields are
 * discarded.
 */
import { firstJsonChar, MALFORMED_JSON, tryParseGoJson } from '../lib/go/gojson.js';
import { parseRFC3339Strict } from '../lib/time/rfc3339-strict.js';
import { defineStage, type StageImpl } from '../core/stage.js';
import { names } from '../core/stage-partitioning.js';

/** The stage has no arguments. */
export type DockerConfig = Readonly<Record<string, never>>;

export const docker = defineStage<DockerConfig>({
  name: 'docker',
  doc: 'Parses Docker json-file log lines: `log` becomes the line, `stream` a label, `time` the timestamp.',
  fields: {},
  validate: validateDocker,
  build: buildDocker,
  partitioning: () => ({ writes: names(['stream']), state: { by: 'none' } }),
});

/** Nothing to check: the stage takes no arguments. */
function validateDocker(_config: DockerConfig): void {}

/** The three fields of a Docker json-file record; missing fields are empty. */
export interface DockerRecord {
  readonly log: string;
  readonly stream: string;
  readonly time: string;
}

/**
 * Decodes one json-file record, or `undefined` when the line is not one (not a JSON object, or a
 * `log`/`stream`/`time` value that is neither a string nor null).
 */
export function decodeDockerRecord(line: string): DockerRecord | undefined {
  if (firstJsonChar(line) !== 0x7b /* { */) return undefined;
  const doc = tryParseGoJson(line);
  if (doc === MALFORMED_JSON || doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  const record = { log: '', stream: '', time: '' };
  for (const key in doc) {
    const field = dockerField(key);
    if (field === undefined) continue;
    const value = (doc as Record<string, unknown>)[key];
    if (value === null) continue;
    if (typeof value !== 'string') return undefined;
    record[field] = value;
  }
  return record;
}

/** Which field a JSON key fills under Go's case-insensitive struct-field matching. */
function dockerField(key: string): keyof DockerRecord | undefined {
  switch (key.length) {
    case 3:
      if (foldsTo(key, 'LOG')) return 'log';
      return undefined;
    case 4:
      if (foldsTo(key, 'TIME')) return 'time';
      return undefined;
    case 6:
      if (foldsTo(key, 'STREAM')) return 'stream';
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Whether `key` equals the upper-case ASCII `name` under Go's field-name folding (each character
 * mapped to the upper case of its simple fold). Three non-ASCII characters land on ASCII
 * letters: U+017F ſ → S, U+212A Kelvin sign → K and U+0131 dotless ı → I. Each is one UTF-16
 * unit, so comparing unit by unit still lines up.
 */
function foldsTo(key: string, name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    let c = key.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) c -= 0x20;
    else if (c === 0x017f) c = 0x53;
    else if (c === 0x212a) c = 0x4b;
    else if (c === 0x0131) c = 0x49;
    if (c !== name.charCodeAt(i)) return false;
  }
  return true;
}

function buildDocker(): StageImpl {
  return {
    kind: 'map',
    process: (entry) => {
      const record = decodeDockerRecord(entry.line);
      if (record === undefined || record.log === '') return entry;
      entry.extracted.output = record.log;
      entry.extracted.stream = record.stream;
      entry.extracted.timestamp = record.time;
      entry.line = record.log;
      entry.labels.stream = record.stream;
      const timestamp = parseRFC3339Strict(record.time);
      if (timestamp !== undefined) entry.timestamp = timestamp;
      return entry;
    },
  };
}
