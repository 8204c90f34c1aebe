import type { Position } from './errors.js';

/**
 * The syntax tree of the agent's block configuration language. Every node carries the position
 * of its first character so decoding errors can point at `file:line:col`.
 */
export type Expr =
  | { readonly kind: 'string'; readonly value: string; readonly pos: Position }
  | { readonly kind: 'number'; readonly value: number; readonly raw: string; readonly pos: Position }
  | { readonly kind: 'bool'; readonly value: boolean; readonly pos: Position }
  | { readonly kind: 'null'; readonly pos: Position }
  | {
      readonly kind: 'array';
      readonly items: readonly Expr[];
      readonly pos: Position;
      /** Position of the closing bracket; set by the parser, used by the formatter for layout. */
      readonly endPos?: Position;
    }
  | {
      readonly kind: 'object';
      readonly fields: readonly ObjectField[];
      readonly pos: Position;
      /** Position of the closing brace; set by the parser, used by the formatter for layout. */
      readonly endPos?: Position;
    }
  | { readonly kind: 'ident'; readonly name: string; readonly pos: Position }
  | { readonly kind: 'access'; readonly object: Expr; readonly name: string; readonly pos: Position }
  | { readonly kind: 'index'; readonly object: Expr; readonly index: Expr; readonly pos: Position }
  | { readonly kind: 'call'; readonly callee: Expr; readonly args: readonly Expr[]; readonly pos: Position }
  | { readonly kind: 'unary'; readonly op: '!' | '-'; readonly operand: Expr; readonly pos: Position }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr; readonly pos: Position }
  | { readonly kind: 'paren'; readonly inner: Expr; readonly pos: Position };

export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%' | '^';

export interface ObjectField {
  /**
   * The key. A quoted key is the text between its quotes exactly as written: the reference does
   * not interpret escapes in object keys, so `"a\tb"` is the four characters `a`, `\`, `t`, `b`.
   */
  readonly key: string;
  /** True when the key was written as a quoted string (`"quoted-key" = 1`). */
  readonly quoted: boolean;
  readonly keyPos: Position;
  readonly value: Expr;
}

export interface Attribute {
  readonly kind: 'attribute';
  readonly name: string;
  readonly value: Expr;
  readonly pos: Position;
  /** Position just past the value's last character; set by the parser. */
  readonly endPos?: Position;
}

export interface Block {
  readonly kind: 'block';
  /** Dotted name as written: `stage.json`, `logs.process`, `http`. */
  readonly name: string;
  /** The quoted label (`logs.process "default"` → `default`); undefined when absent. */
  readonly label?: string;
  readonly body: readonly Statement[];
  readonly pos: Position;
  /** Position of the closing brace. */
  readonly endPos: Position;
}

export type Statement = Attribute | Block;

/** A line (`//`) or block comment exactly as written, markers included. */
export interface Comment {
  readonly text: string;
  readonly pos: Position;
}

export interface ConfigFile {
  readonly file: string;
  readonly body: readonly Statement[];
  /** Every comment in the file, in source order; the formatter puts them back. */
  readonly comments?: readonly Comment[];
}
