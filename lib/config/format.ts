import { GoStringError, quoteGoString, unquoteGoString } from '../go/gostring.js';
import type { Attribute, Block, Comment, ConfigFile, Expr, ObjectField, Statement } from './ast.js';
import { isIdentifier } from './lexer.js';
import { BINARY_PRECEDENCE } from './parser.js';

/**
 * The canonical text of a configuration:
 *
 * - two-space indentation, one statement per line, `name = value`, `name "label" {` … `}`, and
 *   `name {}` for a block with nothing inside;
 * - the `=` of consecutive attributes (and of consecutive fields in a multi-line object) lined
 *   up; a blank line or a comment line ends such a run;
 * - single blank lines between statements kept, longer gaps shortened to one;
 * - strings re-quoted the way Go quotes them (raw backquoted strings become double-quoted);
 *   numbers as written;
 * - arrays and objects on one line when they were written on one line and fit in
 *   MAX_LINE_WIDTH columns, otherwise one element per line with a trailing comma;
 * - comments kept: a comment on its own line stays before what follows it, a comment after a
 *   statement or element on the same line stays at the end of that line; a comment inside a
 *   one-line expression moves to the end of its statement's line.
 */

export const MAX_LINE_WIDTH = 100;
const INDENT = '  ';

/**
 * Canonical text of a parsed configuration (comments included when the file carries them).
 * Formatting is idempotent: formatting the parse of the result gives the result again.
 *
 * @example formatConfig(parseConfig('a=1\nbb="x"', 'f')) // 'a  = 1\nbb = "x"\n'
 */
export function formatConfig(file: ConfigFile): string {
  const printer = new Printer(file.comments ?? []);
  const lastLine = printer.printBody(file.body, 0, undefined);
  return printer.text(lastLine);
}

/** Canonical text of one expression (at the start of a line, no comments). */
export function formatExpression(expr: Expr): string {
  return new Printer([]).render(expr, 0, 0);
}

function width(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function lastLineWidth(text: string): number {
  const nl = text.lastIndexOf('\n');
  return width(nl < 0 ? text : text.slice(nl + 1));
}

// Loops rather than spreads: a generated file can hold more elements than a call takes arguments.
function maxOf(first: number, rest: readonly number[]): number {
  let max = first;
  for (const n of rest) if (n > max) max = n;
  return max;
}

function pushAll(target: string[], items: readonly string[]): void {
  for (const item of items) target.push(item);
}

function indentOf(level: number): string {
  return INDENT.repeat(level);
}

function commentEndLine(c: Comment): number {
  let line = c.pos.line;
  for (const ch of c.text) if (ch === '\n') line++;
  return line;
}

/** The last source line an expression reaches (closing brackets included when known). */
function lastLine(expr: Expr): number {
  switch (expr.kind) {
    case 'array':
      return expr.endPos?.line ?? maxOf(expr.pos.line, expr.items.map(lastLine));
    case 'object':
      return (
        expr.endPos?.line ??
        maxOf(
          expr.pos.line,
          expr.fields.map((f) => lastLine(f.value)),
        )
      );
    case 'access':
      return lastLine(expr.object);
    case 'index':
      return Math.max(lastLine(expr.object), lastLine(expr.index));
    case 'call':
      return maxOf(lastLine(expr.callee), expr.args.map(lastLine));
    case 'unary':
      return lastLine(expr.operand);
    case 'binary':
      return Math.max(lastLine(expr.left), lastLine(expr.right));
    case 'paren':
      return lastLine(expr.inner);
    default:
      return expr.pos.line;
  }
}

function statementEndLine(stmt: Statement): number {
  return stmt.kind === 'block' ? stmt.endPos.line : (stmt.endPos?.line ?? lastLine(stmt.value));
}

/** How an object key is written so that it parses back to the same key. */
function keyText(field: ObjectField): string {
  const { key } = field;
  if (!field.quoted && isIdentifier(key)) return key;
  try {
    // Keys are kept verbatim between the quotes, so the key itself must be a valid body.
    unquoteGoString(`"${key}"`);
    return `"${key}"`;
  } catch (err) {
    if (!(err instanceof GoStringError)) throw err;
  }
  if (!key.includes('`')) return '`' + key + '`';
  return quoteGoString(key);
}

function blockHeader(block: Block): string {
  if (block.label === undefined) return block.name;
  return `${block.name} ${isIdentifier(block.label) ? `"${block.label}"` : quoteGoString(block.label)}`;
}

class Printer {
  private readonly lines: string[] = [];
  private nextComment = 0;
  private readonly breaks = new WeakMap<Expr, boolean>();

  constructor(private readonly comments: readonly Comment[]) {}

  /** The finished text; comments after the last statement come last. */
  text(lastSourceLine?: number): string {
    this.flushComments(Infinity, 0, lastSourceLine);
    return this.lines.length === 0 ? '' : this.lines.join('\n') + '\n';
  }

  // ---- comments ----

  private hasPendingBefore(offset: number): boolean {
    const c = this.comments[this.nextComment];
    return c !== undefined && c.pos.offset < offset;
  }

  /** Writes the comments before `offset` on their own lines; returns the last source line used. */
  private flushComments(offset: number, level: number, prevEnd: number | undefined, out = this.lines): number | undefined {
    while (this.hasPendingBefore(offset)) {
      const c = this.comments[this.nextComment++]!;
      if (out === this.lines && prevEnd !== undefined && c.pos.line > prevEnd + 1) out.push('');
      out.push(indentOf(level) + c.text);
      prevEnd = commentEndLine(c);
    }
    return prevEnd;
  }

  /**
   * After an item whose source ends on `endLine`: comments on that line (before `limit`) go to
   * the end of the item's last written line, earlier ones from inside it onto lines after it.
   */
  private trailingComments(endLine: number, limit: number, level: number, out: string[], itemLastLine: number): number {
    let end = endLine;
    const inner: string[] = [];
    while (this.hasPendingBefore(limit) && this.comments[this.nextComment]!.pos.line <= endLine) {
      const c = this.comments[this.nextComment++]!;
      if (c.pos.line === endLine) {
        out[itemLastLine] += ' ' + c.text;
        end = Math.max(end, commentEndLine(c));
      } else {
        inner.push(indentOf(level) + c.text);
      }
    }
    pushAll(out, inner);
    return end;
  }

  /** The comments strictly between two offsets (found by binary search: comments are sorted). */
  private *commentsBetween(fromOffset: number, toOffset: number): Generator<Comment> {
    let lo = 0;
    let hi = this.comments.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.comments[mid]!.pos.offset <= fromOffset) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.comments.length && this.comments[i]!.pos.offset < toOffset; i++) yield this.comments[i]!;
  }

  /** Whether a comment that ends up on a line of its own lies between two neighbouring items. */
  private commentLineBetween(fromOffset: number, toOffset: number, endLine: number): boolean {
    for (const c of this.commentsBetween(fromOffset, toOffset)) if (c.pos.line !== endLine) return true;
    return false;
  }

  private hasCommentWithin(fromOffset: number, toOffset: number): boolean {
    return !this.commentsBetween(fromOffset, toOffset).next().done;
  }

  // ---- statements ----

  /** Writes a body; returns the last source line it used. */
  printBody(body: readonly Statement[], level: number, closeOffset: number | undefined): number | undefined {
    const widths = this.alignmentWidths(body);
    let prevEnd: number | undefined;
    body.forEach((stmt, k) => {
      prevEnd = this.flushComments(stmt.pos.offset, level, prevEnd);
      if (prevEnd !== undefined && stmt.pos.line > prevEnd + 1) this.lines.push('');
      if (stmt.kind === 'attribute') this.printAttribute(stmt, level, widths[k]!);
      else this.printBlock(stmt, level);
      const itemLastLine = this.lines.length - 1;
      const limit = body[k + 1]?.pos.offset ?? closeOffset ?? Infinity;
      prevEnd = this.trailingComments(statementEndLine(stmt), limit, level, this.lines, itemLastLine);
    });
    if (closeOffset !== undefined) prevEnd = this.flushComments(closeOffset, level, prevEnd);
    return prevEnd;
  }

  /** For each attribute, the name width its `=` is aligned to (0 for blocks). */
  private alignmentWidths(body: readonly Statement[]): number[] {
    const widths = body.map(() => 0);
    let runStart = 0;
    const closeRun = (end: number): void => {
      const run = body.slice(runStart, end) as Attribute[];
      const longest = maxOf(
        0,
        run.map((a) => width(a.name)),
      );
      for (let k = runStart; k < end; k++) widths[k] = longest;
    };
    body.forEach((stmt, k) => {
      if (stmt.kind !== 'attribute') {
        closeRun(k);
        runStart = k + 1;
        return;
      }
      const prev = body[k - 1];
      if (prev === undefined || prev.kind !== 'attribute') return;
      const prevEnd = statementEndLine(prev);
      const separated = stmt.pos.line > prevEnd + 1 || this.commentLineBetween(prev.pos.offset, stmt.pos.offset, prevEnd);
      if (separated) {
        closeRun(k);
        runStart = k;
      }
    });
    closeRun(body.length);
    return widths;
  }

  private printAttribute(attr: Attribute, level: number, alignTo: number): void {
    const prefix = indentOf(level) + attr.name;
    const value = this.render(attr.value, level, width(prefix) + 3);
    const padding = ' '.repeat(Math.max(0, alignTo - width(attr.name)));
    pushAll(this.lines, `${prefix}${padding} = ${value}`.split('\n'));
  }

  private printBlock(block: Block, level: number): void {
    const header = indentOf(level) + blockHeader(block);
    if (block.body.length === 0 && !this.hasPendingBefore(block.endPos.offset)) {
      this.lines.push(`${header} {}`);
      return;
    }
    this.lines.push(`${header} {`);
    this.printBody(block.body, level + 1, block.endPos.offset);
    this.lines.push(indentOf(level) + '}');
  }

  // ---- expressions ----

  /** Whether an expression must span several lines (it was written so, or holds comments). */
  private mustBreak(expr: Expr): boolean {
    const known = this.breaks.get(expr);
    if (known !== undefined) return known;
    let result: boolean;
    switch (expr.kind) {
      case 'array':
      case 'object': {
        const children = expr.kind === 'array' ? expr.items : expr.fields.map((f) => f.value);
        const end = expr.endPos;
        const writtenOnSeveralLines = end !== undefined && end.line > expr.pos.line && children.length > 0;
        const holdsComments = end !== undefined && this.hasCommentWithin(expr.pos.offset, end.offset);
        result = writtenOnSeveralLines || holdsComments || children.some((c) => this.mustBreak(c));
        break;
      }
      case 'access':
        result = this.mustBreak(expr.object);
        break;
      case 'index':
        result = this.mustBreak(expr.object) || this.mustBreak(expr.index);
        break;
      case 'call':
        result = this.mustBreak(expr.callee) || expr.args.some((a) => this.mustBreak(a));
        break;
      case 'unary':
        result = this.mustBreak(expr.operand);
        break;
      case 'binary':
        result = this.mustBreak(expr.left) || this.mustBreak(expr.right);
        break;
      case 'paren':
        result = this.mustBreak(expr.inner);
        break;
      default:
        result = false;
    }
    this.breaks.set(expr, result);
    return result;
  }

  /**
   * The text of `expr` starting at column `col` of a line indented `level` times; lines after
   * the first carry their own indentation.
   */
  render(expr: Expr, level: number, col: number): string {
    switch (expr.kind) {
      case 'array':
      case 'object': {
        if (!this.mustBreak(expr)) {
          const inline = this.inline(expr);
          if (col + width(inline) <= MAX_LINE_WIDTH) return inline;
        }
        return expr.kind === 'array' ? this.multilineArray(expr, level) : this.multilineObject(expr, level);
      }
      case 'access': {
        const object = this.operand(expr.object, level, col, needsParensAsPostfixObject(expr.object));
        return `${object}${expr.object.kind === 'number' ? ' ' : ''}.${expr.name}`;
      }
      case 'index': {
        const object = this.operand(expr.object, level, col, needsParensAsPostfixObject(expr.object));
        const index = this.render(expr.index, level, this.colAfter(object, col) + 1);
        return `${object}[${index}]`;
      }
      case 'call': {
        let text = this.operand(expr.callee, level, col, needsParensAsPostfixObject(expr.callee)) + '(';
        expr.args.forEach((arg, k) => {
          if (k > 0) text += ', ';
          text += this.render(arg, level, this.colAfter(text, col));
        });
        return text + ')';
      }
      case 'unary': {
        const wrap = expr.operand.kind === 'binary';
        return expr.op + this.operand(expr.operand, level, col + 1, wrap);
      }
      case 'binary': {
        const precedence = BINARY_PRECEDENCE[expr.op];
        const rightAssociative = expr.op === '^';
        const left = this.operand(expr.left, level, col, childPrecedence(expr.left) < precedence + (rightAssociative ? 1 : 0));
        let text = `${left} ${expr.op} `;
        text += this.operand(
          expr.right,
          level,
          this.colAfter(text, col),
          childPrecedence(expr.right) < precedence + (rightAssociative ? 0 : 1),
        );
        return text;
      }
      case 'paren':
        return `(${this.render(expr.inner, level, col + 1)})`;
      default:
        return this.inline(expr);
    }
  }

  private operand(expr: Expr, level: number, col: number, wrap: boolean): string {
    return wrap ? `(${this.render(expr, level, col + 1)})` : this.render(expr, level, col);
  }

  private colAfter(text: string, startCol: number): number {
    return text.includes('\n') ? lastLineWidth(text) : startCol + width(text);
  }

  /** One-line text, ignoring how the expression was laid out. */
  private inline(expr: Expr): string {
    switch (expr.kind) {
      case 'string':
        return quoteGoString(expr.value);
      case 'number':
        return expr.raw;
      case 'bool':
        return String(expr.value);
      case 'null':
        return 'null';
      case 'ident':
        return expr.name;
      case 'array':
        return `[${expr.items.map((item) => this.inline(item)).join(', ')}]`;
      case 'object':
        return expr.fields.length === 0 ? '{}' : `{ ${expr.fields.map((f) => `${keyText(f)} = ${this.inline(f.value)}`).join(', ')} }`;
      default:
        // Only arrays and objects ever break, and they are handled above.
        return this.render(expr, 0, -Infinity);
    }
  }

  private multilineArray(expr: Extract<Expr, { kind: 'array' }>, level: number): string {
    const inner = level + 1;
    const out: string[] = [];
    const end = expr.endPos?.offset;
    expr.items.forEach((item, k) => {
      this.flushComments(item.pos.offset, inner, undefined, out);
      const text = indentOf(inner) + this.render(item, inner, width(indentOf(inner))) + ',';
      pushAll(out, text.split('\n'));
      const limit = expr.items[k + 1]?.pos.offset ?? end ?? -Infinity;
      this.trailingComments(lastLine(item), limit, inner, out, out.length - 1);
    });
    if (end !== undefined) this.flushComments(end, inner, undefined, out);
    return out.length === 0 ? '[]' : `[\n${out.join('\n')}\n${indentOf(level)}]`;
  }

  private multilineObject(expr: Extract<Expr, { kind: 'object' }>, level: number): string {
    const inner = level + 1;
    const out: string[] = [];
    const end = expr.endPos?.offset;
    const keys = expr.fields.map(keyText);
    const widths = this.fieldAlignment(expr.fields, keys);
    expr.fields.forEach((field, k) => {
      this.flushComments(field.keyPos.offset, inner, undefined, out);
      const prefix = indentOf(inner) + keys[k]!;
      const value = this.render(field.value, inner, width(prefix) + 3);
      const padding = ' '.repeat(Math.max(0, widths[k]! - width(keys[k]!)));
      pushAll(out, `${prefix}${padding} = ${value},`.split('\n'));
      const limit = expr.fields[k + 1]?.keyPos.offset ?? end ?? -Infinity;
      this.trailingComments(lastLine(field.value), limit, inner, out, out.length - 1);
    });
    if (end !== undefined) this.flushComments(end, inner, undefined, out);
    return out.length === 0 ? '{}' : `{\n${out.join('\n')}\n${indentOf(level)}}`;
  }

  private fieldAlignment(fields: readonly ObjectField[], keys: readonly string[]): number[] {
    const widths = fields.map(() => 0);
    let runStart = 0;
    const closeRun = (end: number): void => {
      const longest = maxOf(0, keys.slice(runStart, end).map(width));
      for (let k = runStart; k < end; k++) widths[k] = longest;
    };
    fields.forEach((field, k) => {
      const prev = fields[k - 1];
      if (prev === undefined) return;
      if (this.commentLineBetween(prev.keyPos.offset, field.keyPos.offset, lastLine(prev.value))) {
        closeRun(k);
        runStart = k;
      }
    });
    closeRun(fields.length);
    return widths;
  }
}

/** Precedence of an operand: binary operators by table, everything else binds tighter. */
function childPrecedence(expr: Expr): number {
  return expr.kind === 'binary' ? BINARY_PRECEDENCE[expr.op] : 7;
}

function needsParensAsPostfixObject(expr: Expr): boolean {
  return expr.kind === 'binary' || expr.kind === 'unary';
}
