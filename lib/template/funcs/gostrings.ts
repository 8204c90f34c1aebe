/**
 * Go's `strings` and `unicode` behaviour on JavaScript strings: Go's notion of white space
 * (no U+FEFF, unlike `String.prototype.trim`), simple per-rune case mapping (`ß` stays `ß`,
 * `Σ` never becomes final sigma), rune-wise splitting, and byte-offset slicing with Go's
 * panic texts.
 */
import { GoError } from '../errors.js';
import { isAscii, utf8Bytes } from '../values.js';
import { sliceBoundsError } from './convert.js';

const utf8Decoder = new TextDecoder();

/** Go's `unicode.IsSpace`. */
export function isGoSpace(code: number): boolean {
  switch (code) {
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x20:
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
  }
  return code >= 0x2000 && code <= 0x200a;
}

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;
const NUMBER = /^\p{N}$/u;
const UPPER = /^\p{Lu}$/u;
const LOWER = /^\p{Ll}$/u;
const TITLE = /^\p{Lt}$/u;
const PUNCT = /^\p{P}$/u;

export const isGoLetter = (c: string): boolean => LETTER.test(c);
export const isGoDigit = (c: string): boolean => DIGIT.test(c);
export const isGoNumber = (c: string): boolean => NUMBER.test(c);
export const isGoUpper = (c: string): boolean => UPPER.test(c);
export const isGoLower = (c: string): boolean => LOWER.test(c);
export const isGoTitle = (c: string): boolean => TITLE.test(c);
export const isGoPunct = (c: string): boolean => PUNCT.test(c);

/** Go's `unicode.ToUpper` of one rune (a simple mapping: one rune in, one rune out). */
export function upperRune(c: string): string {
  const u = c.toUpperCase();
  return [...u].length === 1 ? u : c;
}

/** Go's `unicode.ToLower` of one rune. */
export function lowerRune(c: string): string {
  if (c === '\u0130') return 'i';
  const l = c.toLowerCase();
  return [...l].length === 1 ? l : c;
}

const TITLE_CASE: Readonly<Record<string, string>> = {
  '\u01c4': '\u01c5',
  '\u01c5': '\u01c5',
  '\u01c6': '\u01c5',
  '\u01c7': '\u01c8',
  '\u01c8': '\u01c8',
  '\u01c9': '\u01c8',
  '\u01ca': '\u01cb',
  '\u01cb': '\u01cb',
  '\u01cc': '\u01cb',
  '\u01f1': '\u01f2',
  '\u01f2': '\u01f2',
  '\u01f3': '\u01f2',
};

/** Go's `unicode.ToTitle` of one rune (upper case except for the Latin digraphs). */
export function titleRune(c: string): string {
  return TITLE_CASE[c] ?? upperRune(c);
}

/** Go's `strings.ToUpper`. */
export function goToUpper(s: string): string {
  if (isAscii(s)) return s.toUpperCase();
  let out = '';
  for (const c of s) out += upperRune(c);
  return out;
}

/** Go's `strings.ToLower`. */
export function goToLower(s: string): string {
  if (isAscii(s)) return s.toLowerCase();
  let out = '';
  for (const c of s) out += lowerRune(c);
  return out;
}

/** Go's `strings.TrimSpace`. */
export function goTrimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

function runeSet(cutset: string): Set<number> {
  const set = new Set<number>();
  for (const c of cutset) set.add(normalizeRune(c.codePointAt(0)!));
  return set;
}

function normalizeRune(code: number): number {
  return code >= 0xd800 && code < 0xe000 ? 0xfffd : code;
}

function trimLeftIndex(s: string, set: Set<number>): number {
  let i = 0;
  while (i < s.length) {
    const code = s.codePointAt(i)!;
    if (!set.has(normalizeRune(code))) break;
    i += code > 0xffff ? 2 : 1;
  }
  return i;
}

function trimRightIndex(s: string, set: Set<number>, start: number): number {
  let end = s.length;
  while (end > start) {
    let code = s.charCodeAt(end - 1);
    let width = 1;
    if (code >= 0xdc00 && code <= 0xdfff && end - 2 >= start) {
      const hi = s.charCodeAt(end - 2);
      if (hi >= 0xd800 && hi <= 0xdbff) {
        code = s.codePointAt(end - 2)!;
        width = 2;
      }
    }
    if (!set.has(normalizeRune(code))) break;
    end -= width;
  }
  return end;
}

/** Go's `strings.Trim(s, cutset)`. */
export function goTrim(s: string, cutset: string): string {
  if (s === '' || cutset === '') return s;
  const set = runeSet(cutset);
  const start = trimLeftIndex(s, set);
  return s.slice(start, trimRightIndex(s, set, start));
}

/** Go's `strings.TrimLeft(s, cutset)`. */
export function goTrimLeft(s: string, cutset: string): string {
  if (s === '' || cutset === '') return s;
  return s.slice(trimLeftIndex(s, runeSet(cutset)));
}

/** Go's `strings.TrimRight(s, cutset)`. */
export function goTrimRight(s: string, cutset: string): string {
  if (s === '' || cutset === '') return s;
  return s.slice(0, trimRightIndex(s, runeSet(cutset), 0));
}

export function goTrimPrefix(s: string, prefix: string): string {
  return s.startsWith(prefix) ? s.slice(prefix.length) : s;
}

export function goTrimSuffix(s: string, suffix: string): string {
  return suffix !== '' && s.endsWith(suffix) ? s.slice(0, s.length - suffix.length) : s;
}

/** The runes of a string (lone surrogates become U+FFFD, as Go decodes invalid UTF-8). */
export function runes(s: string): string[] {
  const out: string[] = [];
  for (const c of s) {
    const code = c.codePointAt(0)!;
    out.push(code >= 0xd800 && code < 0xe000 ? '\ufffd' : c);
  }
  return out;
}

/** Go's `strings.Replace(s, old, new, n)`; an empty `old` matches at every rune boundary. */
export function goReplace(s: string, old: string, replacement: string, n: number): string {
  if (old === replacement || n === 0) return s;
  if (old === '') {
    const parts = runes(s);
    const limit = n < 0 ? parts.length + 1 : Math.min(n, parts.length + 1);
    let out = '';
    for (let i = 0; i < parts.length; i++) {
      out += i < limit ? replacement + parts[i] : parts[i];
    }
    if (limit > parts.length) out += replacement;
    return out;
  }
  if (n < 0) return s.split(old).join(replacement);
  let out = '';
  let start = 0;
  for (let i = 0; i < n; i++) {
    const j = s.indexOf(old, start);
    if (j < 0) break;
    out += s.slice(start, j) + replacement;
    start = j + old.length;
  }
  return out + s.slice(start);
}

/** Go's `strings.SplitN` (n < 0: all parts; n = 0: nil; an empty separator splits runes). */
export function goSplitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  if (sep === '') {
    const parts = runes(s);
    if (n < 0 || n >= parts.length) return parts;
    return [...parts.slice(0, n - 1), parts.slice(n - 1).join('')];
  }
  if (n < 0) return s.split(sep);
  const out: string[] = [];
  let start = 0;
  while (out.length < n - 1) {
    const j = s.indexOf(sep, start);
    if (j < 0) break;
    out.push(s.slice(start, j));
    start = j + sep.length;
  }
  out.push(s.slice(start));
  return out;
}

/** Go's `strings.Repeat`, including its panics. */
export function goRepeat(s: string, count: number): string {
  if (count < 0) throw new GoError('strings: negative Repeat count');
  if (s.length * count > 1 << 28) throw new GoError('strings: Repeat output length overflow');
  return s.repeat(count);
}

/** Go's `strings.Fields`: split around runs of white space. */
export function goFields(s: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const c of s) {
    if (isGoSpace(c.codePointAt(0)!)) {
      if (current !== '') out.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  if (current !== '') out.push(current);
  return out;
}

/** Go's deprecated `strings.Title`. */
export function goTitle(s: string): string {
  let prev = ' ';
  let out = '';
  for (const c of s) {
    out += isSeparator(prev) ? titleRune(c) : c;
    prev = c;
  }
  return out;
}

function isSeparator(c: string): boolean {
  const code = c.codePointAt(0)!;
  if (code <= 0x7f) {
    return !((code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f);
  }
  if (isGoLetter(c) || isGoDigit(c)) return false;
  return isGoSpace(code);
}

/** A Go string as bytes, for the sprig functions that index strings by byte. */
export class ByteString {
  private readonly bytes: Uint8Array | undefined;
  readonly length: number;

  constructor(readonly text: string) {
    this.bytes = isAscii(text) ? undefined : utf8Bytes(text);
    this.length = this.bytes ? this.bytes.length : text.length;
  }

  byteAt(i: number): number {
    return this.bytes ? this.bytes[i]! : this.text.charCodeAt(i);
  }

  /** `s[start:end]` with Go's bounds panics. */
  slice(start: number, end: number = this.length): string {
    if (end > this.length) throw sliceBoundsError(`[:${end}] with length ${this.length}`);
    if (start > end) throw sliceBoundsError(`[${start}:${end}]`);
    if (start < 0) throw sliceBoundsError(`[${start}:]`);
    return this.bytes ? utf8Decoder.decode(this.bytes.subarray(start, end)) : this.text.slice(start, end);
  }

  lastIndexOf(needle: string, start: number, end: number): number {
    if (!this.bytes) {
      const i = this.text.slice(start, end).lastIndexOf(needle);
      return i < 0 ? -1 : i;
    }
    const sub = this.bytes.subarray(start, end);
    const n = utf8Bytes(needle);
    outer: for (let i = sub.length - n.length; i >= 0; i--) {
      for (let k = 0; k < n.length; k++) if (sub[i + k] !== n[k]) continue outer;
      return i;
    }
    return -1;
  }

  indexOf(needle: string, start: number): number {
    if (!this.bytes) {
      const i = this.text.indexOf(needle, start);
      return i < 0 ? -1 : i - start;
    }
    const n = utf8Bytes(needle);
    outer: for (let i = start; i + n.length <= this.bytes.length; i++) {
      for (let k = 0; k < n.length; k++) if (this.bytes[i + k] !== n[k]) continue outer;
      return i - start;
    }
    return -1;
  }
}
