/**
 * The template lexer: a port of Go's `text/template/parse/lex.go` state machine, run eagerly
 * into a token array. Trim markers follow Go exactly: `{{- ` and ` -}}` need the space, and
 * they eat all ASCII whitespace (space, tab, CR, LF) next to the action.
 */

export const enum Tok {
  Error,
  Bool,
  Char,
  CharConstant,
  Comment,
  Complex,
  Assign,
  Declare,
  EOF,
  Field,
  Identifier,
  LeftDelim,
  LeftParen,
  Number,
  Pipe,
  RawString,
  RightDelim,
  RightParen,
  Space,
  String,
  Text,
  Variable,
  // Keywords (all after this point).
  Keyword,
  Block,
  Break,
  Continue,
  Dot,
  Define,
  Else,
  End,
  If,
  Nil,
  Range,
  Template,
  With,
}

/** One lexed item: its type, source text, position (UTF-16 offset) and 1-based line. */
export interface Token {
  readonly type: Tok;
  readonly val: string;
  readonly pos: number;
  readonly line: number;
}

const KEYWORDS: ReadonlyMap<string, Tok> = new Map([
  ['block', Tok.Block],
  ['break', Tok.Break],
  ['continue', Tok.Continue],
  ['define', Tok.Define],
  ['else', Tok.Else],
  ['end', Tok.End],
  ['if', Tok.If],
  ['range', Tok.Range],
  ['nil', Tok.Nil],
  ['template', Tok.Template],
  ['with', Tok.With],
]);

const LEFT_DELIM = '{{';
const RIGHT_DELIM = '}}';
const LEFT_COMMENT = '/*';
const RIGHT_COMMENT = '*/';
const EOF = -1;

const ALPHANUMERIC = /^[\p{L}\p{Nd}_]$/u;

function isSpace(r: number): boolean {
  return r === 0x20 || r === 0x09 || r === 0x0d || r === 0x0a;
}

function isAlphaNumeric(r: number): boolean {
  if (r < 0) return false;
  if (r < 0x80) {
    return r === 0x5f || (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  }
  return ALPHANUMERIC.test(String.fromCodePoint(r));
}

function hasLeftTrimMarker(s: string, at: number): boolean {
  return s.charCodeAt(at) === 0x2d && isSpace(s.charCodeAt(at + 1));
}

function hasRightTrimMarker(s: string, at: number): boolean {
  return isSpace(s.charCodeAt(at)) && s.charCodeAt(at + 1) === 0x2d;
}

/** Options that depend on the function map: `break`/`continue` are keywords unless defined. */
export interface LexOptions {
  readonly breakOK: boolean;
  readonly continueOK: boolean;
}

type State = ((l: Lexer) => State) | null;

class Lexer {
  pos = 0;
  start = 0;
  atEOF = false;
  parenDepth = 0;
  readonly tokens: Token[] = [];
  private readonly lineStarts: number[] = [0];

  constructor(
    readonly input: string,
    readonly options: LexOptions,
  ) {
    for (let i = 0; i < input.length; i++) if (input.charCodeAt(i) === 0x0a) this.lineStarts.push(i + 1);
  }

  lineAt(pos: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.pos += r > 0xffff ? 2 : 1;
    return r;
  }

  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  backup(): void {
    if (!this.atEOF && this.pos > 0) {
      const c = this.input.charCodeAt(this.pos - 1);
      this.pos -= c >= 0xdc00 && c <= 0xdfff && this.pos > 1 ? 2 : 1;
    }
    this.atEOF = false;
  }

  emitRange(type: Tok, start: number, end: number): void {
    this.tokens.push({ type, val: this.input.slice(start, end), pos: start, line: this.lineAt(start) });
  }

  emit(type: Tok): void {
    this.emitRange(type, this.start, this.pos);
    this.start = this.pos;
  }

  ignore(): void {
    this.start = this.pos;
  }

  error(message: string): State {
    this.tokens.push({ type: Tok.Error, val: message, pos: this.start, line: this.lineAt(this.start) });
    return null;
  }

  accept(valid: string): boolean {
    const r = this.next();
    if (r >= 0 && valid.includes(String.fromCodePoint(r))) return true;
    this.backup();
    return false;
  }

  acceptRun(valid: string): void {
    for (;;) {
      const r = this.next();
      if (r < 0 || !valid.includes(String.fromCodePoint(r))) break;
    }
    this.backup();
  }

  /** Whether the input at `pos` is a right delimiter, and whether it carries a trim marker. */
  atRightDelim(): { delim: boolean; trimSpace: boolean } {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith(RIGHT_DELIM, this.pos + 2)) {
      return { delim: true, trimSpace: true };
    }
    return { delim: this.input.startsWith(RIGHT_DELIM, this.pos), trimSpace: false };
  }

  atTerminator(): boolean {
    const r = this.peek();
    if (isSpace(r)) return true;
    switch (r) {
      case EOF:
      case 0x2e: // .
      case 0x2c: // ,
      case 0x7c: // |
      case 0x3a: // :
      case 0x29: // )
      case 0x28: // (
        return true;
    }
    return this.input.startsWith(RIGHT_DELIM, this.pos);
  }
}

function rightTrimLength(s: string, start: number, end: number): number {
  let i = end;
  while (i > start && isSpace(s.charCodeAt(i - 1))) i--;
  return end - i;
}

function leftTrimLength(s: string, start: number): number {
  let i = start;
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i - start;
}

function lexText(l: Lexer): State {
  const x = l.input.indexOf(LEFT_DELIM, l.pos);
  if (x >= 0) {
    if (x > l.pos) {
      let textEnd = x;
      if (hasLeftTrimMarker(l.input, x + LEFT_DELIM.length)) textEnd -= rightTrimLength(l.input, l.start, x);
      if (textEnd > l.start) l.emitRange(Tok.Text, l.start, textEnd);
      l.pos = x;
      l.start = x;
    }
    return lexLeftDelim;
  }
  l.pos = l.input.length;
  if (l.pos > l.start) l.emit(Tok.Text);
  l.emitRange(Tok.EOF, l.pos, l.pos);
  return null;
}

function lexLeftDelim(l: Lexer): State {
  l.pos += LEFT_DELIM.length;
  const trimSpace = hasLeftTrimMarker(l.input, l.pos);
  const afterMarker = trimSpace ? 2 : 0;
  if (l.input.startsWith(LEFT_COMMENT, l.pos + afterMarker)) {
    l.pos += afterMarker;
    l.ignore();
    return lexComment;
  }
  l.emit(Tok.LeftDelim);
  l.pos += afterMarker;
  l.ignore();
  l.parenDepth = 0;
  return lexInsideAction;
}

function lexComment(l: Lexer): State {
  l.pos += LEFT_COMMENT.length;
  const x = l.input.indexOf(RIGHT_COMMENT, l.pos);
  if (x < 0) return l.error('unclosed comment');
  l.pos = x + RIGHT_COMMENT.length;
  const { delim, trimSpace } = l.atRightDelim();
  if (!delim) return l.error('comment ends before closing delimiter');
  if (trimSpace) l.pos += 2;
  l.pos += RIGHT_DELIM.length;
  if (trimSpace) l.pos += leftTrimLength(l.input, l.pos);
  l.ignore();
  return lexText;
}

function lexRightDelim(l: Lexer): State {
  const { trimSpace } = l.atRightDelim();
  if (trimSpace) {
    l.pos += 2;
    l.ignore();
  }
  l.pos += RIGHT_DELIM.length;
  l.emit(Tok.RightDelim);
  if (trimSpace) {
    l.pos += leftTrimLength(l.input, l.pos);
    l.ignore();
  }
  return lexText;
}

function lexInsideAction(l: Lexer): State {
  const { delim } = l.atRightDelim();
  if (delim) {
    if (l.parenDepth === 0) return lexRightDelim;
    return l.error('unclosed left paren');
  }
  const r = l.next();
  if (r === EOF) return l.error('unclosed action');
  if (isSpace(r)) {
    l.backup();
    return lexSpace;
  }
  switch (r) {
    case 0x3d: // =
      l.emit(Tok.Assign);
      return lexInsideAction;
    case 0x3a: // :
      if (l.next() !== 0x3d) return l.error('expected :=');
      l.emit(Tok.Declare);
      return lexInsideAction;
    case 0x7c: // |
      l.emit(Tok.Pipe);
      return lexInsideAction;
    case 0x22: // "
      return lexQuote;
    case 0x60: // `
      return lexRawQuote;
    case 0x24: // $
      return lexVariable;
    case 0x27: // '
      return lexChar;
    case 0x2e: // .
      if (l.pos < l.input.length) {
        const c = l.input.charCodeAt(l.pos);
        if (c < 0x30 || c > 0x39) return lexField;
      }
      l.backup();
      return lexNumber;
    case 0x28: // (
      l.emit(Tok.LeftParen);
      l.parenDepth++;
      return lexInsideAction;
    case 0x29: // )
      l.parenDepth--;
      if (l.parenDepth < 0) return l.error('unexpected right paren');
      l.emit(Tok.RightParen);
      return lexInsideAction;
  }
  if (r === 0x2b || r === 0x2d || (r >= 0x30 && r <= 0x39)) {
    l.backup();
    return lexNumber;
  }
  if (isAlphaNumeric(r)) {
    l.backup();
    return lexIdentifier;
  }
  if (r <= 0x7f && r >= 0x20 && r !== 0x7f) {
    l.emit(Tok.Char);
    return lexInsideAction;
  }
  return l.error(`unrecognized character in action: ${formatRuneU(r)}`);
}

/** Go's `%#U` of a rune: `U+0001` or `U+00E9 'é'`. */
function formatRuneU(r: number): string {
  const hex = 'U+' + r.toString(16).toUpperCase().padStart(4, '0');
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(String.fromCodePoint(r)) ? `${hex} '${String.fromCodePoint(r)}'` : hex;
}

function lexSpace(l: Lexer): State {
  let numSpaces = 0;
  while (isSpace(l.peek())) {
    l.next();
    numSpaces++;
  }
  if (hasRightTrimMarker(l.input, l.pos - 1) && l.input.startsWith(RIGHT_DELIM, l.pos + 1)) {
    l.backup();
    if (numSpaces === 1) return lexRightDelim;
  }
  l.emit(Tok.Space);
  return lexInsideAction;
}

function lexIdentifier(l: Lexer): State {
  for (;;) {
    const r = l.next();
    if (isAlphaNumeric(r)) continue;
    l.backup();
    const word = l.input.slice(l.start, l.pos);
    if (!l.atTerminator()) return l.error(`bad character ${formatRuneU(r)}`);
    const keyword = KEYWORDS.get(word);
    if (keyword !== undefined) {
      if ((keyword === Tok.Break && !l.options.breakOK) || (keyword === Tok.Continue && !l.options.continueOK)) {
        l.emit(Tok.Identifier);
      } else {
        l.emit(keyword);
      }
    } else if (word === 'true' || word === 'false') {
      l.emit(Tok.Bool);
    } else {
      l.emit(Tok.Identifier);
    }
    return lexInsideAction;
  }
}

function lexField(l: Lexer): State {
  return lexFieldOrVariable(l, Tok.Field);
}

function lexVariable(l: Lexer): State {
  if (l.atTerminator()) {
    l.emit(Tok.Variable);
    return lexInsideAction;
  }
  return lexFieldOrVariable(l, Tok.Variable);
}

function lexFieldOrVariable(l: Lexer, type: Tok): State {
  if (l.atTerminator()) {
    l.emit(type === Tok.Variable ? Tok.Variable : Tok.Dot);
    return lexInsideAction;
  }
  let r: number;
  for (;;) {
    r = l.next();
    if (!isAlphaNumeric(r)) {
      l.backup();
      break;
    }
  }
  if (!l.atTerminator()) return l.error(`bad character ${formatRuneU(r)}`);
  l.emit(type);
  return lexInsideAction;
}

function lexChar(l: Lexer): State {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 0x0a) continue;
    }
    if (r === EOF || r === 0x0a) return l.error('unterminated character constant');
    if (r === 0x27) break;
  }
  l.emit(Tok.CharConstant);
  return lexInsideAction;
}

function scanNumber(l: Lexer): boolean {
  l.accept('+-');
  let digits = '0123456789_';
  if (l.accept('0')) {
    if (l.accept('xX')) digits = '0123456789abcdefABCDEF_';
    else if (l.accept('oO')) digits = '01234567_';
    else if (l.accept('bB')) digits = '01_';
  }
  l.acceptRun(digits);
  if (l.accept('.')) l.acceptRun(digits);
  if (digits.length === 11 && l.accept('eE')) {
    l.accept('+-');
    l.acceptRun('0123456789_');
  }
  if (digits.length === 23 && l.accept('pP')) {
    l.accept('+-');
    l.acceptRun('0123456789_');
  }
  l.accept('i');
  if (isAlphaNumeric(l.peek())) {
    l.next();
    return false;
  }
  return true;
}

function lexNumber(l: Lexer): State {
  if (!scanNumber(l)) return l.error(`bad number syntax: ${JSON.stringify(l.input.slice(l.start, l.pos))}`);
  const sign = l.peek();
  if (sign === 0x2b || sign === 0x2d) {
    if (!scanNumber(l) || l.input[l.pos - 1] !== 'i') {
      return l.error(`bad number syntax: ${JSON.stringify(l.input.slice(l.start, l.pos))}`);
    }
    l.emit(Tok.Complex);
  } else {
    l.emit(Tok.Number);
  }
  return lexInsideAction;
}

function lexQuote(l: Lexer): State {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 0x0a) continue;
    }
    if (r === EOF || r === 0x0a) return l.error('unterminated quoted string');
    if (r === 0x22) break;
  }
  l.emit(Tok.String);
  return lexInsideAction;
}

function lexRawQuote(l: Lexer): State {
  for (;;) {
    const r = l.next();
    if (r === EOF) return l.error('unterminated raw quoted string');
    if (r === 0x60) break;
  }
  l.emit(Tok.RawString);
  return lexInsideAction;
}

/** Lexes a whole template into tokens, ending with an EOF or an Error token. */
export function lex(input: string, options: LexOptions): Token[] {
  const l = new Lexer(input, options);
  let state: State = lexText;
  while (state !== null) state = state(l);
  return l.tokens;
}
