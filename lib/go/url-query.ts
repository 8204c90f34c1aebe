/**
 * Query strings as Go's `net/url` reads and writes them (`ParseQuery`, `Values.Get`,
 * `QueryEscape`, `Values.Encode`), stray bytes of undecodable escapes included.
 */
import { decodeUtf8LikeGo } from './gostring.js';

const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/** Decodes one query component: `+` is a space; a malformed `%` escape makes it undefined. */
function unescapeQueryComponent(s: string): string | undefined {
  if (!s.includes('%')) return s.includes('+') ? s.replaceAll('+', ' ') : s;
  if (MALFORMED_ESCAPE.test(s)) return undefined;
  const spaced = s.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Escapes that do not form valid UTF-8: the reference keeps the raw bytes (a Go string holds
    // any bytes), so a label value with them fails the writer's UTF-8 check and other parameters
    // are forwarded with the same escapes. A JavaScript string cannot hold a stray byte: each
    // becomes a lone low surrogate U+DC80–U+DCFF (invalid UTF-8 to every check here, and written
    // back as the same `%XX` by escapeQueryComponent).
    const bytes: number[] = [];
    for (let i = 0; i < spaced.length; i++) {
      if (spaced[i] === '%') {
        bytes.push(parseInt(spaced.slice(i + 1, i + 3), 16));
        i += 2;
      } else {
        for (const b of Buffer.from(spaced[i]!, 'utf8')) bytes.push(b);
      }
    }
    return decodeUtf8LikeGo(bytes, strayByte);
  }
}

/** The first value of `key` in a raw query, read as `parseQuery` reads it (`''` when absent). */
export function firstQueryValue(rawQuery: string, key: string): string {
  for (const part of rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const k = unescapeQueryComponent(eq < 0 ? part : part.slice(0, eq));
    if (k !== key) continue;
    const value = unescapeQueryComponent(eq < 0 ? '' : part.slice(eq + 1));
    if (value !== undefined) return value;
  }
  return '';
}

/**
 * Parses a raw query into its values per key, in order. Pairs with a semicolon in the key or
 * a malformed escape are skipped, as the reference's parser skips them.
 */
export function parseQuery(rawQuery: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const key = unescapeQueryComponent(eq < 0 ? part : part.slice(0, eq));
    const value = unescapeQueryComponent(eq < 0 ? '' : part.slice(eq + 1));
    if (key === undefined || value === undefined) continue;
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
  return out;
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** A stray byte (0x80–0xFF) of an undecodable escape, kept as a lone low surrogate. */
function strayByte(b: number): string {
  return String.fromCharCode(0xdc00 + b);
}

/** Escapes a query component: unreserved characters stay, spaces become `+`, the rest `%XX`. */
export function escapeQueryComponent(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    if (UNRESERVED.test(ch)) out += ch;
    else if (ch === ' ') out += '+';
    else if (ch.length === 1 && code >= 0xdc80 && code <= 0xdcff) out += `%${(code - 0xdc00).toString(16).toUpperCase()}`;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** Encodes values per key as the reference does: keys sorted, each value in order. */
export function encodeQuery(values: ReadonlyMap<string, readonly string[]>): string {
  const keys = [...values.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  for (const key of keys) {
    for (const value of values.get(key)!) parts.push(`${escapeQueryComponent(key)}=${escapeQueryComponent(value)}`);
  }
  return parts.join('&');
}
