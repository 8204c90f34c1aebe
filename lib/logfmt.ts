/**
 * logfmt decoding and encoding with the exact rules of go-logfmt v0.6 (what `stage.logfmt`
 * runs): records are lines, keys are runs of characters above space except `=` and `"`,
 * quoted values use JSON escapes, and the first syntax error stops decoding while keeping the
 * pairs found before it.
 */
import { DataError } from './data-error.js';
import { isWellFormed } from './regex/well-formed.js';

/** Why decoding stopped early (or why a key cannot be encoded), with go-logfmt's message. */
export class LogfmtError extends DataError {
  constructor(
    message: string,
    /** For syntax errors: go-logfmt's short reason, 1-based record number and 1-based byte position. */
    readonly syntax?: { readonly reason: string; readonly line: number; readonly pos: number },
  ) {
    super(message);
    this.name = 'LogfmtError';
  }
}

/** A decoded pair; the value is `null` where go-logfmt yields no value (`k`, `k=`, `k=""`). */
export type LogfmtPair = [key: string, value: string | null];

/** Everything decoded from the input, and the error that stopped decoding, if any. */
export interface LogfmtDecodeResult {
  readonly pairs: LogfmtPair[];
  readonly error?: LogfmtError;
}

// bufio.Scanner's default maximum token size: a record this long (in bytes) cannot be read.
const MAX_RECORD_BYTES = 64 * 1024;

/**
 * Decodes every record (line) of the input in order. Pairs from all records are returned in
 * input order, duplicates included; decoding stops at the first error.
 *
 * @example decodeLogfmt('a=1 b="x y" c').pairs → [['a', '1'], ['b', 'x y'], ['c', null]]
 */
export function decodeLogfmt(input: string): LogfmtDecodeResult {
  const pairs: LogfmtPair[] = [];
  const records = splitRecords(input);
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.length >= MAX_RECORD_BYTES / 3 && utf8Length(record) >= MAX_RECORD_BYTES) {
      return { pairs, error: new LogfmtError('bufio.Scanner: token too long') };
    }
    const error = decodeRecord(record, i + 1, pairs);
    if (error) return { pairs, error };
  }
  return { pairs };
}

/** bufio.ScanLines: split on `\n`, drop one trailing `\r`, no empty record after a final `\n`. */
function splitRecords(input: string): string[] {
  if (input === '') return [];
  const lines = input.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

function decodeRecord(line: string, lineNumber: number, pairs: LogfmtPair[]): LogfmtError | undefined {
  const fail = (reason: string, index: number): LogfmtError => {
    const pos = utf8Length(line.slice(0, index)) + 1;
    return new LogfmtError(`logfmt syntax error at pos ${pos} on line ${lineNumber}: ${reason}`, {
      reason,
      line: lineNumber,
      pos,
    });
  };
  const unexpected = (index: number): LogfmtError => fail(`unexpected '${line[index]}'`, index);
  const end = line.length;
  let pos = 0;
  for (;;) {
    while (pos < end && line.charCodeAt(pos) <= 0x20) pos++;
    if (pos >= end) return undefined;

    const keyStart = pos;
    while (pos < end) {
      const c = line.charCodeAt(pos);
      if (c === 0x3d /* = */ || c === 0x22 /* " */ || c <= 0x20) break;
      pos++;
    }
    if (pos < end && line[pos] === '"') return unexpected(pos);
    if (pos < end && line[pos] === '=' && pos === keyStart) return unexpected(pos);
    const key = line.slice(keyStart, pos);
    if (hasInvalidUtf8(key)) return fail('invalid key', pos);
    if (pos >= end || line[pos] !== '=') {
      pairs.push([key, null]);
      continue;
    }

    pos++; // past '='
    if (pos >= end || line.charCodeAt(pos) <= 0x20) {
      pairs.push([key, null]);
      continue;
    }

    if (line[pos] !== '"') {
      const valueStart = pos;
      while (pos < end) {
        const c = line.charCodeAt(pos);
        if (c === 0x3d || c === 0x22) return unexpected(pos);
        if (c <= 0x20) break;
        pos++;
      }
      pairs.push([key, line.slice(valueStart, pos)]);
      continue;
    }

    const quoteStart = pos;
    let hasEscape = false;
    let closing = -1;
    for (let i = pos + 1; i < end; i++) {
      const c = line[i];
      if (c === '\\') {
        hasEscape = true;
        i++; // the escaped character never closes the value
      } else if (c === '"') {
        closing = i;
        break;
      }
    }
    if (closing < 0) return fail('unterminated quoted value', end);
    pos = closing + 1;
    if (hasEscape) {
      const value = unquoteJsonString(line.slice(quoteStart + 1, closing));
      if (value === undefined) return fail('invalid quoted value', pos);
      pairs.push([key, value]);
    } else {
      pairs.push([key, closing > quoteStart + 1 ? line.slice(quoteStart + 1, closing) : null]);
    }
  }
}

/**
 * JSON string unescaping as go-logfmt does it (a copy of Go's encoding/json unquote that also
 * accepts `\'`): unpaired `\uD8xx` escapes become U+FFFD; a raw control character or `"` is
 * an error. `undefined` = invalid.
 */
function unquoteJsonString(body: string): string | undefined {
  let out = '';
  for (let i = 0; i < body.length; ) {
    const c = body[i]!;
    const code = body.charCodeAt(i);
    if (c === '\\') {
      const next = body[i + 1];
      switch (next) {
        case '"':
        case '\\':
        case '/':
        case "'":
          out += next;
          i += 2;
          continue;
        case 'b':
          out += '\b';
          i += 2;
          continue;
        case 'f':
          out += '\f';
          i += 2;
          continue;
        case 'n':
          out += '\n';
          i += 2;
          continue;
        case 'r':
          out += '\r';
          i += 2;
          continue;
        case 't':
          out += '\t';
          i += 2;
          continue;
        case 'u': {
          const unit = hex4(body, i);
          if (unit === undefined) return undefined;
          i += 6;
          if (unit >= 0xd800 && unit <= 0xdfff) {
            const low = hex4(body, i);
            if (unit <= 0xdbff && low !== undefined && low >= 0xdc00 && low <= 0xdfff) {
              out += String.fromCharCode(unit, low);
              i += 6;
            } else {
              out += '\uFFFD';
            }
          } else {
            out += String.fromCharCode(unit);
          }
          continue;
        }
        default:
          return undefined;
      }
    }
    if (c === '"' || code < 0x20) return undefined;
    if (code >= 0xd800 && code <= 0xdfff) {
      // A lone surrogate stands for invalid UTF-8, which Go coerces to U+FFFD here.
      const paired = code <= 0xdbff && i + 1 < body.length && isLowSurrogate(body.charCodeAt(i + 1));
      out += paired ? body.slice(i, i + 2) : '\uFFFD';
      i += paired ? 2 : 1;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** The value of `\uXXXX` at `at`, or undefined when there is no such escape. */
function hex4(s: string, at: number): number | undefined {
  if (s[at] !== '\\' || s[at + 1] !== 'u') return undefined;
  const digits = s.slice(at + 2, at + 6);
  return /^[0-9a-fA-F]{4}$/.test(digits) ? parseInt(digits, 16) : undefined;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** A key holding U+FFFD (or a lone surrogate, the JS form of invalid UTF-8) is rejected by go-logfmt. */
function hasInvalidUtf8(s: string): boolean {
  return s.includes('\uFFFD') || !isWellFormed(s);
}

/** UTF-8 length of a string; lone surrogates count as the 3 bytes of U+FFFD. */
function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

const HEX = '0123456789abcdef';

/**
 * One logfmt record as go-logfmt's encoder writes it: `key=value` pairs joined by a space.
 * Keys lose every character that cannot appear in a key; a null value is written `null`; the
 * string `"null"` and values holding space, control characters, `=`, `"` or U+FFFD are quoted
 * with JSON-style escapes.
 *
 * @throws LogfmtError `invalid key` when nothing of a key is left
 * @example encodeLogfmt([['msg', 'hello world'], ['n', '1']]) === 'msg="hello world" n=1'
 */
export function encodeLogfmt(pairs: Iterable<readonly [string, string | null]>): string {
  const parts: string[] = [];
  for (const [rawKey, value] of pairs) {
    const key = [...rawKey].filter((ch) => !isKeyUnsafe(ch)).join('');
    if (key === '') throw new LogfmtError('invalid key');
    parts.push(`${key}=${encodeValue(value)}`);
  }
  return parts.join(' ');
}

function isKeyUnsafe(ch: string): boolean {
  return ch <= ' ' || ch === '=' || ch === '"' || ch === '\uFFFD' || isLoneSurrogate(ch);
}

function isLoneSurrogate(ch: string): boolean {
  const code = ch.charCodeAt(0);
  return ch.length === 1 && code >= 0xd800 && code <= 0xdfff;
}

function encodeValue(value: string | null): string {
  if (value === null) return 'null';
  if (value === 'null') return '"null"';
  if (![...value].some((ch) => isKeyUnsafe(ch))) return value;
  let out = '"';
  for (const ch of value) {
    const code = ch.charCodeAt(0);
    if (ch === '\\' || ch === '"') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20) out += `\\u00${HEX[code >> 4]}${HEX[code & 0xf]}`;
    else if (ch === '\uFFFD' || isLoneSurrogate(ch)) out += '\\ufffd';
    else out += ch;
  }
  return out + '"';
}
