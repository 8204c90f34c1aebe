/**
 * The template parser: a port of Go's `text/template/parse/parse.go`. It builds one tree per
 * template name (the main one plus every `define`/`block`), checks function names and variable
 * scopes at parse time, and reports errors with Go's wording (`template: NAME:LINE: …`).
 */
import {
  ActionNode,
  BoolNode,
  BreakNode,
  ChainNode,
  CommandNode,
  ContinueNode,
  DotNode,
  FieldNode,
  IdentifierNode,
  IfNode,
  ListNode,
  NilNode,
  NumberNode,
  PipeNode,
  RangeNode,
  StringNode,
  TemplateNode,
  TextNode,
  VariableNode,
  WithNode,
  type Arg,
  type Node,
} from './ast.js';
import { TemplateParseError } from './errors.js';
import type { TemplateFunc } from './func.js';
import { lex, Tok, type Token } from './lexer.js';
import { unquoteGoString } from '../go/gostring.js';
import { parseGoFloat, parseGoInt, parseGoUint } from '../go/strconv.js';

/** `{{end}}` and `{{else}}` while parsing; they never reach a finished tree. */
interface Delimiter {
  readonly kind: 'end' | 'else';
  readonly pos: number;
  readonly line: number;
}

type Parsed = Node | Delimiter;

const ELSE_TEXT = '{{else}}';
const END_TEXT = '{{end}}';

/** The named trees of one parse: the main template plus everything `define`/`block` added. */
export type TreeSet = Map<string, ListNode>;

export interface ParseOptions {
  readonly name: string;
  readonly lookupFunction: (name: string) => TemplateFunc | undefined;
}

class Parser {
  private i = 0;
  private line = 1;
  private vars: string[] = ['$'];
  private rangeDepth = 0;
  private actionLine = 0;
  readonly treeSet: TreeSet = new Map();

  constructor(
    private readonly tokens: readonly Token[],
    private readonly options: ParseOptions,
  ) {}

  // -------------------------------------------------------------------------------------------
  // Token access

  private next(): Token {
    const token = this.tokens[Math.min(this.i, this.tokens.length - 1)]!;
    this.i++;
    this.line = token.line;
    return token;
  }

  private backup(n = 1): void {
    this.i -= n;
  }

  private peek(): Token {
    const token = this.next();
    this.backup();
    return token;
  }

  private nextNonSpace(): Token {
    let token: Token;
    do token = this.next();
    while (token.type === Tok.Space);
    return token;
  }

  private peekNonSpace(): Token {
    const token = this.nextNonSpace();
    this.backup();
    return token;
  }

  private errorf(message: string): never {
    throw new TemplateParseError(`template: ${this.options.name}:${this.line}: ${message}`);
  }

  private expect(expected: Tok, context: string): Token {
    const token = this.nextNonSpace();
    if (token.type !== expected) this.unexpected(token, context);
    return token;
  }

  private expectOneOf(a: Tok, b: Tok, context: string): Token {
    const token = this.nextNonSpace();
    if (token.type !== a && token.type !== b) this.unexpected(token, context);
    return token;
  }

  private unexpected(token: Token, context: string): never {
    if (token.type === Tok.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${this.options.name}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${token.val}${extra}`);
    }
    this.errorf(`unexpected ${tokenString(token)} in ${context}`);
  }

  // -------------------------------------------------------------------------------------------
  // Trees

  parse(): void {
    const root = new ListNode(this.peek().pos);
    while (this.peek().type !== Tok.EOF) {
      if (this.peek().type === Tok.LeftDelim) {
        const delimAt = this.i;
        this.next();
        if (this.nextNonSpace().type === Tok.Define) {
          this.parseDefinition();
          continue;
        }
        this.i = delimAt;
      }
      const n = this.textOrAction();
      if (n.kind === 'end' || n.kind === 'else') return this.errorf(`unexpected ${delimiterString(n)}`);
      root.nodes.push(n as Node);
    }
    this.add(this.options.name, root);
  }

  private add(name: string, root: ListNode): void {
    const existing = this.treeSet.get(name);
    if (existing === undefined || isEmptyTree(existing)) {
      this.treeSet.set(name, root);
      return;
    }
    if (!isEmptyTree(root)) this.errorf(`template: multiple definition of template ${JSON.stringify(name)}`);
  }

  private withFreshScope<T>(body: () => T): T {
    const [vars, rangeDepth] = [this.vars, this.rangeDepth];
    this.vars = ['$'];
    this.rangeDepth = 0;
    try {
      return body();
    } finally {
      this.vars = vars;
      this.rangeDepth = rangeDepth;
    }
  }

  private parseDefinition(): void {
    const context = 'define clause';
    const nameToken = this.expectOneOf(Tok.String, Tok.RawString, context);
    const name = this.unquote(nameToken.val);
    this.expect(Tok.RightDelim, context);
    this.withFreshScope(() => {
      const { list, next } = this.itemList();
      if (next.kind !== 'end') this.errorf(`unexpected ${delimiterString(next)} in ${context}`);
      this.add(name, list);
    });
  }

  private itemList(): { list: ListNode; next: Parsed } {
    const list = new ListNode(this.peekNonSpace().pos);
    while (this.peekNonSpace().type !== Tok.EOF) {
      const n = this.textOrAction();
      if (n.kind === 'end' || n.kind === 'else') return { list, next: n };
      list.nodes.push(n as Node);
    }
    this.errorf('unexpected EOF');
  }

  private textOrAction(): Parsed {
    const token = this.nextNonSpace();
    switch (token.type) {
      case Tok.Text:
        return new TextNode(token.pos, token.val);
      case Tok.LeftDelim: {
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
      default:
        this.unexpected(token, 'input');
    }
  }

  private action(): Parsed {
    const token = this.nextNonSpace();
    switch (token.type) {
      case Tok.Block:
        return this.blockControl();
      case Tok.Break:
        return this.breakControl(token);
      case Tok.Continue:
        return this.continueControl(token);
      case Tok.Else:
        return this.elseControl();
      case Tok.End:
        return this.endControl();
      case Tok.If:
        return this.ifControl();
      case Tok.Range:
        return this.rangeControl();
      case Tok.Template:
        return this.templateControl();
      case Tok.With:
        return this.withControl();
    }
    this.backup();
    const start = this.peek();
    // Variables declared by a plain action stay in scope until the enclosing {{end}}.
    return new ActionNode(start.pos, start.line, this.pipeline('command', Tok.RightDelim));
  }

  private breakControl(token: Token): Node {
    const next = this.nextNonSpace();
    if (next.type !== Tok.RightDelim) this.unexpected(next, '{{break}}');
    if (this.rangeDepth === 0) this.errorf('{{break}} outside {{range}}');
    return new BreakNode(token.pos, token.line);
  }

  private continueControl(token: Token): Node {
    const next = this.nextNonSpace();
    if (next.type !== Tok.RightDelim) this.unexpected(next, '{{continue}}');
    if (this.rangeDepth === 0) this.errorf('{{continue}} outside {{range}}');
    return new ContinueNode(token.pos, token.line);
  }

  private parseControl(context: string): { pipe: PipeNode; list: ListNode; elseList: ListNode | undefined } {
    const varCount = this.vars.length;
    try {
      const pipe = this.pipeline(context, Tok.RightDelim);
      if (context === 'range') this.rangeDepth++;
      const { list, next } = this.itemList();
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | undefined;
      if (next.kind === 'else') {
        if (context === 'if' && this.peek().type === Tok.If) {
          this.next();
          elseList = new ListNode(next.pos);
          elseList.nodes.push(this.ifControl());
        } else if (context === 'with' && this.peek().type === Tok.With) {
          this.next();
          elseList = new ListNode(next.pos);
          elseList.nodes.push(this.withControl());
        } else {
          const rest = this.itemList();
          elseList = rest.list;
          if (rest.next.kind !== 'end') this.errorf(`expected end; found ${delimiterString(rest.next)}`);
        }
      }
      return { pipe, list, elseList };
    } finally {
      this.vars.length = varCount;
    }
  }

  private ifControl(): Node {
    const { pipe, list, elseList } = this.parseControl('if');
    return new IfNode(pipe.pos, pipe.line, pipe, list, elseList);
  }

  private rangeControl(): Node {
    const { pipe, list, elseList } = this.parseControl('range');
    return new RangeNode(pipe.pos, pipe.line, pipe, list, elseList);
  }

  private withControl(): Node {
    const { pipe, list, elseList } = this.parseControl('with');
    return new WithNode(pipe.pos, pipe.line, pipe, list, elseList);
  }

  private endControl(): Parsed {
    const token = this.expect(Tok.RightDelim, 'end');
    return { kind: 'end', pos: token.pos, line: token.line };
  }

  private elseControl(): Parsed {
    const peek = this.peekNonSpace();
    // "{{else if …}}" and "{{else with …}}" leave the keyword for parseControl.
    if (peek.type === Tok.If || peek.type === Tok.With) return { kind: 'else', pos: peek.pos, line: peek.line };
    const token = this.expect(Tok.RightDelim, 'else');
    return { kind: 'else', pos: token.pos, line: token.line };
  }

  private blockControl(): Node {
    const context = 'block clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    const pipe = this.pipeline(context, Tok.RightDelim);
    this.withFreshScope(() => {
      const { list, next } = this.itemList();
      if (next.kind !== 'end') this.errorf(`unexpected ${delimiterString(next)} in ${context}`);
      this.add(name, list);
    });
    return new TemplateNode(token.pos, token.line, name, pipe);
  }

  private templateControl(): Node {
    const context = 'template clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    let pipe: PipeNode | undefined;
    if (this.nextNonSpace().type !== Tok.RightDelim) {
      this.backup();
      pipe = this.pipeline(context, Tok.RightDelim);
    }
    return new TemplateNode(token.pos, token.line, name, pipe);
  }

  private parseTemplateName(token: Token, context: string): string {
    if (token.type === Tok.String || token.type === Tok.RawString) return this.unquote(token.val);
    this.unexpected(token, context);
  }

  // -------------------------------------------------------------------------------------------
  // Pipelines

  private pipeline(context: string, end: Tok): PipeNode {
    const start = this.peekNonSpace();
    const pipe = new PipeNode(start.pos, start.line);
    for (;;) {
      const v = this.peekNonSpace();
      if (v.type !== Tok.Variable) break;
      this.next();
      const next = this.peekNonSpace();
      if (next.type === Tok.Assign || next.type === Tok.Declare) {
        pipe.isAssign = next.type === Tok.Assign;
        this.nextNonSpace();
        pipe.decl.push(new VariableNode(v.pos, v.val.split('.')));
        this.vars.push(v.val);
      } else if (next.type === Tok.Char && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(new VariableNode(v.pos, v.val.split('.')));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const after = this.peekNonSpace().type;
          if (after === Tok.Variable || after === Tok.RightDelim || after === Tok.RightParen) continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      } else {
        // "$x foo" or "$x": the variable is an operand, not a declaration.
        this.i = this.tokens.indexOf(v);
      }
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      if (token.type === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      switch (token.type) {
        case Tok.Bool:
        case Tok.CharConstant:
        case Tok.Complex:
        case Tok.Dot:
        case Tok.Field:
        case Tok.Identifier:
        case Tok.Number:
        case Tok.Nil:
        case Tok.RawString:
        case Tok.String:
        case Tok.Variable:
        case Tok.LeftParen:
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((cmd, i) => {
      const first = cmd.args[0]!.kind;
      if (first === 'bool' || first === 'dot' || first === 'nil' || first === 'number' || first === 'string') {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  private command(): CommandNode {
    const cmd = new CommandNode(this.peekNonSpace().pos);
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand !== undefined) cmd.args.push(operand);
      const token = this.next();
      if (token.type === Tok.Space) continue;
      if (token.type === Tok.RightDelim || token.type === Tok.RightParen) this.backup();
      else if (token.type !== Tok.Pipe) this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  private operand(): Arg | undefined {
    const node = this.term();
    if (node === undefined) return undefined;
    if (this.peek().type !== Tok.Field) return node;
    const chain = new ChainNode(this.peek().pos, node);
    while (this.peek().type === Tok.Field) chain.field.push(this.next().val.slice(1));
    switch (node.kind) {
      case 'field':
        return new FieldNode(chain.pos, [...node.ident, ...chain.field]);
      case 'variable':
        return new VariableNode(chain.pos, [...node.ident, ...chain.field]);
      case 'bool':
      case 'string':
      case 'number':
      case 'nil':
      case 'dot':
        this.errorf(`unexpected . after term ${JSON.stringify(String(node))}`);
      default:
        return chain;
    }
  }

  private term(): Arg | undefined {
    const token = this.nextNonSpace();
    switch (token.type) {
      case Tok.Identifier: {
        const fn = this.options.lookupFunction(token.val);
        if (fn === undefined) this.errorf(`function ${JSON.stringify(token.val)} not defined`);
        return new IdentifierNode(token.pos, token.val, fn);
      }
      case Tok.Dot:
        return new DotNode(token.pos);
      case Tok.Nil:
        return new NilNode(token.pos);
      case Tok.Variable:
        return this.useVar(token);
      case Tok.Field:
        return new FieldNode(token.pos, token.val.slice(1).split('.'));
      case Tok.Bool:
        return new BoolNode(token.pos, token.val === 'true');
      case Tok.CharConstant:
      case Tok.Complex:
      case Tok.Number:
        return this.newNumber(token);
      case Tok.LeftParen:
        return this.pipeline('parenthesized pipeline', Tok.RightParen);
      case Tok.String:
      case Tok.RawString:
        return new StringNode(token.pos, token.val, this.unquote(token.val));
    }
    this.backup();
    return undefined;
  }

  private useVar(token: Token): VariableNode {
    const ident = token.val.split('.');
    if (!this.vars.includes(ident[0]!)) this.errorf(`undefined variable ${JSON.stringify(ident[0])}`);
    return new VariableNode(token.pos, ident);
  }

  private unquote(quoted: string): string {
    try {
      return unquoteGoString(quoted);
    } catch {
      this.errorf('invalid syntax');
    }
  }

  private newNumber(token: Token): NumberNode {
    const text = token.val;
    const n = new NumberNode(token.pos, text);
    if (token.type === Tok.CharConstant) {
      const rune = unquoteChar(text);
      if (rune === undefined) this.errorf(`malformed character constant: ${text}`);
      n.isInt = n.isUint = n.isFloat = true;
      n.int64 = n.uint64 = BigInt(rune);
      n.float64 = rune;
      return n;
    }
    if (token.type === Tok.Complex || text.endsWith('i')) {
      this.errorf(`complex constants are not supported: ${JSON.stringify(text)}`);
    }
    const u = parseGoUint(text, 0);
    if (!('error' in u)) {
      n.isUint = true;
      n.uint64 = u.value;
    }
    const i = parseGoInt(text, 0);
    if (!('error' in i)) {
      n.isInt = true;
      n.int64 = i.value;
      if (i.value === 0n) {
        n.isUint = true;
        n.uint64 = 0n;
      }
    }
    if (n.isInt) {
      n.isFloat = true;
      n.float64 = Number(n.int64);
    } else if (n.isUint) {
      n.isFloat = true;
      n.float64 = Number(n.uint64);
    } else {
      const f = parseGoFloat(text);
      if (!('error' in f)) {
        if (!/[.eEpP]/.test(text)) this.errorf(`integer overflow: ${JSON.stringify(text)}`);
        n.isFloat = true;
        n.float64 = f.value;
        if (Number.isInteger(f.value) && f.value >= -(2 ** 63) && f.value < 2 ** 63) {
          n.isInt = true;
          n.int64 = BigInt(f.value);
        }
        if (Number.isInteger(f.value) && f.value >= 0 && f.value < 2 ** 64) {
          n.isUint = true;
          n.uint64 = BigInt(f.value);
        }
      }
    }
    if (!n.isInt && !n.isUint && !n.isFloat) this.errorf(`illegal number syntax: ${JSON.stringify(text)}`);
    return n;
  }
}

function tokenString(token: Token): string {
  if (token.type === Tok.EOF) return 'EOF';
  if (token.type === Tok.Error) return token.val;
  if (token.type > Tok.Keyword) return `<${token.val}>`;
  if (token.val.length > 10) return `${JSON.stringify(token.val.slice(0, 10))}...`;
  return JSON.stringify(token.val);
}

function delimiterString(parsed: Parsed): string {
  if (parsed.kind === 'end') return END_TEXT;
  if (parsed.kind === 'else') return ELSE_TEXT;
  return String(parsed);
}

const SIMPLE_CHAR_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  '\\': 92,
  "'": 39,
};

/** Go's `strconv.UnquoteChar` for a whole `'…'` constant; undefined when malformed. */
function unquoteChar(text: string): number | undefined {
  const body = text.slice(1, -1);
  if (text.length < 3 || text[text.length - 1] !== "'") return undefined;
  if (body[0] !== '\\') {
    const code = body.codePointAt(0)!;
    const width = code > 0xffff ? 2 : 1;
    if (body.length !== width || code === 0x27) return undefined;
    return code;
  }
  const c = body[1];
  if (c === undefined) return undefined;
  const simple = SIMPLE_CHAR_ESCAPES[c];
  if (simple !== undefined) return body.length === 2 ? simple : undefined;
  const hexDigits = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
  if (hexDigits > 0) {
    const digits = body.slice(2);
    if (digits.length !== hexDigits || !/^[0-9a-fA-F]+$/.test(digits)) return undefined;
    const value = parseInt(digits, 16);
    if (c !== 'x' && (value > 0x10ffff || (value >= 0xd800 && value < 0xe000))) return undefined;
    return value;
  }
  if (c >= '0' && c <= '7') {
    const digits = body.slice(1);
    if (digits.length !== 3 || !/^[0-7]{3}$/.test(digits)) return undefined;
    const value = parseInt(digits, 8);
    return value > 255 ? undefined : value;
  }
  return undefined;
}

/** Go's parse.IsEmptyTree for a list: only whitespace text (comments are already gone). */
export function isEmptyTree(list: ListNode): boolean {
  return list.nodes.every((n) => n.kind === 'text' && n.text.trim() === '');
}

/** Parses template text into its named trees. Throws TemplateParseError. */
export function parseTrees(text: string, options: ParseOptions): TreeSet {
  const tokens = lex(text, {
    breakOK: options.lookupFunction('break') === undefined,
    continueOK: options.lookupFunction('continue') === undefined,
  });
  const parser = new Parser(tokens, options);
  parser.parse();
  return parser.treeSet;
}
