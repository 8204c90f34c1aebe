import { ConfigError, ConfigErrors, type Position } from './errors.js';
import type { Attribute, BinaryOp, Block, ConfigFile, Expr, ObjectField, Statement } from './ast.js';
import { recordLiteralSource } from './literal.js';
import {
  describeToken,
  escapeUnprintable,
  isIdentifier,
  numberLiteralValue,
  tokenize,
  tokenText,
  type Token,
  type TokenKind,
} from './lexer.js';

/**
 * Recursive-descent parser for the block configuration language:
 *
 *   File       = Body
 *   Body       = [ Statement { terminator Statement } ]
 *   Statement  = identifier "=" Expression | BlockName "{" Body "}"
 *   BlockName  = identifier { "." identifier } [ string ]
 *   Expression = Or; Or > And > Compare > Add > Multiply > Power (right-associative) > Unary
 *   Unary      = ( "!" | "-" ) Unary | Primary { "." identifier | "[" Expression "]" | "(" [ List ] ")" }
 *   Primary    = identifier | string | number | bool | null | "(" Expression ")"
 *              | "[" [ List ] "]" | "{" [ Field { "," Field } [ "," ] ] "}"
 *   Field      = ( identifier | string ) "=" Expression
 *
 * A statement with an error is skipped up to the next statement so that several errors can be
 * reported at once; any error makes the parse throw ConfigErrors.
 */

/** How deep blocks, brackets, parentheses and unary operators may nest. */
export const MAX_NESTING = 256;
/** How deep an expression tree may grow (long operator or `.field` chains). */
export const MAX_EXPRESSION_DEPTH = 1000;
/** A parse stops collecting errors after this many. */
export const MAX_ERRORS = 20;

/**
 * Parses a whole configuration file. Throws ConfigErrors (one ConfigError per bad statement,
 * in source order) when the text is not valid.
 *
 * @example parseConfig('stage.json {\n  expressions = { app = "" }\n}', 'config.alloy')
 */
export function parseConfig(text: string, file: string): ConfigFile {
  const { tokens, comments } = tokenize(text, file);
  const parser = new Parser(tokens);
  const body = parser.run(() => parser.parseBody(false));
  return { file, body, comments };
}

/** Parses a single expression (for tests, tools and the playground). Throws ConfigErrors. */
export function parseExpression(text: string, file: string): Expr {
  const { tokens } = tokenize(text, file);
  const parser = new Parser(tokens);
  return parser.run(() => parser.parseWholeExpression());
}

/** Unwinds the statement being parsed after its error has been recorded. */
class StatementAbort {}
/** Unwinds the whole parse once MAX_ERRORS errors have been recorded. */
class TooManyErrors {}

const ABORT = new StatementAbort();

/**
 * How tightly each binary operator binds (higher binds tighter). The formatter reads it to know
 * where parentheses are needed. `^` is right-associative and parsed on its own (parsePower).
 */
export const BINARY_PRECEDENCE: Readonly<Record<BinaryOp, number>> = {
  '||': 1,
  '&&': 2,
  '==': 3,
  '!=': 3,
  '<': 3,
  '<=': 3,
  '>': 3,
  '>=': 3,
  '+': 4,
  '-': 4,
  '*': 5,
  '/': 5,
  '%': 5,
  '^': 6,
};

function isBinaryOp(kind: TokenKind): kind is BinaryOp {
  return Object.hasOwn(BINARY_PRECEDENCE, kind);
}

class Parser {
  private p = 0;
  private nesting = 0;
  private readonly errors: ConfigError[] = [];
  private readonly reportedIllegal = new Set<Token>();
  private readonly depths = new WeakMap<Expr, number>();

  constructor(private readonly tokens: readonly Token[]) {}

  run<T>(parse: () => T): T {
    let result: T | undefined;
    try {
      result = parse();
    } catch (err) {
      if (!(err instanceof StatementAbort) && !(err instanceof TooManyErrors)) throw err;
    }
    if (this.errors.length > 0 || result === undefined) {
      const sorted = [...this.errors].sort((a, b) => (a.pos?.offset ?? 0) - (b.pos?.offset ?? 0));
      throw new ConfigErrors(sorted);
    }
    return result;
  }

  private get tok(): Token {
    return this.tokens[this.p]!;
  }

  /** The current token's kind (a method, so checks are not narrowed across `next()`). */
  private kind(): TokenKind {
    return this.tokens[this.p]!.kind;
  }

  private next(): void {
    if (this.kind() !== 'eof') this.p++;
  }

  private record(message: string, pos: Position): void {
    // One error per place: blocks left open at the end of the file all fail there.
    if (this.errors.some((e) => e.pos?.offset === pos.offset)) return;
    // Messages quote source text; whatever slipped through unquoted still may not break the line.
    this.errors.push(new ConfigError(escapeUnprintable(message), pos));
    if (this.errors.length >= MAX_ERRORS) throw new TooManyErrors();
  }

  private reportIllegal(token: Token): void {
    if (this.reportedIllegal.has(token) || !token.error) return;
    this.reportedIllegal.add(token);
    this.record(token.error.message, token.error.pos);
  }

  /** Records an error at `pos` and abandons the statement. */
  private failAt(message: string, pos: Position): never {
    this.record(message, pos);
    throw ABORT;
  }

  /** Records `expected <what>, got <current token>` (or the token's own lexical error). */
  private unexpected(what: string): never {
    const token = this.tok;
    if (token.kind === 'illegal') {
      this.reportIllegal(token);
      throw ABORT;
    }
    return this.failAt(`expected ${what}, got ${describeToken(token)}`, token.pos);
  }

  private enter(): void {
    if (this.nesting >= MAX_NESTING) this.failAt(`nesting is too deep (more than ${MAX_NESTING} levels)`, this.tok.pos);
    this.nesting++;
  }

  private leave(): void {
    this.nesting--;
  }

  private stringLiteral(value: string, source: string, pos: Expr['pos']): Expr {
    const expr = this.node({ kind: 'string', value, pos });
    recordLiteralSource(expr, source);
    return expr;
  }

  private node<T extends Expr>(expr: T, children: readonly Expr[] = []): T {
    let depth = 1;
    for (const child of children) depth = Math.max(depth, (this.depths.get(child) ?? 1) + 1);
    if (depth > MAX_EXPRESSION_DEPTH) {
      this.failAt(`expression is too deeply nested (more than ${MAX_EXPRESSION_DEPTH} levels)`, expr.pos);
    }
    this.depths.set(expr, depth);
    return expr;
  }

  // ---- statements ----

  parseBody(inBlock: boolean): Statement[] {
    const body: Statement[] = [];
    for (;;) {
      while (this.kind() === 'terminator') this.next();
      if (this.kind() === 'eof' || (inBlock && this.kind() === '}')) return body;
      const start = this.p;
      const nesting = this.nesting;
      try {
        const stmt = this.parseStatement(inBlock);
        this.expectStatementEnd(stmt, inBlock);
        body.push(stmt);
      } catch (err) {
        if (!(err instanceof StatementAbort)) throw err;
        this.nesting = nesting;
        this.skipStatement(start, inBlock);
      }
    }
  }

  private expectStatementEnd(stmt: Statement, inBlock: boolean): void {
    const t = this.tok;
    if (t.kind === 'terminator') {
      this.next();
      return;
    }
    if (t.kind === 'eof' || (inBlock && t.kind === '}')) return;
    if (stmt.kind === 'attribute') {
      const blockFollows = t.kind === '{' || (t.kind === 'string' && this.tokens[this.p + 1]?.kind === '{');
      if (blockFollows) this.failAt('a block cannot be used as an attribute value', stmt.value.pos);
      this.unexpected('newline after attribute value');
    }
    this.unexpected('newline after block');
  }

  /**
   * Skips from the start of a bad statement to the start of the next one: past the next
   * terminator outside any bracket, or up to the `}` that closes the enclosing block.
   */
  private skipStatement(start: number, inBlock: boolean): void {
    // Errors about blocks left open all happen at the end; there is nothing left to skip.
    if (this.kind() === 'eof') return;
    this.p = start;
    let curly = 0;
    let square = 0;
    let round = 0;
    let first = true;
    for (;;) {
      const t = this.tok;
      if (t.kind === 'eof') return;
      if (!first) {
        if (t.kind === 'terminator' && curly <= 0 && square <= 0 && round <= 0) {
          this.next();
          return;
        }
        if (inBlock && t.kind === '}' && curly <= 0) return;
      }
      first = false;
      if (t.kind === 'illegal') this.reportIllegal(t);
      else if (t.kind === '{') curly++;
      else if (t.kind === '}') curly--;
      else if (t.kind === '[') square++;
      else if (t.kind === ']') square--;
      else if (t.kind === '(') round++;
      else if (t.kind === ')') round--;
      this.next();
    }
  }

  private parseStatement(inBlock: boolean): Statement {
    const first = this.tok;
    if (first.kind !== 'ident') {
      if (first.kind === '}' && !inBlock) this.failAt('unexpected "}" with no open block to close', first.pos);
      this.unexpected('attribute or block name');
    }
    const names = [first.text];
    this.next();
    while (this.kind() === '.') {
      this.next();
      if (this.kind() !== 'ident') this.unexpected('identifier after "."');
      names.push(this.tok.text);
      this.next();
    }
    const name = names.join('.');

    if (this.kind() === '=') {
      if (names.length > 1) this.failAt(`attribute name ${JSON.stringify(name)} must be a single identifier`, first.pos);
      this.next();
      return this.parseAttributeValue(name, first.pos);
    }

    let label: string | undefined;
    if (this.kind() === 'string') {
      const labelToken = this.tok;
      if (labelToken.text[0] !== '"') this.failAt('block label must be a double-quoted string', labelToken.pos);
      // Labels are used as written, without unescaping, and must be identifiers.
      const text = labelToken.text.slice(1, -1);
      if (text !== '' && !isIdentifier(text)) {
        this.failAt(`block label must be a valid identifier, got ${JSON.stringify(text)}`, labelToken.pos);
      }
      this.next();
      if (this.kind() === '=') this.failAt(`attribute ${JSON.stringify(name)} cannot have a label`, labelToken.pos);
      if (this.kind() !== '{') this.unexpected(`"{" after block label ${tokenText(labelToken.text)}`);
      // An empty label is the same as none, as in the reference.
      label = text === '' ? undefined : text;
    } else if (this.kind() !== '{') {
      if (names.length === 1) this.unexpected(`"=" or "{" after identifier ${JSON.stringify(name)}`);
      this.unexpected(`"{" or a block label after block name ${JSON.stringify(name)}`);
    }
    return this.parseBlockBody(name, label, first.pos);
  }

  private parseAttributeValue(name: string, pos: Position): Attribute {
    const value = this.parseExpression();
    const endPos = this.tokens[this.p - 1]!.end;
    return { kind: 'attribute', name, value, pos, endPos };
  }

  private parseBlockBody(name: string, label: string | undefined, pos: Position): Block {
    const open = this.tok;
    this.enter();
    this.next();
    const body = this.parseBody(true);
    if (this.kind() !== '}') {
      this.unexpected(`"}" to close block ${JSON.stringify(name)} opened at ${open.pos.line}:${open.pos.col}`);
    }
    const endPos = this.tok.pos;
    this.next();
    this.leave();
    return label === undefined ? { kind: 'block', name, body, pos, endPos } : { kind: 'block', name, label, body, pos, endPos };
  }

  // ---- expressions ----

  parseWholeExpression(): Expr {
    const expr = this.parseExpression();
    while (this.kind() === 'terminator') this.next();
    if (this.kind() !== 'eof') this.unexpected('end of expression');
    return expr;
  }

  private parseExpression(): Expr {
    return this.parseBinary(1);
  }

  private parseBinary(minPrecedence: number): Expr {
    let left = this.parsePower();
    for (;;) {
      const op = this.kind();
      // `^` is right-associative: parsePower has taken it already.
      if (!isBinaryOp(op) || op === '^') return left;
      const precedence = BINARY_PRECEDENCE[op];
      if (precedence < minPrecedence) return left;
      this.next();
      const right = this.parseBinary(precedence + 1);
      left = this.node({ kind: 'binary', op, left, right, pos: left.pos }, [left, right]);
    }
  }

  private parsePower(): Expr {
    const left = this.parseUnary();
    if (this.kind() !== '^') return left;
    this.next();
    this.enter();
    const right = this.parsePower();
    this.leave();
    return this.node({ kind: 'binary', op: '^', left, right, pos: left.pos }, [left, right]);
  }

  private parseUnary(): Expr {
    const t = this.tok;
    if (t.kind === '!' || t.kind === '-') {
      this.next();
      this.enter();
      const operand = this.parseUnary();
      this.leave();
      return this.node({ kind: 'unary', op: t.kind, operand, pos: t.pos }, [operand]);
    }
    return this.parsePostfix();
  }

  private parsePostfix(): Expr {
    let expr = this.parsePrimary();
    for (;;) {
      switch (this.kind()) {
        case '.': {
          this.next();
          if (this.kind() !== 'ident') this.unexpected('identifier after "."');
          const name = this.tok.text;
          this.next();
          expr = this.node({ kind: 'access', object: expr, name, pos: expr.pos }, [expr]);
          break;
        }
        case '[': {
          this.next();
          this.enter();
          const index = this.parseExpression();
          if (this.kind() !== ']') this.unexpected('"]" after index');
          this.next();
          this.leave();
          expr = this.node({ kind: 'index', object: expr, index, pos: expr.pos }, [expr, index]);
          break;
        }
        case '(': {
          this.next();
          this.enter();
          const args = this.parseList(')', 'argument');
          this.leave();
          expr = this.node({ kind: 'call', callee: expr, args, pos: expr.pos }, [expr, ...args]);
          break;
        }
        default:
          return expr;
      }
    }
  }

  private parsePrimary(): Expr {
    const t = this.tok;
    switch (t.kind) {
      case 'ident':
        this.next();
        return this.node({ kind: 'ident', name: t.text, pos: t.pos });
      case 'string':
        this.next();
        return this.stringLiteral(t.value!, t.text, t.pos);
      case 'number':
      case 'float':
        this.next();
        return this.node({ kind: 'number', value: numberLiteralValue(t.text), raw: t.text, pos: t.pos });
      case 'bool':
        this.next();
        return this.node({ kind: 'bool', value: t.text === 'true', pos: t.pos });
      case 'null':
        this.next();
        return this.node({ kind: 'null', pos: t.pos });
      case '(': {
        this.next();
        this.enter();
        const inner = this.parseExpression();
        if (this.kind() !== ')') this.unexpected('")" to close "("');
        this.next();
        this.leave();
        return this.node({ kind: 'paren', inner, pos: t.pos }, [inner]);
      }
      case '[': {
        this.next();
        this.enter();
        const items = this.parseList(']', 'array element');
        this.leave();
        const endPos = this.tokens[this.p - 1]!.pos;
        return this.node({ kind: 'array', items, pos: t.pos, endPos }, items);
      }
      case '{': {
        this.next();
        this.enter();
        const fields = this.parseFields();
        this.leave();
        const endPos = this.tokens[this.p - 1]!.pos;
        return this.node(
          { kind: 'object', fields, pos: t.pos, endPos },
          fields.map((f) => f.value),
        );
      }
      default:
        return this.unexpected('expression');
    }
  }

  /** Comma-separated expressions up to `close` (a trailing comma allowed); consumes `close`. */
  private parseList(close: ')' | ']', item: string): Expr[] {
    const items: Expr[] = [];
    while (this.kind() !== close) {
      items.push(this.parseExpression());
      if (this.kind() === close) break;
      if (this.kind() !== ',') this.unexpected(`"," or "${close}" after ${item}`);
      this.next();
    }
    this.next();
    return items;
  }

  private parseFields(): ObjectField[] {
    const fields: ObjectField[] = [];
    while (this.kind() !== '}') {
      const keyToken = this.tok;
      let key: string;
      let quoted: boolean;
      if (keyToken.kind === 'ident') {
        key = keyToken.text;
        quoted = false;
      } else if (keyToken.kind === 'string') {
        // The reference keeps the text between the quotes as is: escapes are not interpreted.
        key = keyToken.text.slice(1, -1);
        quoted = true;
      } else {
        return this.unexpected('field name (identifier or string)');
      }
      this.next();
      if (this.kind() !== '=')
        this.unexpected(`"=" after field name ${keyToken.kind === 'ident' ? JSON.stringify(key) : tokenText(keyToken.text)}`);
      this.next();
      const value = this.parseExpression();
      fields.push({ key, quoted, keyPos: keyToken.pos, value });
      if (this.kind() === '}') break;
      if (this.kind() !== ',') this.unexpected('"," or "}" after object field');
      this.next();
    }
    this.next();
    return fields;
  }
}
