/**
 * Parse tree of a template, shaped after Go's `text/template/parse` nodes. `toString()` gives
 * Go's `Node.String()`, which error messages quote as their context (`at <.x>`).
 */

import type { TemplateFunc } from './func.js';

export type Node = TextNode | ActionNode | IfNode | WithNode | RangeNode | TemplateNode | BreakNode | ContinueNode | ListNode;

/** An operand inside a command. */
export type Arg = FieldNode | ChainNode | IdentifierNode | VariableNode | DotNode | NilNode | BoolNode | NumberNode | StringNode | PipeNode;

export class ListNode {
  readonly kind = 'list';
  readonly nodes: Node[] = [];
  constructor(readonly pos: number) {}
  toString(): string {
    return this.nodes.map(String).join('');
  }
}

export class TextNode {
  readonly kind = 'text';
  constructor(
    readonly pos: number,
    readonly text: string,
  ) {}
  toString(): string {
    return this.text;
  }
}

export class PipeNode {
  readonly kind = 'pipe';
  readonly decl: VariableNode[] = [];
  readonly cmds: CommandNode[] = [];
  isAssign = false;
  constructor(
    readonly pos: number,
    readonly line: number,
  ) {}
  toString(): string {
    let s = '';
    if (this.decl.length > 0) s = this.decl.map(String).join(', ') + (this.isAssign ? ' = ' : ' := ');
    return s + this.cmds.map(String).join(' | ');
  }
}

export class CommandNode {
  readonly kind = 'command';
  readonly args: Arg[] = [];
  constructor(readonly pos: number) {}
  toString(): string {
    return this.args.map((a) => (a.kind === 'pipe' ? `(${a})` : String(a))).join(' ');
  }
}

export class ActionNode {
  readonly kind = 'action';
  constructor(
    readonly pos: number,
    readonly line: number,
    readonly pipe: PipeNode,
  ) {}
  toString(): string {
    return `{{${this.pipe}}}`;
  }
}

abstract class BranchNode {
  constructor(
    readonly pos: number,
    readonly line: number,
    readonly pipe: PipeNode,
    readonly list: ListNode,
    readonly elseList: ListNode | undefined,
  ) {}
  protected branch(name: string): string {
    const elsePart = this.elseList ? `{{else}}${this.elseList}` : '';
    return `{{${name} ${this.pipe}}}${this.list}${elsePart}{{end}}`;
  }
}

export class IfNode extends BranchNode {
  readonly kind = 'if';
  override toString(): string {
    return this.branch('if');
  }
}

export class WithNode extends BranchNode {
  readonly kind = 'with';
  override toString(): string {
    return this.branch('with');
  }
}

export class RangeNode extends BranchNode {
  readonly kind = 'range';
  override toString(): string {
    return this.branch('range');
  }
}

export class TemplateNode {
  readonly kind = 'template';
  constructor(
    readonly pos: number,
    readonly line: number,
    readonly name: string,
    readonly pipe: PipeNode | undefined,
  ) {}
  toString(): string {
    return this.pipe ? `{{template ${JSON.stringify(this.name)} ${this.pipe}}}` : `{{template ${JSON.stringify(this.name)}}}`;
  }
}

export class BreakNode {
  readonly kind = 'break';
  constructor(
    readonly pos: number,
    readonly line: number,
  ) {}
  toString(): string {
    return '{{break}}';
  }
}

export class ContinueNode {
  readonly kind = 'continue';
  constructor(
    readonly pos: number,
    readonly line: number,
  ) {}
  toString(): string {
    return '{{continue}}';
  }
}

export class FieldNode {
  readonly kind = 'field';
  constructor(
    readonly pos: number,
    readonly ident: readonly string[],
  ) {}
  toString(): string {
    return this.ident.map((id) => '.' + id).join('');
  }
}

export class ChainNode {
  readonly kind = 'chain';
  readonly field: string[] = [];
  constructor(
    readonly pos: number,
    readonly node: Arg,
  ) {}
  toString(): string {
    const base = this.node.kind === 'pipe' ? `(${this.node})` : String(this.node);
    return base + this.field.map((f) => '.' + f).join('');
  }
}

export class IdentifierNode {
  readonly kind = 'identifier';
  constructor(
    readonly pos: number,
    readonly name: string,
    /** The function the name resolved to at parse time (the function map is fixed per template). */
    readonly fn: TemplateFunc | undefined = undefined,
  ) {}
  toString(): string {
    return this.name;
  }
}

export class VariableNode {
  readonly kind = 'variable';
  constructor(
    readonly pos: number,
    readonly ident: readonly string[],
  ) {}
  toString(): string {
    return this.ident.join('.');
  }
}

export class DotNode {
  readonly kind = 'dot';
  constructor(readonly pos: number) {}
  toString(): string {
    return '.';
  }
}

export class NilNode {
  readonly kind = 'nil';
  constructor(readonly pos: number) {}
  toString(): string {
    return 'nil';
  }
}

export class BoolNode {
  readonly kind = 'bool';
  constructor(
    readonly pos: number,
    readonly value: boolean,
  ) {}
  toString(): string {
    return this.value ? 'true' : 'false';
  }
}

/** A numeric constant with every interpretation Go's parser derives from its text. */
export class NumberNode {
  readonly kind = 'number';
  isInt = false;
  isUint = false;
  isFloat = false;
  isComplex = false;
  int64 = 0n;
  uint64 = 0n;
  float64 = 0;
  constructor(
    readonly pos: number,
    readonly text: string,
  ) {}
  toString(): string {
    return this.text;
  }
}

export class StringNode {
  readonly kind = 'string';
  constructor(
    readonly pos: number,
    readonly quoted: string,
    readonly text: string,
  ) {}
  toString(): string {
    return this.quoted;
  }
}
