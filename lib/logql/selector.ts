/**
 * The reduced LogQL accepted by `stage.match`: a label selector `{name op "value", …}` followed by
 * line filters (`|= != |~ !~` and a string). Strings are Go literals, double-quoted with escapes or
 * backquoted raw. Parsing follows the reference's yacc grammar and Go `text/scanner` lexing, so
 * errors carry the same `parse error at line L, col C: …` texts.
 */
import { GoStringError, unquoteGoString } from '../go/gostring.js';
import { compileRegex, type Regex } from '../regex/index.js';

/** A label matcher of the selector. */
export interface LabelMatcher {
  readonly name: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

/** A line filter following the selector. */
export interface LineFilter {
  readonly op: '|=' | '!=' | '|~' | '!~';
  readonly value: string;
}

/** A parsed selector. */
export interface Selector {
  readonly matchers: LabelMatcher[];
  readonly filters: LineFilter[];
}

/**
 * A selector the reference rejects: a syntax or lexical error (with 1-based line and column of
 * the offending token; as in the reference, line 0 when that token is a two-character operator
 * such as `|=`, and `parse error at line 0, col 0` for empty input), or an invalid regex found by
 * `compileSelector` (line and column 0).
 */
export class SelectorError extends Error {
  constructor(
    message: string,
    readonly line = 0,
    readonly col = 0,
  ) {
    super(message);
    this.name = 'SelectorError';
  }
}

// ---------------------------------------------------------------------------------------------
// Lexing: Go text/scanner in GoTokens mode plus the reference's operator table.

type TokenKind = 'IDENTIFIER' | 'STRING' | '=' | '!=' | '=~' | '!~' | '{' | '}' | ',' | '.' | '|~' | '|=' | '$end';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly line: number;
  readonly col: number;
}

const OPERATORS: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  [',', ','],
  ['.', '.'],
  ['{', '{'],
  ['}', '}'],
  ['=', '='],
  ['!=', '!='],
  ['=~', '=~'],
  ['!~', '!~'],
  ['|=', '|='],
  ['|~', '|~'],
]);

const LETTER = /^[\p{L}_]$/u;
const DIGIT = /^\p{Nd}$/u;

function isIdentStart(c: string | undefined): boolean {
  return c !== undefined && LETTER.test(c);
}

function isIdentPart(c: string | undefined): boolean {
  return c !== undefined && (LETTER.test(c) || DIGIT.test(c));
}

class Lexer {
  private readonly chars: string[];
  private i = 0;
  private line = 1;
  private col = 1;

  constructor(input: string) {
    this.chars = Array.from(input);
  }

  private ch(): string | undefined {
    return this.chars[this.i];
  }

  private advance(): void {
    if (this.chars[this.i] === '\n') {
      this.line++;
      this.col = 1;
    } else {
      this.col++;
    }
    this.i++;
  }

  next(): Token {
    while (this.ch() === ' ' || this.ch() === '\t' || this.ch() === '\n' || this.ch() === '\r') this.advance();
    // text/scanner reports the end of an empty input at line 0, col 0.
    const line = this.chars.length === 0 ? 0 : this.line;
    const col = this.chars.length === 0 ? 0 : this.col;
    const start = this.i;
    const fail = (message: string): never => {
      throw new SelectorError(`parse error at line ${line}, col ${col}: ${message}`, line, col);
    };
    const text = (): string => this.chars.slice(start, this.i).join('');
    const token = (kind: TokenKind, value = text()): Token => ({ kind, text: value, line, col });
    const c = this.ch();
    if (c === undefined) return token('$end', '');

    if (isIdentStart(c)) {
      while (isIdentPart(this.ch())) this.advance();
      return token('IDENTIFIER');
    }
    if (isDecimal(c)) {
      this.scanNumber(false, fail);
      return token('IDENTIFIER');
    }
    switch (c) {
      case '"': {
        this.scanQuoted('"', fail);
        return token('STRING', unquoteOrFail(text(), fail));
      }
      case "'":
        if (this.scanQuoted("'", fail) !== 1) fail('invalid char literal');
        return token('IDENTIFIER');
      case '`':
        // text/scanner reports a raw string as a String token too, so it is a STRING anywhere the
        // grammar takes one: no escapes, newlines allowed, carriage returns dropped by the unquote.
        this.advance();
        while (this.ch() !== '`') {
          if (this.ch() === undefined) fail('literal not terminated');
          this.advance();
        }
        this.advance();
        return token('STRING', unquoteOrFail(text(), fail));
      case '.':
        this.advance();
        if (this.ch() !== undefined && isDecimal(this.ch())) {
          this.scanNumber(true, fail);
          return token('IDENTIFIER');
        }
        return token('.');
      case '/':
        this.advance();
        if (this.ch() === '/' || this.ch() === '*') {
          this.skipComment(fail);
          return this.next();
        }
        return token('IDENTIFIER');
      default: {
        this.advance();
        const pair = this.ch() === undefined ? undefined : OPERATORS.get(c + this.ch());
        if (pair !== undefined) {
          this.advance();
          // The reference consumes the second character with text/scanner's Next(), which
          // invalidates the token position (Line = 0, Column kept): an error at this token
          // reads `parse error at line 0, col N`.
          return { kind: pair, text: text(), line: 0, col };
        }
        return token(OPERATORS.get(c) ?? 'IDENTIFIER');
      }
    }
  }

  /** Scans a "…" or '…' literal like text/scanner; returns the number of characters in it. */
  private scanQuoted(quote: string, fail: (m: string) => never): number {
    this.advance();
    let count = 0;
    while (this.ch() !== quote) {
      if (this.ch() === undefined || this.ch() === '\n') fail('literal not terminated');
      if (this.ch() === '\\') this.scanEscape(quote, fail);
      else this.advance();
      count++;
    }
    this.advance();
    return count;
  }

  private scanEscape(quote: string, fail: (m: string) => never): void {
    this.advance(); // the backslash
    const c = this.ch();
    if (c !== undefined && (/^[abfnrtv\\]$/.test(c) || c === quote)) {
      this.advance();
      return;
    }
    const digits = escapeDigits(c) ?? fail('invalid char escape');
    if (digits.base === 16) this.advance(); // past x, u or U
    for (let n = digits.count; n > 0; n--) {
      if (digitValue(this.ch()) >= digits.base) fail('invalid char escape');
      this.advance();
    }
  }

  private skipComment(fail: (m: string) => never): void {
    if (this.ch() === '/') {
      while (this.ch() !== undefined && this.ch() !== '\n') this.advance();
      return;
    }
    this.advance(); // '*'
    for (;;) {
      if (this.ch() === undefined) fail('comment not terminated');
      const previous = this.ch();
      this.advance();
      if (previous === '*' && this.ch() === '/') {
        this.advance();
        return;
      }
    }
  }

  /** text/scanner's number scanner: only its errors matter, the token is an identifier here. */
  private scanNumber(seenDot: boolean, fail: (m: string) => never): void {
    const start = this.i;
    let base = 10;
    let prefix = '';
    let hasDigits = false;
    let invalid: string | undefined;
    let isFloat = seenDot;
    const digits = (b: number): void => {
      for (;;) {
        const c = this.ch();
        if (c === undefined) return;
        if (c === '_' || isDecimal(c) || (b === 16 && isHex(c))) {
          if (c !== '_') {
            hasDigits = true;
            if (b <= 10 && c.charCodeAt(0) - 48 >= b && invalid === undefined) invalid = c;
          }
          this.advance();
        } else return;
      }
    };
    if (!seenDot) {
      if (this.ch() === '0') {
        this.advance();
        const p = this.ch()?.toLowerCase();
        if (p === 'x' || p === 'o' || p === 'b') {
          this.advance();
          prefix = p;
          base = p === 'x' ? 16 : p === 'o' ? 8 : 2;
        } else {
          prefix = '0';
          base = 8;
          hasDigits = true;
        }
      }
      digits(base);
      if (this.ch() === '.') {
        this.advance();
        isFloat = true;
      }
    }
    if (isFloat) {
      if (prefix === 'o' || prefix === 'b') fail(`invalid radix point in ${literalName(prefix)}`);
      digits(base);
    }
    if (!hasDigits) fail(`${literalName(prefix)} has no digits`);
    const e = this.ch()?.toLowerCase();
    if (e === 'e' || e === 'p') {
      if (e === 'e' && prefix !== '' && prefix !== '0') fail(`'${this.ch()}' exponent requires decimal mantissa`);
      if (e === 'p' && prefix !== 'x') fail(`'${this.ch()}' exponent requires hexadecimal mantissa`);
      this.advance();
      isFloat = true;
      if (this.ch() === '+' || this.ch() === '-') this.advance();
      const before = this.i;
      while (this.ch() !== undefined && (isDecimal(this.ch()) || this.ch() === '_')) this.advance();
      if (!this.chars.slice(before, this.i).some(isDecimal)) fail('exponent has no digits');
    } else if (prefix === 'x' && isFloat) {
      fail("hexadecimal mantissa requires a 'p' exponent");
    }
    // A leading 0 makes Go read octal digits, but 8 and 9 are fine when the literal is a float.
    if (!isFloat && invalid !== undefined) fail(`invalid digit '${invalid}' in ${literalName(prefix)}`);
    const literal = this.chars.slice(start, this.i).join('');
    if (literal.includes('_') && misplacedSeparator(literal)) fail("'_' must separate successive digits");
  }
}

/** How many digits of which base a numeric escape (`\101`, `\x41`, `\u0041`, `\U00000041`) takes. */
function escapeDigits(c: string | undefined): { base: number; count: number } | undefined {
  if (c !== undefined && c >= '0' && c <= '7') return { base: 8, count: 3 };
  if (c === 'x') return { base: 16, count: 2 };
  if (c === 'u') return { base: 16, count: 4 };
  if (c === 'U') return { base: 16, count: 8 };
  return undefined;
}

/** strconv.Unquote of a scanned string literal; the reference reports any failure as `invalid syntax`. */
function unquoteOrFail(literal: string, fail: (m: string) => never): string {
  try {
    return unquoteGoString(literal);
  } catch (err) {
    if (err instanceof GoStringError) fail('invalid syntax');
    throw err;
  }
}

/** Go's rule for `_` in number literals: only between digits, or after a base prefix. */
function misplacedSeparator(literal: string): boolean {
  let hex = false;
  let previous: 'digit' | 'sep' | 'other' = 'other';
  let i = 0;
  const p = literal[1]?.toLowerCase();
  if (literal[0] === '0' && (p === 'x' || p === 'o' || p === 'b')) {
    hex = p === 'x';
    previous = 'digit';
    i = 2;
  }
  for (; i < literal.length; i++) {
    const c = literal[i]!;
    if (c === '_') {
      if (previous !== 'digit') return true;
      previous = 'sep';
    } else if (isDecimal(c) || (hex && isHex(c))) {
      previous = 'digit';
    } else {
      if (previous === 'sep') return true;
      previous = 'other';
    }
  }
  return previous === 'sep';
}

function literalName(prefix: string): string {
  if (prefix === 'x') return 'hexadecimal literal';
  if (prefix === 'o' || prefix === '0') return 'octal literal';
  if (prefix === 'b') return 'binary literal';
  return 'decimal literal';
}

function isDecimal(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && (isDecimal(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

function digitValue(c: string | undefined): number {
  if (c === undefined) return 16;
  if (isDecimal(c)) return c.charCodeAt(0) - 48;
  if (c >= 'a' && c <= 'f') return c.charCodeAt(0) - 87;
  if (c >= 'A' && c <= 'F') return c.charCodeAt(0) - 55;
  return 16;
}

// ---------------------------------------------------------------------------------------------
// Parsing: the grammar `{ m (, m)* } (filter STRING)*`, reporting the first error the way the
// reference's yacc parser does (unexpected token, then the tokens its parser state can shift, in
// the grammar's token order).

const LABEL_OPS = ['=', '!=', '=~', '!~'] as const;
const FILTER_OPS = ['!=', '!~', '|~', '|='] as const;

/**
 * Parses a `stage.match` selector.
 *
 * @throws SelectorError e.g. `parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,`
 * @example parseSelector('{app="loki"} |= "error"') → { matchers: [{ name: 'app', op: '=', value: 'loki' }], filters: [{ op: '|=', value: 'error' }] }
 */
export function parseSelector(text: string): Selector {
  const lexer = new Lexer(text);
  let token = lexer.next();
  const expect = (...kinds: readonly TokenKind[]): Token => {
    if (!kinds.includes(token.kind)) {
      const message = `syntax error: unexpected ${token.kind}, expecting ${kinds.join(' or ')}`;
      throw new SelectorError(`parse error at line ${token.line}, col ${token.col}: ${message}`, token.line, token.col);
    }
    const current = token;
    token = lexer.next();
    return current;
  };

  const matchers: LabelMatcher[] = [];
  expect('{');
  for (;;) {
    const name = expect('IDENTIFIER').text;
    const op = expect(...LABEL_OPS).kind as LabelMatcher['op'];
    const value = expect('STRING').text;
    matchers.push({ name, op, value });
    if (expect('}', ',').kind === '}') break;
  }
  const filters: LineFilter[] = [];
  while (token.kind !== '$end') {
    const op = expect(...FILTER_OPS).kind as LineFilter['op'];
    filters.push({ op, value: expect('STRING').text });
  }
  return { matchers, filters };
}

/**
 * Builds the predicate an entry must satisfy: every label matcher (a missing label counts as
 * `""`; `=~`/`!~` must match the whole value, with `.` matching newlines) and every line filter
 * (`|=`/`!=` substring, `|~`/`!~` unanchored regex search).
 *
 * @throws SelectorError when a label or line regex does not compile (the reference panics on
 *   an invalid label regex; rejecting the config is the useful equivalent)
 */
export function compileSelector(sel: Selector): (labels: Readonly<Record<string, string>>, line: string) => boolean {
  const labelChecks = sel.matchers.map(({ name, op, value }) => {
    if (op === '=') return (labels: Readonly<Record<string, string>>) => labelValue(labels, name) === value;
    if (op === '!=') return (labels: Readonly<Record<string, string>>) => labelValue(labels, name) !== value;
    const re = compileOrThrow('^(?s:' + value + ')$', `label matcher ${name}${op}`, value);
    const wanted = op === '=~';
    return (labels: Readonly<Record<string, string>>) => re.test(labelValue(labels, name)) === wanted;
  });
  const lineChecks = sel.filters.map(({ op, value }) => {
    if (op === '|=') return (line: string) => line.includes(value);
    if (op === '!=') return (line: string) => !line.includes(value);
    const re = compileOrThrow(value, `line filter ${op}`, value);
    const wanted = op === '|~';
    return (line: string) => re.test(line) === wanted;
  });
  return (labels, line) => labelChecks.every((check) => check(labels)) && lineChecks.every((check) => check(line));
}

function labelValue(labels: Readonly<Record<string, string>>, name: string): string {
  return Object.hasOwn(labels, name) ? labels[name]! : '';
}

function compileOrThrow(pattern: string, where: string, userPattern: string): Regex {
  try {
    return compileRegex(pattern);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new SelectorError(`invalid regular expression in ${where}${JSON.stringify(userPattern)}: ${reason}`);
  }
}
