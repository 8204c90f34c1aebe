/**
 * JSON text as the reference's Go encoders write it: compact, HTML-escaped strings, Go's float64
 * number format. `stage.pack` builds its line from `goJsonQuote`; `stage.json` stores objects and
 * arrays as `marshalForJsonStage` text.
 *
 * Both stages encode with json-iterator's default config, whose string escaping predates Go 1.22:
 * `\b` and `\f` come out as `\u0008` and `\u000c`. Go's own encoding/json (the templates' JSON
 * functions) now writes `\b`/`\f`; `goJsonQuote` writes either.
 */
import { toWellFormed } from '../regex/well-formed.js';
import { compareUtf8 } from './gostring.js';

/** A value Go's JSON encoding cannot represent (NaN, ±Inf, a function…). */
export class GoJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GoJsonError';
  }
}

const HEX = '0123456789abcdef';

/** Which Go encoder's string escaping to follow; they differ only in `\b` and `\f`. */
export type JsonEncoder = 'json-iterator' | 'encoding/json';

/**
 * A JSON string literal as the reference writes it: `"` and `\` escaped, `\n \r \t` short (and
 * `\b \f` for encoding/json), every other control character as `\u00XX`, U+2028/U+2029
 * escaped, lone surrogates (the JS form of invalid UTF-8) as `\ufffd`; with `escapeHTML`, also
 * `< > &` as `\u003c \u003e \u0026`. Everything else, including non-ASCII text, is written as is.
 *
 * @example goJsonQuote('<a href="x">') === '"\\u003ca href=\\"x\\"\\u003e"'
 */
export function goJsonQuote(s: string, escapeHTML = true, encoder: JsonEncoder = 'json-iterator'): string {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    let escaped: string | undefined;
    if (code < 0x20) {
      escaped = controlEscape(code, encoder);
    } else if (code === 0x22) {
      escaped = '\\"';
    } else if (code === 0x5c) {
      escaped = '\\\\';
    } else if (escapeHTML && (code === 0x3c || code === 0x3e || code === 0x26)) {
      escaped = `\\u00${HEX[code >> 4]}${HEX[code & 0xf]}`;
    } else if (code === 0x2028 || code === 0x2029) {
      // Raw U+2028/2029 break JavaScript string literals, so Go always escapes them.
      escaped = code === 0x2028 ? '\\u2028' : '\\u2029';
    } else if (code >= 0xd800 && code <= 0xdfff) {
      const pairs = code <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1));
      if (pairs) {
        i++;
        continue;
      }
      escaped = '\\ufffd';
    }
    if (escaped !== undefined) {
      out += s.slice(runStart, i) + escaped;
      runStart = i + 1;
    }
  }
  return out + s.slice(runStart) + '"';
}

function controlEscape(code: number, encoder: JsonEncoder): string {
  switch (code) {
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x08:
      if (encoder === 'encoding/json') return '\\b';
      break;
    case 0x0c:
      if (encoder === 'encoding/json') return '\\f';
      break;
  }
  return `\\u00${HEX[code >> 4]}${HEX[code & 0xf]}`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * A float64 as Go's JSON encoders write it: shortest round-trip digits, positional for
 * 1e-6 ≤ |x| < 1e21 (and 0), otherwise exponent form with a two-digit negative exponent
 * shortened (`1e-7`, `1.5e+21`, `1e-100`).
 *
 * @throws GoJsonError for NaN and ±Inf (`json: unsupported value: NaN`)
 */
export function goJsonNumber(n: number): string {
  if (!Number.isFinite(n)) {
    throw new GoJsonError(`json: unsupported value: ${Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf'}`);
  }
  const abs = Math.abs(n);
  if (abs === 0) return Object.is(n, -0) ? '-0' : '0';
  if (abs >= 1e-6 && abs < 1e21) {
    // In this range JS prints the same shortest digits positionally.
    return String(n);
  }
  // JS writes `1e-7` / `1e+21`; Go's `e` format writes at least two exponent digits and the
  // JSON encoder then trims a leading zero only from negative exponents.
  const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
  const expSign = exponent[0]!;
  const expDigits = exponent.slice(1);
  const padded = expSign === '+' && expDigits.length < 2 ? '0' + expDigits : expDigits;
  return `${mantissa}e${expSign}${padded}`;
}

/**
 * Compact JSON text for a JS value the way Go's encoder writes the equivalent Go value:
 * strings per `goJsonQuote`, numbers per `goJsonNumber`, bigints in decimal, null/undefined as
 * `null`, arrays in order, objects (and Maps with string keys) with keys sorted bytewise by
 * their UTF-8 encoding, as Go sorts map keys.
 *
 * @throws GoJsonError for values Go cannot encode (NaN, ±Inf, functions, symbols)
 * @example goJsonMarshal({ b: 1, a: [true, null, 'x<'] }) === '{"a":[true,null,"x\\u003c"],"b":1}'
 */
export function goJsonMarshal(value: unknown, escapeHTML = true): string {
  switch (typeof value) {
    case 'string':
      return goJsonQuote(value, escapeHTML);
    case 'number':
      return goJsonNumber(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'null';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map((v) => goJsonMarshal(v, escapeHTML)).join(',')}]`;
      const entries = value instanceof Map ? [...value.entries()].map(([k, v]) => [String(k), v] as const) : Object.entries(value);
      entries.sort(([a], [b]) => compareUtf8(a, b));
      return `{${entries.map(([k, v]) => `${goJsonQuote(k, escapeHTML)}:${goJsonMarshal(v, escapeHTML)}`).join(',')}}`;
    }
    default:
      throw new GoJsonError(`json: unsupported type: ${typeof value}`);
  }
}

/**
 * The text `stage.json` stores for an object or array result: compact, HTML-escaped. The
 * reference leaves the key order of multi-key objects unspecified (Go map order); sorted keys
 * are one of its possible outputs and keep ours deterministic.
 */
export function marshalForJsonStage(value: unknown): string {
  return goJsonMarshal(value, true);
}

/**
 * JSON.parse as Go's decoders (encoding/json and json-iterator) read the text: a lone surrogate,
 * escaped (`"\ud800"`) or raw (the JS form of invalid UTF-8), becomes U+FFFD in every string and
 * key. Throws JSON.parse's SyntaxError. The texts that can hold one are found by two native scans,
 * so the usual line costs no walk over its values.
 */
export function parseGoJson(text: string): unknown {
  const doc: unknown = JSON.parse(text);
  return mayHoldLoneSurrogate(text) ? wellFormedValue(doc) : doc;
}

/** What `tryParseGoJson` gives for a text that is not well-formed JSON. */
export const MALFORMED_JSON: unique symbol = Symbol('malformed JSON');

/**
 * `parseGoJson`, or MALFORMED_JSON for a text that is not well-formed JSON. A line that is not
 * JSON is data, not a bug, and mixed logs hold many: JSON.parse's SyntaxError is built here
 * without the stack it would otherwise capture, which cost ten times the parse of a valid line.
 */
export function tryParseGoJson(text: string): unknown {
  const stackDepth = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return parseGoJson(text);
  } catch {
    return MALFORMED_JSON;
  } finally {
    Error.stackTraceLimit = stackDepth;
  }
}

/** The code of the first character after JSON white space (space, tab, LF, CR), or -1. */
export function firstJsonChar(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  }
  return -1;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

function mayHoldLoneSurrogate(text: string): boolean {
  return (text.indexOf('\\u') !== -1 && SURROGATE_ESCAPE.test(text)) || toWellFormed(text) !== text;
}

function wellFormedValue(value: unknown): unknown {
  if (typeof value === 'string') return toWellFormed(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormedValue(value[i]);
    return value;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  if (keys.every((key) => toWellFormed(key) === key)) {
    for (const key of keys) object[key] = wellFormedValue(object[key]);
    return object;
  }
  // A key changes: rebuilt in order, a later key that becomes the same as an earlier one winning.
  const rebuilt: Record<string, unknown> = {};
  for (const key of keys)
    Object.defineProperty(rebuilt, toWellFormed(key), {
      value: wellFormedValue(object[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return rebuilt;
}
