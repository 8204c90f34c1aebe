/**
 * Go's `encoding/json` for the template value model (sprig's toJson family and fromJson):
 * sorted map keys, HTML escaping unless disabled, Go's float format, `\b`/`\f` short escapes,
 * time.Time as RFC 3339, Stringer-style JSON for semver versions.
 */
import { goJsonNumber, goJsonQuote } from '../../go/gojson.js';
import { formatFloat } from '../../go/strconv.js';
import { GoError } from '../errors.js';
import { GoInt, GoObject, isGoMap, newMap, sortedKeys, typeName } from '../values.js';

/** A value with its own JSON form (Go's json.Marshaler). */
export interface JsonMarshaler {
  toGoJson(): string;
}

function isMarshaler(v: unknown): v is JsonMarshaler {
  return typeof (v as Partial<JsonMarshaler>).toGoJson === 'function';
}

/** A JSON string literal as Go's encoding/json writes it. */
export function jsonQuote(s: string, escapeHTML: boolean): string {
  return goJsonQuote(s, escapeHTML, 'encoding/json');
}

function jsonFloat(f: number): string {
  if (!Number.isFinite(f)) throw new GoError(`json: unsupported value: ${formatFloat(f, 'g', -1)}`);
  return goJsonNumber(f);
}

/**
 * Go's json.Marshal (indent = '') or json.MarshalIndent(v, '', indent).
 *
 * @throws GoError with Go's message for unsupported values (NaN, functions)
 */
export function marshalJson(value: unknown, escapeHTML: boolean, indent = ''): string {
  return encode(value, escapeHTML, indent, '');
}

function encode(value: unknown, escapeHTML: boolean, indent: string, prefix: string): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return jsonQuote(value, escapeHTML);
    case 'number':
      return jsonFloat(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'function':
      throw new GoError(`json: unsupported type: ${typeName(value)}`);
  }
  if (value instanceof GoInt) return value.value.toString();
  if (isMarshaler(value)) return value.toGoJson();
  const inner = prefix + indent;
  const nl = indent === '' ? '' : '\n';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const items = value.map((v) => (nl ? nl + inner : '') + encode(v, escapeHTML, indent, inner));
    return '[' + items.join(',') + (nl ? nl + prefix : '') + ']';
  }
  let entries: [string, unknown][];
  if (value instanceof GoObject) entries = value.fields().map(([k, v]) => [k, v]);
  else if (isGoMap(value)) entries = sortedKeys(value).map((k) => [k, value[k]]);
  else throw new GoError(`json: unsupported type: ${typeName(value)}`);
  if (entries.length === 0) return '{}';
  const sep = indent === '' ? ':' : ': ';
  const items = entries.map(([k, v]) => (nl ? nl + inner : '') + jsonQuote(k, escapeHTML) + sep + encode(v, escapeHTML, indent, inner));
  return '{' + items.join(',') + (nl ? nl + prefix : '') + '}';
}

/**
 * Go's json.Unmarshal into an `interface{}`: objects become `map[string]interface {}`, arrays
 * `[]interface {}`, numbers float64.
 *
 * @throws GoError with a Go-style syntax error message
 */
export function unmarshalJson(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new GoError(jsonSyntaxError(text));
  }
  return toGoValue(parsed, text);
}

function toGoValue(v: unknown, text: string): unknown {
  if (typeof v === 'number' && !Number.isFinite(v)) {
    const literal = /-?\d+(\.\d+)?[eE][+-]?\d+/.exec(text)?.[0] ?? String(v);
    throw new GoError(`json: cannot unmarshal number ${literal} into Go value of type float64`);
  }
  if (Array.isArray(v)) return v.map((x) => toGoValue(x, text));
  if (v !== null && typeof v === 'object') {
    const map = newMap();
    for (const [k, x] of Object.entries(v)) map[k] = toGoValue(x, text);
    return map;
  }
  return v;
}

/** Go's quoteChar for scanner errors. */
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  const q = JSON.stringify(c);
  return "'" + q.slice(1, -1) + "'";
}

class JsonSyntaxError extends Error {}

/** The message of Go's json scanner for the first syntax error in a text. */
function jsonSyntaxError(text: string): string {
  let i = 0;
  const fail = (context: string): never => {
    if (i >= text.length) throw new JsonSyntaxError('unexpected end of JSON input');
    throw new JsonSyntaxError(`invalid character ${quoteChar(String.fromCodePoint(text.codePointAt(i)!))} ${context}`);
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string): void => {
    for (let k = 0; k < word.length; k++, i++) {
      if (text[i] !== word[k]) fail(`in literal ${word} (expecting ${quoteChar(word[k]!)})`);
    }
  };
  const digits = (context: string): void => {
    if (!/[0-9]/.test(text[i] ?? '')) fail(context);
    while (/[0-9]/.test(text[i] ?? '')) i++;
  };
  const number = (): void => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits('in numeric literal');
    if (text[i] === '.') {
      i++;
      digits('after decimal point in numeric literal');
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits('in exponent of numeric literal');
    }
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= text.length) fail('');
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        const e = text[i];
        if (e === 'u') {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail('in \\u hexadecimal character escape');
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail('in string escape code');
      } else if (c.charCodeAt(0) < 0x20) {
        fail('in string literal');
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('looking for beginning of object key string');
        string();
        ws();
        if (text[i] !== ':') fail('after object key');
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('after object key:value pair');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('after array element');
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || /[0-9]/.test(c ?? '')) return number();
    fail('looking for beginning of value');
  };
  try {
    value();
    ws();
    if (i < text.length) fail('after top-level value');
  } catch (err) {
    if (err instanceof JsonSyntaxError) return err.message;
    throw err;
  }
  return 'unexpected end of JSON input';
}
