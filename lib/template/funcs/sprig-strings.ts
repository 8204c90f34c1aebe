/**
 * sprig v3.3.0 string functions, with the byte-oriented behaviour of the Go originals kept
 * (`substr`, `trunc`, `abbrev` and `wrap` count bytes; `initials` and `nospace` walk bytes and
 * re-encode each byte as a rune, mangling non-ASCII text exactly as the reference does).
 */
import { randomInt } from 'node:crypto';
import { currentMeter } from '../budget.js';
import { GoError } from '../errors.js';
import { defineFunc, type FuncMap } from '../func.js';
import { Sprintf } from '../gofmt.js';
import { type GoInt, T_ANY, T_INT, T_STRING, utf8Bytes } from '../values.js';
import { budgetedRepeat, budgetedReplace, checkReplacedSize } from './budgeted.js';
import { strval } from './convert.js';
import {
  ByteString,
  goTitle,
  goToLower,
  goToUpper,
  goTrim,
  goTrimSpace,
  isGoLetter,
  isGoLower,
  isGoNumber,
  isGoPunct,
  isGoSpace,
  isGoTitle,
  isGoUpper,
  lowerRune,
  runes,
  titleRune,
  upperRune,
} from './gostrings.js';

const S = T_STRING;
const I = T_INT;

const num = (v: GoInt): number => Number(v.value);

/** goutils.AbbreviateFull (byte offsets). */
function abbreviateFull(str: string, offset: number, maxWidth: number): string {
  if (str === '') return '';
  if (maxWidth < 4) throw new GoError('stringutils illegal argument: Minimum abbreviation width is 4');
  const s = new ByteString(str);
  if (s.length <= maxWidth) return str;
  if (offset > s.length) offset = s.length;
  if (s.length - offset < maxWidth - 3) offset = s.length - (maxWidth - 3);
  const marker = '...';
  if (offset <= 4) return s.slice(0, maxWidth - 3) + marker;
  if (maxWidth < 7) throw new GoError('stringutils illegal argument: Minimum abbreviation width with offset is 7');
  if (offset + maxWidth - 3 < s.length) {
    let rest: string;
    try {
      rest = abbreviateFull(s.slice(offset), 0, maxWidth - 3);
    } catch {
      rest = '';
    }
    return marker + rest;
  }
  return marker + s.slice(s.length - (maxWidth - 3));
}

function abbrev(width: GoInt, s: string): string {
  if (num(width) < 4) return s;
  try {
    return abbreviateFull(s, 0, num(width));
  } catch {
    return '';
  }
}

function abbrevboth(left: GoInt, right: GoInt, s: string): string {
  const l = num(left);
  const r = num(right);
  if (r < 4 || (l > 0 && r < 7)) return s;
  try {
    return abbreviateFull(s, l, r);
  } catch {
    return '';
  }
}

/** Go's `string(rune(b))` for each byte of a string: Latin-1 reinterpretation. */
function byteRunes(bytes: Uint8Array, keep: (b: number) => boolean): string {
  let out = '';
  for (const b of bytes) if (keep(b)) out += String.fromCharCode(b);
  return out;
}

/** goutils.Initials: the first byte of every whitespace-separated word. */
function initials(s: string): string {
  if (s === '') return s;
  const bytes = utf8Bytes(s);
  let out = '';
  let lastWasGap = true;
  for (const b of bytes) {
    if (isGoSpace(b)) {
      lastWasGap = true;
    } else if (lastWasGap) {
      out += String.fromCharCode(b);
      lastWasGap = false;
    }
  }
  return out;
}

/** goutils.DeleteWhiteSpace. */
function nospace(s: string): string {
  if (s === '') return s;
  const bytes = utf8Bytes(s);
  const kept = byteRunes(bytes, (b) => !isGoSpace(b));
  return kept.length === bytes.length ? s : kept;
}

/** goutils.SwapCase (word based: a lower-case letter after white space becomes title case). */
function swapcase(s: string): string {
  if (s === '') return s;
  let whitespace = true;
  let out = '';
  for (const c of runes(s)) {
    if (isGoUpper(c) || isGoTitle(c)) {
      out += lowerRune(c);
      whitespace = false;
    } else if (isGoLower(c)) {
      out += whitespace ? titleRune(c) : upperRune(c);
      whitespace = false;
    } else {
      whitespace = isGoSpace(c.codePointAt(0)!);
      out += c;
    }
  }
  return out;
}

/** goutils.Uncapitalize with white space delimiters. */
function untitle(s: string): string {
  if (s === '') return s;
  let next = true;
  let out = '';
  for (const c of runes(s)) {
    if (isGoSpace(c.codePointAt(0)!)) {
      next = true;
      out += c;
    } else if (next) {
      out += lowerRune(c);
      next = false;
    } else {
      out += c;
    }
  }
  return out;
}

/** goutils.WrapCustom (byte offsets). */
export function wrapCustom(str: string, wrapLength: number, newLine: string, wrapLongWords: boolean): string {
  if (str === '') return '';
  if (newLine === '') newLine = '\n';
  if (wrapLength < 1) wrapLength = 1;
  const s = new ByteString(str);
  const inputLength = s.length;
  let offset = 0;
  let out = '';
  while (inputLength - offset > wrapLength) {
    if (s.byteAt(offset) === 0x20) {
      offset++;
      continue;
    }
    const end = Math.min(wrapLength + offset + 1, inputLength);
    let spaceToWrapAt = s.lastIndexOf(' ', offset, end) + offset;
    if (spaceToWrapAt >= offset) {
      out += s.slice(offset, spaceToWrapAt) + newLine;
      offset = spaceToWrapAt + 1;
    } else if (wrapLongWords) {
      out += s.slice(offset, wrapLength + offset) + newLine;
      offset += wrapLength;
    } else {
      const from = wrapLength + offset;
      const index = s.indexOf(' ', from);
      spaceToWrapAt = index === -1 ? -1 : index + from;
      if (spaceToWrapAt >= 0) {
        out += s.slice(offset, spaceToWrapAt) + newLine;
        offset = spaceToWrapAt + 1;
      } else {
        out += s.slice(offset);
        offset = inputLength;
      }
    }
  }
  return out + s.slice(offset);
}

/** sprig's substr: `s[start:end]`, `s[:end]` for a negative start, `s[start:]` past the end. */
function substr(start: GoInt, end: GoInt, s: string): string {
  const b = new ByteString(s);
  const st = num(start);
  const en = num(end);
  if (st < 0) return b.slice(0, en);
  if (en < 0 || en > b.length) return b.slice(st);
  return b.slice(st, en);
}

function trunc(c: GoInt, s: string): string {
  const b = new ByteString(s);
  const n = num(c);
  if (n < 0 && b.length + n > 0) return b.slice(b.length + n);
  if (n >= 0 && b.length > n) return b.slice(0, n);
  return s;
}

function quote(...items: unknown[]): string {
  return items
    .filter((s) => s !== null && s !== undefined)
    .map((s) => Sprintf('%q', strval(s)))
    .join(' ');
}

function squote(...items: unknown[]): string {
  return items
    .filter((s) => s !== null && s !== undefined)
    .map((s) => Sprintf("'%v'", s))
    .join(' ');
}

function cat(...items: unknown[]): string {
  const values = items.filter((s) => s !== null && s !== undefined);
  return Sprintf(goTrimSpace('%v '.repeat(values.length)), ...values);
}

function indent(spaces: GoInt, v: string): string {
  const pad = budgetedRepeat(' ', num(spaces));
  checkReplacedSize(pad + v, '\n', '\n' + pad, -1);
  return pad + v.split('\n').join('\n' + pad);
}

// Character sets of goutils' CryptoRandom with start ' ' and end 'z' + 1.
const ALPHA = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ASCII_PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

function randomFrom(alphabet: string, count: GoInt): string {
  const n = num(count);
  if (n <= 0) return '';
  currentMeter().checkBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** xstrings.Shuffle: a random permutation of the runes. */
function shuffle(s: string): string {
  if (s === '') return s;
  const r = runes(s);
  for (let i = r.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [r[i], r[j]] = [r[j]!, r[i]!];
  }
  return r.join('');
}

// ---------------------------------------------------------------------------------------------
// xstrings v1.5.0 case conversions

function isConnector(c: string): boolean {
  return c === '-' || c === '_' || isGoSpace(c.codePointAt(0)!);
}

/** xstrings' isAlphabet: a letter that is not a CJK ideograph. */
function isAlphabet(c: string): boolean {
  if (!isGoLetter(c)) return false;
  const code = c.codePointAt(0)!;
  if (code < 0x3400) return true;
  if (code >= 0x4e00 && code <= 0x9fcc) return false;
  if (code >= 0x3400 && code <= 0x4d85) return false;
  if (code >= 0x20000 && code <= 0x2b81d) return false;
  return true;
}

/** xstrings.ToPascalCase (sprig's camelcase). */
export function toPascalCase(str: string): string {
  if (str === '') return '';
  const rs = runes(str);
  let out = '';
  let i = 0;
  let r0 = '';
  let isFirstRuneUpper = false;
  for (; i < rs.length; i++) {
    r0 = rs[i]!;
    if (!isConnector(r0)) {
      isFirstRuneUpper = isGoUpper(r0);
      r0 = upperRune(r0);
      i++;
      break;
    }
    out += r0;
  }
  // xstrings writes the last rune here even when it was a connector already written.
  if (i >= rs.length) return out + r0;
  for (; i < rs.length; i++) {
    const r1 = r0;
    r0 = rs[i]!;
    if (isConnector(r0) && isConnector(r1)) {
      out += r1;
      continue;
    }
    if (isConnector(r1)) {
      isFirstRuneUpper = isGoUpper(r0);
      r0 = upperRune(r0);
    } else {
      if (isFirstRuneUpper) {
        if (isGoUpper(r0)) r0 = lowerRune(r0);
        else isFirstRuneUpper = false;
      }
      out += r1;
    }
  }
  return out + r0;
}

const enum Word {
  Invalid,
  Number,
  UpperCase,
  Alphabet,
  Connector,
  Punct,
  Other,
}

function nextWord(rs: readonly string[], from: number): { wt: Word; end: number } {
  if (from >= rs.length) return { wt: Word.Invalid, end: from };
  let i = from;
  const r = rs[i]!;
  i++;
  if (isConnector(r)) {
    while (i < rs.length && isConnector(rs[i]!)) i++;
    return { wt: Word.Connector, end: i };
  }
  if (isGoPunct(r)) {
    while (i < rs.length && isGoPunct(rs[i]!)) i++;
    return { wt: Word.Punct, end: i };
  }
  if (isGoUpper(r)) {
    if (i >= rs.length) return { wt: Word.UpperCase, end: i };
    const next = rs[i]!;
    if (isGoUpper(next)) {
      i++;
      while (i < rs.length && isGoUpper(rs[i]!)) i++;
      // "HTTPStatus" splits into "HTTP" and "Status".
      if (i < rs.length && isAlphabet(rs[i]!)) i--;
    } else if (isAlphabet(next)) {
      i++;
      while (i < rs.length && isAlphabet(rs[i]!) && !isGoUpper(rs[i]!)) i++;
    }
    return { wt: Word.UpperCase, end: i };
  }
  if (isAlphabet(r)) {
    while (i < rs.length && isAlphabet(rs[i]!) && !isGoUpper(rs[i]!)) i++;
    return { wt: Word.Alphabet, end: i };
  }
  if (isGoNumber(r)) {
    while (i < rs.length && isGoNumber(rs[i]!)) i++;
    return { wt: Word.Number, end: i };
  }
  while (i < rs.length) {
    const c = rs[i]!;
    if (isConnector(c) || isAlphabet(c) || isGoNumber(c) || isGoPunct(c)) break;
    i++;
  }
  return { wt: Word.Other, end: i };
}

/** xstrings' camelCaseToLowerCase (ToSnakeCase / ToKebabCase). */
export function camelCaseToLowerCase(str: string, connector: string): string {
  if (str === '') return '';
  const rs = runes(str);
  let out = '';
  const lower = (wt: Word, word: readonly string[]): void => {
    if (wt !== Word.UpperCase && wt !== Word.Connector) {
      out += word.join('');
      return;
    }
    for (const c of word) out += isConnector(c) ? connector : isGoUpper(c) ? lowerRune(c) : c;
  };
  let pos = 0;
  let { wt, end } = nextWord(rs, pos);
  let word = rs.slice(pos, end);
  pos = end;
  const advance = (): Word => {
    const n = nextWord(rs, pos);
    word = rs.slice(pos, n.end);
    pos = n.end;
    return n.wt;
  };
  while (pos < rs.length) {
    if (wt !== Word.Connector) lower(wt, word);
    const prev = wt;
    const last = word;
    wt = advance();
    switch (prev) {
      case Word.Number:
        while (wt === Word.Alphabet || wt === Word.Number) {
          lower(wt, word);
          wt = advance();
        }
        if (wt !== Word.Invalid && wt !== Word.Punct && wt !== Word.Connector) out += connector;
        break;
      case Word.Connector:
        lower(prev, last);
        break;
      case Word.Punct:
        break;
      default: {
        if (wt !== Word.Number) {
          if (wt !== Word.Connector && wt !== Word.Punct) out += connector;
          break;
        }
        if (pos >= rs.length) break;
        const numberWord = word;
        wt = advance();
        if (wt !== Word.Alphabet) {
          lower(Word.Number, numberWord);
          if (wt !== Word.Connector && wt !== Word.Punct) out += connector;
          break;
        }
        out += connector;
        lower(Word.Number, numberWord);
        while (wt === Word.Alphabet || wt === Word.Number) {
          lower(wt, word);
          wt = advance();
        }
        if (wt !== Word.Invalid && wt !== Word.Connector && wt !== Word.Punct) out += connector;
      }
    }
  }
  lower(wt, word);
  return out;
}

/** sprig's string functions. */
export const sprigStringFuncs: FuncMap = {
  hello: defineFunc([], () => 'Hello!'),
  abbrev: defineFunc([I, S], abbrev),
  abbrevboth: defineFunc([I, I, S], abbrevboth),
  trunc: defineFunc([I, S], trunc),
  trim: defineFunc([S], goTrimSpace),
  upper: defineFunc([S], goToUpper),
  lower: defineFunc([S], goToLower),
  title: defineFunc([S], goTitle),
  untitle: defineFunc([S], untitle),
  substr: defineFunc([I, I, S], substr),
  repeat: defineFunc([I, S], (count: GoInt, str: string) => budgetedRepeat(str, num(count))),
  trimall: defineFunc([S, S], (a: string, b: string) => goTrim(b, a)),
  trimAll: defineFunc([S, S], (a: string, b: string) => goTrim(b, a)),
  trimSuffix: defineFunc([S, S], (a: string, b: string) => (a !== '' && b.endsWith(a) ? b.slice(0, b.length - a.length) : b)),
  trimPrefix: defineFunc([S, S], (a: string, b: string) => (b.startsWith(a) ? b.slice(a.length) : b)),
  nospace: defineFunc([S], nospace),
  initials: defineFunc([S], initials),
  randAlphaNum: defineFunc([I], (n: GoInt) => randomFrom(ALPHA + DIGITS, n)),
  randAlpha: defineFunc([I], (n: GoInt) => randomFrom(ALPHA, n)),
  randAscii: defineFunc([I], (n: GoInt) => randomFrom(ASCII_PRINTABLE, n)),
  randNumeric: defineFunc([I], (n: GoInt) => randomFrom(DIGITS, n)),
  swapcase: defineFunc([S], swapcase),
  shuffle: defineFunc([S], shuffle),
  snakecase: defineFunc([S], (s: string) => camelCaseToLowerCase(s, '_')),
  camelcase: defineFunc([S], toPascalCase),
  kebabcase: defineFunc([S], (s: string) => camelCaseToLowerCase(s, '-')),
  wrap: defineFunc([I, S], (l: GoInt, s: string) => wrapCustom(s, num(l), '', false)),
  wrapWith: defineFunc([I, S, S], (l: GoInt, sep: string, str: string) => wrapCustom(str, num(l), sep, true)),
  contains: defineFunc([S, S], (sub: string, str: string) => str.includes(sub)),
  hasPrefix: defineFunc([S, S], (sub: string, str: string) => str.startsWith(sub)),
  hasSuffix: defineFunc([S, S], (sub: string, str: string) => str.endsWith(sub)),
  quote: defineFunc([T_ANY], quote, true),
  squote: defineFunc([T_ANY], squote, true),
  cat: defineFunc([T_ANY], cat, true),
  indent: defineFunc([I, S], indent),
  nindent: defineFunc([I, S], (spaces: GoInt, v: string) => '\n' + indent(spaces, v)),
  replace: defineFunc([S, S, S], (old: string, nw: string, src: string) => budgetedReplace(src, old, nw, -1)),
  plural: defineFunc([S, S, I], (one: string, many: string, count: GoInt) => (count.value === 1n ? one : many)),
  toString: defineFunc([T_ANY], strval),
};
