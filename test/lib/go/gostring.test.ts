import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GoStringError, canBackquote, decodeUtf8LikeGo, isGoPrintable, quoteGoString, unquoteGoString } from '../../../lib/go/gostring.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 200);

function unquoteError(literal: string): { message: string; offset: number } {
  try {
    unquoteGoString(literal);
  } catch (err) {
    expect(err).toBeInstanceOf(GoStringError);
    return { message: (err as GoStringError).message, offset: (err as GoStringError).offset };
  }
  throw new Error(`expected ${literal} to be rejected`);
}

describe('unquoteGoString', () => {
  it('returns the text between double quotes when there is nothing to unescape', () => {
    expect(unquoteGoString('"hello, world"')).toBe('hello, world');
    expect(unquoteGoString('""')).toBe('');
    expect(unquoteGoString('"héllo 😀"')).toBe('héllo 😀');
  });

  it('decodes every single-character escape', () => {
    expect(unquoteGoString('"\\a\\b\\f\\n\\r\\t\\v\\\\\\""')).toBe('\x07\x08\x0c\n\r\t\x0b\\"');
  });

  it('decodes octal escapes up to \\377', () => {
    expect(unquoteGoString('"\\101\\060"')).toBe('A0');
    expect(unquoteGoString('"\\000"')).toBe('\0');
  });

  it('decodes hex escapes as bytes that combine into UTF-8 characters', () => {
    expect(unquoteGoString('"\\x41"')).toBe('A');
    expect(unquoteGoString('"\\xc3\\xa9"')).toBe('é');
    expect(unquoteGoString('"\\xf0\\x9f\\x98\\x80"')).toBe('😀');
    expect(unquoteGoString('"\\303\\251"')).toBe('é');
  });

  it('turns each byte that is not valid UTF-8 into U+FFFD on its own, as Go does', () => {
    expect(unquoteGoString('"\\xff"')).toBe('\ufffd');
    expect(unquoteGoString('"\\377"')).toBe('\ufffd');
    expect(unquoteGoString('"\\xe2\\x82"')).toBe('\ufffd\ufffd');
    expect(unquoteGoString('"a\\xc3b"')).toBe('a\ufffdb');
    // A lead byte cannot be completed by a literal character or another escape kind.
    expect(unquoteGoString('"\\xc3é"')).toBe('\ufffdé');
    expect(unquoteGoString('"\\xc3\\u00a9"')).toBe('\ufffd©');
    // Encoded surrogates and overlong forms are invalid too.
    expect(unquoteGoString('"\\xed\\xa0\\x80"')).toBe('\ufffd\ufffd\ufffd');
    expect(unquoteGoString('"\\xc0\\xaf"')).toBe('\ufffd\ufffd');
  });

  it('decodes \\u and \\U escapes as characters', () => {
    expect(unquoteGoString('"\\u00e9\\u4e16"')).toBe('é世');
    expect(unquoteGoString('"\\U0001F600"')).toBe('😀');
    expect(unquoteGoString('"\\U0010ffff"')).toBe('\u{10ffff}');
  });

  it('keeps raw strings as written, across lines, dropping carriage returns', () => {
    expect(unquoteGoString('`a\\nb`')).toBe('a\\nb');
    expect(unquoteGoString('`line 1\nline 2`')).toBe('line 1\nline 2');
    expect(unquoteGoString('`a\r\nb\r`')).toBe('a\nb');
    expect(unquoteGoString('`"quoted"`')).toBe('"quoted"');
  });

  it('rejects escapes Go does not know, with the offset of the backslash', () => {
    expect(unquoteError('"ab\\qc"')).toEqual({ message: 'unknown escape sequence "\\q"', offset: 3 });
    expect(unquoteError('"\\\'"')).toEqual({ message: 'unknown escape sequence "\\\'"', offset: 1 });
    expect(unquoteError('"\\8"')).toEqual({ message: 'unknown escape sequence "\\8"', offset: 1 });
  });

  it('rejects escapes with too few or wrong digits', () => {
    expect(unquoteError('"\\x4g"')).toEqual({ message: 'invalid escape sequence "\\x4g": expected 2 hexadecimal digits', offset: 1 });
    expect(unquoteError('"\\x4"')).toEqual({ message: 'invalid escape sequence "\\x4": expected 2 hexadecimal digits', offset: 1 });
    expect(unquoteError('"\\u12"')).toEqual({ message: 'invalid escape sequence "\\u12": expected 4 hexadecimal digits', offset: 1 });
    expect(unquoteError('"\\U1234567"')).toEqual({
      message: 'invalid escape sequence "\\U1234567": expected 8 hexadecimal digits',
      offset: 1,
    });
    expect(unquoteError('"\\12"')).toEqual({ message: 'invalid escape sequence "\\12": expected 3 octal digits', offset: 1 });
    expect(unquoteError('"\\128"')).toEqual({ message: 'invalid escape sequence "\\128": expected 3 octal digits', offset: 1 });
  });

  it('rejects octal escapes above \\377 and escapes of surrogates or beyond U+10FFFF', () => {
    expect(unquoteError('"\\400"')).toEqual({ message: 'octal escape sequence "\\400" is out of range (maximum "\\377")', offset: 1 });
    expect(unquoteError('"x\\ud800"')).toEqual({ message: 'escape sequence "\\ud800" is not a valid Unicode code point', offset: 2 });
    expect(unquoteError('"\\U00110000"')).toEqual({
      message: 'escape sequence "\\U00110000" is not a valid Unicode code point',
      offset: 1,
    });
  });

  it('rejects unterminated literals, raw newlines and stray quotes', () => {
    expect(unquoteError('"abc')).toEqual({ message: 'unterminated string literal', offset: 0 });
    expect(unquoteError('"abc\\"')).toEqual({ message: 'unterminated string literal', offset: 0 });
    expect(unquoteError('`abc')).toEqual({ message: 'unterminated raw string literal', offset: 0 });
    expect(unquoteError('"')).toEqual({ message: 'unterminated string literal', offset: 0 });
    expect(unquoteError('"a\nb"')).toEqual({ message: 'newline in string literal', offset: 2 });
    expect(unquoteError('"a"b"')).toEqual({ message: 'unescaped double quote in string literal', offset: 2 });
    expect(unquoteError('"\\n"b"')).toEqual({ message: 'unescaped double quote in string literal', offset: 3 });
    expect(unquoteError('`a`b`')).toEqual({ message: 'raw string literal cannot contain a backquote', offset: 2 });
  });

  it('rejects anything that does not start with a double quote or a backquote', () => {
    expect(unquoteError("'a'")).toEqual({ message: 'string literal must start with a double quote or a backquote', offset: 0 });
    expect(unquoteError('abc')).toEqual({ message: 'string literal must start with a double quote or a backquote', offset: 0 });
    expect(unquoteError('')).toEqual({ message: 'string literal must start with a double quote or a backquote', offset: 0 });
  });
});

describe('quoteGoString', () => {
  it('writes printable text as it is', () => {
    expect(quoteGoString('hello')).toBe('"hello"');
    expect(quoteGoString("it's é 世 😀")).toBe('"it\'s é 世 😀"');
    expect(quoteGoString('')).toBe('""');
  });

  it('escapes quotes, backslashes and control characters the way strconv.Quote does', () => {
    expect(quoteGoString('"\\')).toBe('"\\"\\\\"');
    expect(quoteGoString('\x07\b\f\n\r\t\v')).toBe('"\\a\\b\\f\\n\\r\\t\\v"');
    expect(quoteGoString('\0\x1b\x7f')).toBe('"\\x00\\x1b\\x7f"');
  });

  it('escapes non-printable characters with \\u or \\U in lower-case hex', () => {
    expect(quoteGoString('\u0085\u00a0\u00ad')).toBe('"\\u0085\\u00a0\\u00ad"');
    expect(quoteGoString('\u2028\ufeff\u200b')).toBe('"\\u2028\\ufeff\\u200b"');
    expect(quoteGoString('\u{e0001}\u{10ffff}')).toBe('"\\U000e0001\\U0010ffff"');
  });

  it('writes a lone surrogate as U+FFFD, the character it becomes in UTF-8', () => {
    expect(quoteGoString('a\ud800b')).toBe('"a\ufffdb"');
  });

  it('round-trips through unquoteGoString', () => {
    const anyCharacter = fc
      .integer({ min: 0, max: 0x10ffff })
      .filter((c) => c < 0xd800 || c >= 0xe000)
      .map((c) => String.fromCodePoint(c));
    const special = fc.constantFrom('"', '\\', '\n', '\r', '\t', '\0', '\x7f', '\u00a0', '\u2028', '😀');
    const text = fc.string({ unit: fc.oneof(special, anyCharacter, fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 })) });
    fc.assert(
      fc.property(text, (s) => {
        expect(unquoteGoString(quoteGoString(s))).toBe(s);
      }),
      { numRuns },
    );
  });
});

describe('helpers', () => {
  it('isGoPrintable follows unicode.IsPrint', () => {
    expect([0x20, 0x41, 0x7e, 0xa1, 0xe9, 0x4e16, 0x1f600].every(isGoPrintable)).toBe(true);
    expect([0x09, 0x7f, 0xa0, 0xad, 0x2028, 0x3000, 0xfeff, 0xd800].some(isGoPrintable)).toBe(false);
  });

  it('canBackquote follows strconv.CanBackquote', () => {
    expect(canBackquote('a\tb "c" \\d')).toBe(true);
    expect(canBackquote('a`b')).toBe(false);
    expect(canBackquote('a\nb')).toBe(false);
    expect(canBackquote('\ufeff')).toBe(false);
  });

  it('decodeUtf8LikeGo decodes valid UTF-8 and replaces invalid bytes one by one', () => {
    expect(decodeUtf8LikeGo([0x61, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80])).toBe('aé😀');
    expect(decodeUtf8LikeGo([0xf0, 0x9f, 0x98])).toBe('\ufffd\ufffd\ufffd');
    expect(decodeUtf8LikeGo([0xf4, 0x90, 0x80, 0x80])).toBe('\ufffd\ufffd\ufffd\ufffd');
  });
});
