/**
 * Go strings in JavaScript: literals (`strconv.Unquote`, `strconv.Quote` and its variants),
 * `unicode.IsPrint`, and Go's byte order of strings.
 *
 * Go strings are byte strings; JavaScript strings are UTF-16. Escapes that produce single bytes
 * (`\xhh` and octal `\ooo`) are therefore collected and decoded as UTF-8 the way Go decodes a
 * string into runes: bytes that form valid UTF-8 together become that character (`"\xc3\xa9"` is
 * `é`), and every byte that does not belong to a valid sequence becomes U+FFFD on its own.
 */
import { DataError } from '../data-error.js';

/** A malformed Go string literal. `offset` is the index within the literal where the problem is. */
export class GoStringError extends DataError {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'GoStringError';
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  '\\': 0x5c,
  '"': 0x22,
};

/**
 * The value of a Go string literal, quotes included: `"..."` with Go escapes, or `` `...` `` raw
 * (carriage returns inside a raw literal are dropped, as Go does). Throws GoStringError.
 *
 * @example unquoteGoString('"a\\tb"') // 'a\tb'
 */
export function unquoteGoString(literal: string): string {
  const quote = literal[0];
  if (quote !== '"' && quote !== '`') {
    throw new GoStringError('string literal must start with a double quote or a backquote', 0);
  }
  if (literal.length < 2 || literal[literal.length - 1] !== quote) {
    throw new GoStringError(quote === '`' ? 'unterminated raw string literal' : 'unterminated string literal', 0);
  }
  const body = literal.slice(1, -1);
  if (quote === '`') {
    const inner = body.indexOf('`');
    if (inner >= 0) throw new GoStringError('raw string literal cannot contain a backquote', inner + 1);
    return body.replace(/\r/g, '');
  }
  if (!body.includes('\\')) {
    const at = firstOf(body, '"', '\n');
    if (at >= 0) throw plainCharError(body[at]!, at + 1);
    return body;
  }
  return unescapeDoubleQuoted(body);
}

function firstOf(text: string, a: string, b: string): number {
  const i = text.indexOf(a);
  const j = text.indexOf(b);
  if (i < 0) return j;
  if (j < 0) return i;
  return Math.min(i, j);
}

function plainCharError(ch: string, offset: number): GoStringError {
  return ch === '\n'
    ? new GoStringError('newline in string literal', offset)
    : new GoStringError('unescaped double quote in string literal', offset);
}

function unescapeDoubleQuoted(body: string): string {
  let out = '';
  // Bytes from \x and octal escapes wait here until a non-byte piece ends the run.
  let pendingBytes: number[] = [];
  const flush = (): void => {
    if (pendingBytes.length > 0) {
      out += decodeUtf8LikeGo(pendingBytes);
      pendingBytes = [];
    }
  };

  let i = 0;
  while (i < body.length) {
    const ch = body[i]!;
    if (ch !== '\\') {
      if (ch === '"' || ch === '\n') throw plainCharError(ch, i + 1);
      flush();
      out += ch;
      i++;
      continue;
    }
    const escapeStart = i;
    const kind = body[i + 1];
    if (kind === undefined) throw new GoStringError('unterminated string literal', 0);
    const simple = SIMPLE_ESCAPES[kind];
    if (simple !== undefined) {
      flush();
      out += String.fromCharCode(simple);
      i += 2;
      continue;
    }
    switch (kind) {
      case 'x': {
        pendingBytes.push(readDigits(body, i + 2, 2, 16, escapeStart));
        i += 4;
        break;
      }
      case 'u':
      case 'U': {
        const count = kind === 'u' ? 4 : 8;
        const code = readDigits(body, i + 2, count, 16, escapeStart);
        if (code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) {
          throw new GoStringError(
            `escape sequence "${body.slice(escapeStart, i + 2 + count)}" is not a valid Unicode code point`,
            escapeStart + 1,
          );
        }
        flush();
        out += String.fromCodePoint(code);
        i += 2 + count;
        break;
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        const value = readDigits(body, i + 1, 3, 8, escapeStart);
        if (value > 0xff) {
          throw new GoStringError(
            `octal escape sequence "${body.slice(escapeStart, i + 4)}" is out of range (maximum "\\377")`,
            escapeStart + 1,
          );
        }
        pendingBytes.push(value);
        i += 4;
        break;
      }
      default:
        throw new GoStringError(`unknown escape sequence "${escapeText(body, escapeStart)}"`, escapeStart + 1);
    }
  }
  flush();
  return out;
}

function escapeText(body: string, at: number): string {
  const next = body.codePointAt(at + 1);
  return next === undefined ? '\\' : '\\' + String.fromCodePoint(next);
}

function readDigits(body: string, from: number, count: number, base: 8 | 16, escapeStart: number): number {
  let value = 0;
  for (let k = 0; k < count; k++) {
    const ch = body[from + k];
    const digit = ch === undefined ? NaN : parseInt(ch, base);
    if (Number.isNaN(digit)) {
      const written = body.slice(escapeStart, from + count);
      const what = base === 16 ? `${count} hexadecimal digits` : '3 octal digits';
      throw new GoStringError(`invalid escape sequence "${written}": expected ${what}`, escapeStart + 1);
    }
    value = value * base + digit;
  }
  return value;
}

/**
 * Decodes bytes as Go decodes a string into runes: each byte outside a valid UTF-8 sequence
 * (including surrogate encodings and overlong forms) becomes U+FFFD on its own, or what
 * `invalidByte` makes of it.
 */
export function decodeUtf8LikeGo(bytes: ArrayLike<number>, invalidByte: (b: number) => string = () => '\ufffd'): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b0 = bytes[i]!;
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      i++;
      continue;
    }
    const width = sequenceWidth(bytes, i);
    if (width === 0) {
      out += invalidByte(b0);
      i++;
      continue;
    }
    let code = width === 2 ? b0 & 0x1f : width === 3 ? b0 & 0x0f : b0 & 0x07;
    for (let k = 1; k < width; k++) code = (code << 6) | (bytes[i + k]! & 0x3f);
    out += String.fromCodePoint(code);
    i += width;
  }
  return out;
}

/** Width of the valid UTF-8 sequence starting at `i`, or 0 when it is not valid. */
function sequenceWidth(bytes: ArrayLike<number>, i: number): number {
  const b0 = bytes[i]!;
  let width: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) width = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    width = 3;
    if (b0 === 0xe0) lo = 0xa0;
    if (b0 === 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    width = 4;
    if (b0 === 0xf0) lo = 0x90;
    if (b0 === 0xf4) hi = 0x8f;
  } else return 0;
  if (i + width > bytes.length) return 0;
  const b1 = bytes[i + 1]!;
  if (b1 < lo || b1 > hi) return 0;
  for (let k = 2; k < width; k++) {
    const b = bytes[i + k]!;
    if (b < 0x80 || b > 0xbf) return 0;
  }
  return width;
}

const GRAPHIC = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isGoPrintable(codePoint: number): boolean {
  if (codePoint <= 0xff) {
    return (codePoint >= 0x20 && codePoint <= 0x7e) || (codePoint >= 0xa1 && codePoint !== 0xad);
  }
  if (codePoint >= 0xd800 && codePoint < 0xe000) return false;
  return GRAPHIC.test(String.fromCodePoint(codePoint));
}

const QUOTE_ESCAPES: Readonly<Record<number, string>> = {
  7: '\\a',
  8: '\\b',
  12: '\\f',
  10: '\\n',
  13: '\\r',
  9: '\\t',
  11: '\\v',
};

/** One character of a Go quoted literal delimited by `quote` (`"` or `'`), as strconv writes it. */
function escapeRune(code: number, quote: number, asciiOnly: boolean): string {
  if (code === quote || code === 0x5c) return '\\' + String.fromCodePoint(code);
  if (asciiOnly) {
    if (code < 0x80 && isGoPrintable(code)) return String.fromCharCode(code);
  } else if (isGoPrintable(code)) {
    return String.fromCodePoint(code);
  }
  const short = QUOTE_ESCAPES[code];
  if (short !== undefined) return short;
  if (code < 0x20 || code === 0x7f) return '\\x' + hex(code, 2);
  if (code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) code = 0xfffd;
  if (code < 0x10000) return '\\u' + hex(code, 4);
  return '\\U' + hex(code, 8);
}

/**
 * A double-quoted Go literal for `s`, as `strconv.Quote` writes it (`strconv.QuoteToASCII` with
 * `asciiOnly`): printable characters as they are, the usual short escapes, `\xhh` for other
 * control bytes, `\uhhhh`/`\Uhhhhhhhh` for other non-printable (or, with `asciiOnly`, non-ASCII)
 * characters. A lone surrogate (which no Go string can hold) is written as U+FFFD, the character
 * it becomes when encoded as UTF-8.
 *
 * @example quoteGoString('a"b\n') // '"a\\"b\\n"'
 * @example quoteGoString('é😀', true) // '"\\u00e9\\U0001f600"'
 */
export function quoteGoString(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) {
    let code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code < 0xe000) code = 0xfffd;
    // Most text is printable ASCII, which stands for itself.
    if (code < 0x80 && code >= 0x20 && code !== 0x22 && code !== 0x5c && code !== 0x7f) {
      out += ch;
      continue;
    }
    out += escapeRune(code, 0x22, asciiOnly);
  }
  return out + '"';
}

/** Go's `strconv.QuoteRune` (or `QuoteRuneToASCII`); invalid code points become U+FFFD. */
export function quoteRune(code: number, asciiOnly = false): string {
  if (code < 0 || code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) code = 0xfffd;
  return "'" + escapeRune(code, 0x27, asciiOnly) + "'";
}

/**
 * Whether Go's `strconv.CanBackquote` holds: `s` can be written as a raw literal unchanged (no
 * backquote, no control characters other than tab, no U+FEFF).
 */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code === 0x60 || code === 0xfeff || code === 0x7f) return false;
    if (code < 0x20 && code !== 0x09) return false;
    if (code >= 0xd800 && code < 0xe000) return false;
  }
  return true;
}

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

/** Orders strings as Go orders their UTF-8 bytes (= code point order, unlike UTF-16 order). */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every BMP character in code point order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
