/**
 * Host event log messages (the text of a Windows event, e.g. "An account was successfully logged
 * on.\r\n\r\nSubject:\r\n\tSecurity ID:\t\tS-1-1-1…") turned into extracted values. Shared by
 * `stage.hostevent` (sections, titles, continuation lines) and its deprecated predecessor
 * `stage.eventlogmessage` (one `key: value` per CRLF line); both store fields with the same
 * `_extracted` collision rule and both drop the whole entry when the source cannot be read as text.
 */
import { isLegacyLabelName, isValidLabelName, isValidUtf8String, stringify } from './go/values.js';

/** An entry's extracted map: the only part of an entry these parsers touch. */
type Extracted = Record<string, unknown>;

/** How invalid keys and already-present keys are handled. */
export interface EventFieldOptions {
  /** Skip fields whose key is not a valid label name instead of sanitizing the key. */
  readonly dropInvalidLabels: boolean;
  /** Overwrite an extracted value of the same name instead of storing under `<key>_extracted`. */
  readonly overwriteExisting: boolean;
}

/**
 * The per-entry step of both event stages around a message parser: a missing source leaves the
 * entry unchanged; a source that is not convertible to text (null, list, map) drops the entry,
 * without counting it anywhere, as the reference does. Numbers and booleans are read as text.
 */
export function eventMessageStep<E extends { readonly extracted: Extracted }>(
  source: string,
  parse: (message: string, extracted: Extracted) => void,
): (entry: E) => E | null {
  return (entry) => {
    const { extracted } = entry;
    if (!Object.hasOwn(extracted, source)) return entry;
    const message = stringify(extracted[source]);
    if (message === undefined) return null;
    parse(message, extracted);
    return entry;
  };
}

/**
 * The `stage.eventlogmessage` parser: every CRLF-separated line holding a `:` gives a field; the
 * key is the text before the first `:` exactly as written (legacy label-name rules, sanitized when
 * invalid), the value the rest trimmed of Unicode white space. A lone LF stays inside a value.
 *
 * @example parseEventLogMessage('Key 1: a\r\nB: b: c', ex, opts) sets ex.Key_1 = 'a', ex.B = 'b: c'
 */
export function parseEventLogMessage(message: string, extracted: Extracted, options: EventFieldOptions): void {
  for (const line of message.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    let key = line.slice(0, colon);
    if (!isLegacyLabelName(key)) {
      if (options.dropInvalidLabels) continue;
      key = sanitizeLegacyLabelName(key);
    }
    storeField(extracted, key, goTrimSpace(line.slice(colon + 1)), options);
  }
}

/**
 * The `stage.hostevent` parser. Sections are separated by a blank CRLF line; the first section is
 * the `Description`. In later sections each `key: value` line is a field; a first line with
 * nothing after its `:` is a title that prefixes the section's keys (`Subject_SecurityID`); lines
 * without `:` that follow a field are appended to its value after a comma. Keys lose tabs, CR,
 * LF and ASCII spaces and follow the UTF-8 label-name rule; values lose tabs, CR and LF and are
 * trimmed.
 */
export function parseHostEvent(message: string, extracted: Extracted, options: EventFieldOptions): void {
  const sections = message.split('\r\n\r\n');
  storeHostEventField(extracted, 'Description', sections[0]!, options);
  for (let s = 1; s < sections.length; s++) {
    const lines = sections[s]!.split('\r\n');
    let prefix = '';
    for (let j = 0; j < lines.length; j++) {
      const line = lines[j]!;
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      let key = line.slice(0, colon);
      let value = line.slice(colon + 1);
      // Only an exactly empty value makes a title: `Subject: ` (trailing space) is a field with value "".
      if (value === '') {
        if (j === 0) prefix = key;
        continue;
      }
      while (j + 1 < lines.length && lines[j + 1] !== '' && !lines[j + 1]!.includes(':')) {
        value += ',' + lines[j + 1];
        j++;
      }
      if (prefix !== '') key = `${prefix}_${key}`;
      storeHostEventField(extracted, key, value, options);
    }
  }
}

// Keys keep every other white-space character (NBSP, vertical tab…); only these four go.
const HOST_EVENT_KEY_JUNK = /[\t\r\n ]/g;
const HOST_EVENT_VALUE_JUNK = /[\t\r\n]/g;

function storeHostEventField(extracted: Extracted, rawKey: string, rawValue: string, options: EventFieldOptions): void {
  let key = rawKey.replace(HOST_EVENT_KEY_JUNK, '');
  if (!isValidLabelName(key)) {
    if (options.dropInvalidLabels) return;
    key = sanitizeLegacyLabelName(key);
  }
  storeField(extracted, key, goTrimSpace(rawValue.replace(HOST_EVENT_VALUE_JUNK, '')), options);
}

/**
 * Stores one field. A key already present gets the `_extracted` suffix once (a third field of the
 * same name overwrites `<key>_extracted`); values that are not valid UTF-8 are skipped.
 */
function storeField(extracted: Extracted, key: string, value: string, options: EventFieldOptions): void {
  const name = !options.overwriteExisting && Object.hasOwn(extracted, key) ? `${key}_extracted` : key;
  if (!isValidUtf8String(value)) return;
  // Keys come from log text: `__proto__` must become an own key, not the object's prototype.
  if (name === '__proto__') Object.defineProperty(extracted, name, { value, enumerable: true, writable: true, configurable: true });
  else extracted[name] = value;
}

/**
 * The reference's legacy label-name sanitizer: an empty name becomes `_`; every character that is
 * not an ASCII letter or `_` (or a digit after the first position) becomes one `_`.
 *
 * @example sanitizeLegacyLabelName('Ünïcode') === '_n_code'; sanitizeLegacyLabelName('0Key2') === '_Key2'
 */
export function sanitizeLegacyLabelName(name: string): string {
  if (name === '') return '_';
  let out = '';
  let first = true;
  for (const ch of name) {
    const ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch === '_' || (!first && ch >= '0' && ch <= '9');
    out += ok ? ch : '_';
    first = false;
  }
  return out;
}

// Go's unicode.IsSpace set. Unlike String.prototype.trim it includes U+0085 and excludes U+FEFF.
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const GO_TRIM = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, 'g');

/** Go's `strings.TrimSpace`: trims Unicode white space as Go defines it. */
export function goTrimSpace(s: string): string {
  return s.replace(GO_TRIM, '');
}
