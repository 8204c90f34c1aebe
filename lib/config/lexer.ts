import type { Position } from './errors.js';
import { GoStringError, unquoteGoString } from '../go/gostring.js';
import type { Comment } from './ast.js';

/**
 * The scanner of the block configuration language. Like Go's, it inserts a terminator token at a
 * newline (or a comment running to the end of the line, or the end of the file) when the last
 * token was an identifier, a literal, or a closing `)`, `]` or `}`. Lexical errors do not stop
 * the scan: the bad text becomes an `illegal` token carrying its error, which the parser
 * reports where it meets it.
 */

export type Punctuation =
  | '||'
  | '&&'
  | '!'
  | '='
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '^'
  | '{'
  | '}'
  | '('
  | ')'
  | '['
  | ']'
  | ','
  | '.';

export type TokenKind = 'ident' | 'number' | 'float' | 'string' | 'bool' | 'null' | 'terminator' | 'eof' | 'illegal' | Punctuation;

export interface LexError {
  readonly message: string;
  readonly pos: Position;
}

export interface Token {
  readonly kind: TokenKind;
  /** The source text of the token; `"\n"` for a terminator and `""` at the end of the file. */
  readonly text: string;
  readonly pos: Position;
  /** Position just past the token. */
  readonly end: Position;
  /** The decoded value of a string literal. */
  readonly value?: string;
  /** Why an `illegal` token is illegal. */
  readonly error?: LexError;
}

export interface Scanned {
  readonly tokens: readonly Token[];
  readonly comments: readonly Comment[];
}

const TWO_CHAR = new Set(['||', '&&', '!=', '==', '<=', '>=']);
const ONE_CHAR = new Set('!=<>+-*/%^{}()[],.');
const ENDS_STATEMENT = new Set<TokenKind>(['ident', 'number', 'float', 'string', 'bool', 'null', '}', ')', ']']);

const LETTER = /\p{L}/u;
const DECIMAL_DIGIT = /\p{Nd}/u;

function isLetter(code: number): boolean {
  if (code < 0x80) return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f;
  return LETTER.test(String.fromCodePoint(code));
}

function isAsciiDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isIdentifierPart(code: number): boolean {
  if (isLetter(code) || isAsciiDigit(code)) return true;
  return code >= 0x80 && DECIMAL_DIGIT.test(String.fromCodePoint(code));
}

/** Whether `text` is one identifier (and not a keyword), so it can be written bare. */
export function isIdentifier(text: string): boolean {
  if (text === '' || text === 'true' || text === 'false' || text === 'null') return false;
  let first = true;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (first ? !isLetter(code) : !isIdentifierPart(code)) return false;
    first = false;
  }
  return true;
}

/**
 * The number a numeric literal stands for. Integers follow Go's `ParseInt(raw, 0, 64)` as the
 * reference does, so a leading zero means octal (`010` is 8); a leading-zero literal that is not
 * valid octal (`09`) falls back to a float, as it does there.
 */
export function numberLiteralValue(raw: string): number {
  if (/^[0-9]+$/.test(raw) && raw.length > 1 && raw[0] === '0') {
    return /^[0-7]+$/.test(raw) ? parseInt(raw, 8) : Number(raw);
  }
  return Number(raw);
}

/** Whether a numeric literal has the reference's float kind rather than an integer kind. */
export function isFloatLiteral(raw: string): boolean {
  if (/[.eE]/.test(raw)) return true;
  return raw.length > 1 && raw[0] === '0' && !/^[0-7]+$/.test(raw);
}

/** A readable name for a token in error messages: `"}"`, `identifier "foo"`, `newline`. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'eof':
      return 'end of file';
    case 'terminator':
      return token.text === '' ? 'end of file' : 'newline';
    case 'ident':
      return `identifier ${JSON.stringify(token.text)}`;
    case 'number':
    case 'float':
      return `number ${token.text}`;
    case 'string':
      return `string ${tokenText(shorten(token.text))}`;
    default:
      return quoteText(token.text);
  }
}

/** Characters that would break a message's single line (or hide in it): C0 controls, DEL, NEL, U+2028/9. */
const UNPRINTABLE = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/;

/**
 * `text` in double quotes with JSON's escapes, plus the line breaks JSON leaves alone, so an
 * error message that quotes source text stays on its one `FILE:LINE:COL: message` line.
 */
export function quoteText(text: string): string {
  return escapeUnprintable(JSON.stringify(text));
}

const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, 'g');
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** `text` with every character UNPRINTABLE matches written as its JSON escape (`\n`, `\u2028`). */
export function escapeUnprintable(text: string): string {
  return text.replace(UNPRINTABLE_ALL, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A literal's source text for an error message: as written when it is one plain line (a
 * double-quoted string already is), otherwise quoted by `quoteText` (a raw string spanning lines).
 */
export function tokenText(text: string): string {
  return UNPRINTABLE.test(text) ? quoteText(text) : text;
}

function shorten(text: string): string {
  const chars = [...text];
  if (chars.length <= 32) return text;
  return chars.slice(0, 28).join('') + '...' + text[text.length - 1];
}

class Cursor {
  i = 0;
  line = 1;
  col = 1;

  constructor(
    readonly text: string,
    readonly file: string,
  ) {}

  /** The current code point (a method, so checks are not narrowed across `advance()`). */
  code(): number | undefined {
    return this.text.codePointAt(this.i);
  }

  peek(ahead = 1): number | undefined {
    let j = this.i;
    for (let k = 0; k < ahead; k++) {
      const c = this.text.codePointAt(j);
      if (c === undefined) return undefined;
      j += c > 0xffff ? 2 : 1;
    }
    return this.text.codePointAt(j);
  }

  advance(): void {
    const c = this.text.codePointAt(this.i);
    if (c === undefined) return;
    this.i += c > 0xffff ? 2 : 1;
    if (c === 0x0a) {
      this.line++;
      this.col = 1;
    } else {
      this.col++;
    }
  }

  here(): Position {
    return { file: this.file, line: this.line, col: this.col, offset: this.i };
  }
}

/** The position `offset` characters (string indices) into `literal`, which starts at `start`. */
export function positionWithin(start: Position, literal: string, offset: number): Position {
  let line = start.line;
  let col = start.col;
  let i = 0;
  while (i < offset && i < literal.length) {
    const c = literal.codePointAt(i)!;
    if (c === 0x0a) {
      line++;
      col = 1;
    } else {
      col++;
    }
    i += c > 0xffff ? 2 : 1;
  }
  return { file: start.file, line, col, offset: start.offset + i };
}

/** Splits `text` into tokens (terminators inserted) and collects its comments. Never throws. */
export function tokenize(text: string, file: string): Scanned {
  const cur = new Cursor(text, file);
  const tokens: Token[] = [];
  const comments: Comment[] = [];
  let pendingTerminator = false;

  if (cur.code() === 0xfeff) cur.i = 1;

  const push = (kind: TokenKind, start: Position, extra: Partial<Token> = {}): void => {
    const end = cur.here();
    tokens.push({ kind, text: text.slice(start.offset, end.offset), pos: start, end, ...extra });
  };
  const terminate = (at: Position, atEof: boolean): void => {
    tokens.push({ kind: 'terminator', text: atEof ? '' : '\n', pos: at, end: at });
    pendingTerminator = false;
  };

  for (;;) {
    skipSpaceAndComments();
    const start = cur.here();
    const code = cur.code();
    if (code === undefined) {
      if (pendingTerminator) terminate(start, true);
      tokens.push({ kind: 'eof', text: '', pos: start, end: start });
      break;
    }
    const kind = scanToken(code, start);
    pendingTerminator = kind === 'illegal' ? pendingTerminator || endsStatementWhenIllegal(start) : ENDS_STATEMENT.has(kind);
  }
  return { tokens, comments };

  // A bad string or number still ends a statement (as it would have had it been well formed);
  // a stray character leaves the terminator state as it was.
  function endsStatementWhenIllegal(start: Position): boolean {
    return /^["`'.0-9]/.test(text[start.offset] ?? '');
  }

  function skipSpaceAndComments(): void {
    for (;;) {
      const code = cur.code();
      if (code === 0x20 || code === 0x09 || code === 0x0d) {
        cur.advance();
      } else if (code === 0x0a) {
        if (pendingTerminator) terminate(cur.here(), false);
        cur.advance();
      } else if (code === 0x2f && (cur.peek() === 0x2f || cur.peek() === 0x2a)) {
        scanComment();
      } else {
        return;
      }
    }
  }

  function scanComment(): void {
    const start = cur.here();
    const block = cur.peek() === 0x2a;
    cur.advance();
    cur.advance();
    let crossesLine = !block;
    let terminated = !block;
    if (block) {
      while (cur.code() !== undefined) {
        if (cur.code() === 0x2a && cur.peek() === 0x2f) {
          cur.advance();
          cur.advance();
          terminated = true;
          break;
        }
        if (cur.code() === 0x0a) crossesLine = true;
        cur.advance();
      }
    } else {
      while (cur.code() !== undefined && cur.code() !== 0x0a) cur.advance();
    }
    const raw = text.slice(start.offset, cur.i);
    // Windows line endings: the reference drops carriage returns from comment text.
    // A carriage return between `*` and `/` stays so the text cannot close the comment early.
    const commentText = raw.replace(/\r/g, (m, at: number) => (block && raw[at - 1] === '*' && raw[at + 1] === '/' ? m : ''));
    if (!terminated) {
      tokens.push({
        kind: 'illegal',
        text: raw,
        pos: start,
        end: cur.here(),
        error: { message: 'unterminated block comment', pos: start },
      });
      return;
    }
    comments.push({ text: commentText, pos: start });
    if (pendingTerminator && (crossesLine || cur.code() === undefined)) terminate(start, false);
  }

  function scanToken(code: number, start: Position): TokenKind {
    if (isLetter(code)) {
      while (isIdentifierPart(cur.code() ?? -1)) cur.advance();
      const word = text.slice(start.offset, cur.i);
      const kind: TokenKind = word === 'true' || word === 'false' ? 'bool' : word === 'null' ? 'null' : 'ident';
      push(kind, start);
      return kind;
    }
    if (isAsciiDigit(code) || (code === 0x2e && isAsciiDigit(cur.peek() ?? -1))) return scanNumber(start);

    switch (code) {
      case 0x22:
        return scanQuoted(start, 0x22);
      case 0x27:
        return scanQuoted(start, 0x27);
      case 0x60:
        return scanRaw(start);
    }

    const ch = String.fromCodePoint(code);
    const next = cur.peek();
    const pair = next === undefined ? '' : ch + String.fromCodePoint(next);
    if (TWO_CHAR.has(pair)) {
      cur.advance();
      cur.advance();
      push(pair as Punctuation, start);
      return pair as Punctuation;
    }
    if (ONE_CHAR.has(ch)) {
      cur.advance();
      push(ch as Punctuation, start);
      return ch as Punctuation;
    }
    cur.advance();
    const message =
      ch === '|' || ch === '&'
        ? `unexpected character ${JSON.stringify(ch)} (did you mean ${JSON.stringify(ch + ch)}?)`
        : code === 0x3b
          ? 'unexpected character ";": statements are separated by newlines'
          : `unexpected character ${describeChar(code)}`;
    push('illegal', start, { error: { message, pos: start } });
    return 'illegal';
  }

  function scanNumber(start: Position): TokenKind {
    let kind: TokenKind = 'number';
    while (isAsciiDigit(cur.code() ?? -1)) cur.advance();
    if (cur.code() === 0x2e) {
      kind = 'float';
      cur.advance();
      while (isAsciiDigit(cur.code() ?? -1)) cur.advance();
    }
    if (cur.code() === 0x65 || cur.code() === 0x45) {
      kind = 'float';
      cur.advance();
      if (cur.code() === 0x2b || cur.code() === 0x2d) cur.advance();
      let digits = 0;
      while (isAsciiDigit(cur.code() ?? -1)) {
        cur.advance();
        digits++;
      }
      if (digits === 0) {
        const raw = text.slice(start.offset, cur.i);
        push('illegal', start, { error: { message: `malformed number ${JSON.stringify(raw)}: exponent has no digits`, pos: start } });
        return 'illegal';
      }
    }
    push(kind, start);
    return kind;
  }

  function scanQuoted(start: Position, quote: number): TokenKind {
    cur.advance();
    let closed = false;
    while (cur.code() !== undefined && cur.code() !== 0x0a) {
      const c = cur.code();
      cur.advance();
      if (c === quote) {
        closed = true;
        break;
      }
      if (c === 0x5c && cur.code() !== undefined && cur.code() !== 0x0a) cur.advance();
    }
    if (quote === 0x27) {
      push('illegal', start, { error: { message: 'single-quoted strings are not allowed; use double quotes', pos: start } });
      return 'illegal';
    }
    if (!closed) {
      push('illegal', start, { error: { message: 'unterminated string literal', pos: start } });
      return 'illegal';
    }
    return decodeString(start);
  }

  function scanRaw(start: Position): TokenKind {
    cur.advance();
    while (cur.code() !== undefined && cur.code() !== 0x60) cur.advance();
    if (cur.code() === undefined) {
      push('illegal', start, { error: { message: 'unterminated raw string literal', pos: start } });
      return 'illegal';
    }
    cur.advance();
    return decodeString(start);
  }

  function decodeString(start: Position): TokenKind {
    const literal = text.slice(start.offset, cur.i);
    try {
      push('string', start, { value: unquoteGoString(literal) });
      return 'string';
    } catch (err) {
      if (!(err instanceof GoStringError)) throw err;
      // The reason may quote an escape sequence, which can hold a raw control character.
      push('illegal', start, { error: { message: escapeUnprintable(err.message), pos: positionWithin(start, literal, err.offset) } });
      return 'illegal';
    }
  }
}

function describeChar(code: number): string {
  const hex = 'U+' + code.toString(16).toUpperCase().padStart(4, '0');
  if (code === 0xfeff) return `${hex} (byte order mark)`;
  if (code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0)) return hex;
  return `${quoteText(String.fromCodePoint(code))} (${hex})`;
}
