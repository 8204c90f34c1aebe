/**
 * The template executor: a port of Go's `text/template/exec.go` over the value model of
 * `values.ts`. It keeps Go's evaluation order, argument conversion rules (untyped constants,
 * missing values, wrong types), variable scoping and error texts.
 *
 * Unlike Go's, every render runs on an execution budget (see `budget.ts`): nodes walked, range
 * iterations and function calls count as steps, and the output is measured as it grows.
 */
import type {
  Arg,
  ChainNode,
  CommandNode,
  FieldNode,
  IdentifierNode,
  ListNode,
  Node,
  NumberNode,
  PipeNode,
  RangeNode,
  TemplateNode,
  VariableNode,
} from './ast.js';
import {
  BudgetExceededError,
  BudgetMeter,
  DEFAULT_EXECUTION_BUDGET,
  type ExecutionBudget,
  monotonicClock,
  type RenderClock,
  utf8Length,
  withMeter,
} from './budget.js';
import { type BudgetLimit, GoError, TemplateBudgetError, TemplateExecError } from './errors.js';
import type { TemplateFunc } from './func.js';
import { formatValue } from './gofmt.js';
import type { TreeSet } from './parser.js';
import {
  GoInt,
  GoObject,
  InterfaceValue,
  T_REFLECT_VALUE,
  T_STRING,
  goInt,
  intOf,
  isGoMap,
  isTrue,
  mapGet,
  sortedKeys,
  typeName,
  typeOfValue,
  type GoMethod,
  type GoType,
} from './values.js';

/** Go's missingVal: "no final value from the previous pipeline stage". */
const NO_FINAL: unique symbol = Symbol('no final value');
type Final = unknown | typeof NO_FINAL;

const enum Signal {
  None,
  Break,
  Continue,
}

const MAX_EXEC_DEPTH = 100_000;
const NO_ARGS: readonly Arg[] = [];
/** Marks a field chain whose first receiver is known to sit in an interface. */
const IN_INTERFACE: unique symbol = Symbol('in interface');

interface Variable {
  readonly name: string;
  value: unknown;
  /** Set when the value sits in an interface (a range element), which Go's messages name. */
  fromInterface?: boolean;
}

/** What the executor needs from a parsed template. */
export interface Program {
  readonly text: string;
  readonly parseName: string;
  readonly trees: TreeSet;
  readonly lookupFunc: (name: string) => TemplateFunc | undefined;
  /** What one render may spend; DEFAULT_EXECUTION_BUDGET when absent. */
  readonly budget?: ExecutionBudget;
  /** The clock a render's time is read from; the monotonic clock when absent. */
  readonly now?: RenderClock;
}

type Callable = TemplateFunc | GoMethod;

class ExecState {
  out = '';
  node: { pos: number; toString(): string } | undefined;
  /** Whether dot is an element of an interface slice/map (only error texts depend on it). */
  private dotFromInterface = false;
  /** The map the last field chain read its final value from (for Go's interface rules). */
  private lastFieldContainer: unknown;
  private vars: Variable[];
  private depth = 0;
  /** The output measured so far: its first `measuredUnits` code units hold `measuredBytes` bytes. */
  private measuredUnits = 0;
  private measuredBytes = 0;

  constructor(
    private readonly program: Program,
    private tmplName: string,
    data: unknown,
    readonly meter: BudgetMeter,
  ) {
    this.vars = [{ name: '$', value: data }];
  }

  // -------------------------------------------------------------------------------------------
  // Errors

  /** Throws Go's ExecError (a TemplateBudgetError when the render went over the `overBudget` limit). */
  errorf(message: string, overBudget?: BudgetLimit): never {
    const name = this.tmplName;
    let text = `template: ${name}: ${message}`;
    if (this.node !== undefined) {
      const { location, context } = this.errorContext(this.node);
      text = `template: ${location}: executing ${JSON.stringify(name)} at <${context}>: ${message}`;
    }
    throw overBudget === undefined ? new TemplateExecError(text) : new TemplateBudgetError(text, overBudget);
  }

  private errorContext(node: { pos: number; toString(): string }): { location: string; context: string } {
    const text = this.program.text.slice(0, node.pos);
    const lastNewline = text.lastIndexOf('\n');
    const line = 1 + (text.match(/\n/g)?.length ?? 0);
    const column = byteCount(lastNewline < 0 ? text : text.slice(lastNewline + 1));
    return { location: `${this.program.parseName}:${line}:${column}`, context: String(node) };
  }

  private at(node: { pos: number; toString(): string }): void {
    this.node = node;
  }

  // -------------------------------------------------------------------------------------------
  // Variables

  private mark(): number {
    return this.vars.length;
  }

  private pop(mark: number): void {
    if (this.vars.length !== mark) this.vars.length = mark;
  }

  private push(name: string, value: unknown): void {
    this.vars.push({ name, value });
  }

  private setVar(name: string, value: unknown): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        this.vars[i]!.fromInterface = false;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  private setTopVar(n: number, value: unknown, fromInterface = false): void {
    const variable = this.vars[this.vars.length - n]!;
    variable.value = value;
    variable.fromInterface = fromInterface;
  }

  private lookupVar(name: string): Variable {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) return this.vars[i]!;
    }
    this.errorf(`undefined variable: ${name}`);
  }

  // -------------------------------------------------------------------------------------------
  // Output

  private write(text: string): void {
    this.out += text;
    // Bytes are only counted once the output could be over the limit at 3 bytes a code unit.
    if (this.meter.mayExceedBytes(this.out.length)) {
      this.measuredBytes += utf8Length(this.out, this.measuredUnits);
      this.measuredUnits = this.out.length;
      const max = this.meter.budget.maxOutputBytes;
      if (this.measuredBytes > max) this.errorf(`execution budget exceeded: output of more than ${max} bytes`, 'size');
    }
  }

  // -------------------------------------------------------------------------------------------
  // Walking

  walkList(dot: unknown, list: ListNode): Signal {
    const nodes = list.nodes;
    for (let i = 0; i < nodes.length; i++) {
      const signal = this.walk(dot, nodes[i]!);
      if (signal !== Signal.None) return signal;
    }
    return Signal.None;
  }

  private walk(dot: unknown, node: Node): Signal {
    this.meter.spend();
    switch (node.kind) {
      case 'text':
        this.write(node.text);
        return Signal.None;
      case 'action': {
        this.at(node);
        const value = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, value);
        return Signal.None;
      }
      case 'if':
      case 'with': {
        this.at(node);
        const mark = this.mark();
        const value = this.evalPipeline(dot, node.pipe);
        let signal = Signal.None;
        if (isTrue(value)) {
          if (node.kind === 'with') {
            const saved = this.dotFromInterface;
            this.dotFromInterface = false;
            signal = this.walkList(value, node.list);
            this.dotFromInterface = saved;
          } else {
            signal = this.walkList(dot, node.list);
          }
        } else if (node.elseList) signal = this.walkList(dot, node.elseList);
        this.pop(mark);
        return signal;
      }
      case 'range':
        this.walkRange(dot, node);
        return Signal.None;
      case 'template':
        this.walkTemplate(dot, node);
        return Signal.None;
      case 'break':
        return Signal.Break;
      case 'continue':
        return Signal.Continue;
      case 'list':
        return this.walkList(dot, node);
    }
  }

  private printValue(node: Node, value: unknown): void {
    this.at(node);
    if (value === undefined) {
      this.write('<no value>');
      return;
    }
    if (typeof value === 'string') {
      this.write(value);
      return;
    }
    if (typeof value === 'function') this.errorf(`can't print ${node} of type ${typeName(value)}`);
    this.write(formatValue(value));
  }

  private walkRange(dot: unknown, r: RangeNode): void {
    this.at(r);
    const outer = this.mark();
    const value = this.evalPipeline(dot, r.pipe);
    const mark = this.mark();
    const decl = r.pipe.decl;
    const elemFromInterface = typeOfValue(value)?.elem?.kind === 'interface';
    const savedDotFromInterface = this.dotFromInterface;
    let stop = false;
    const oneIteration = (index: unknown, elem: unknown): void => {
      this.meter.spend();
      if (decl.length > 0) {
        if (r.pipe.isAssign) {
          this.setVar(decl[0]!.ident[0]!, decl.length > 1 ? index : elem);
        } else {
          this.setTopVar(1, elem, elemFromInterface);
        }
      }
      if (decl.length > 1) {
        if (r.pipe.isAssign) this.setVar(decl[1]!.ident[0]!, elem);
        else this.setTopVar(2, index);
      }
      this.dotFromInterface = elemFromInterface;
      const signal = this.walkList(elem, r.list);
      this.dotFromInterface = savedDotFromInterface;
      this.pop(mark);
      if (signal === Signal.Break) stop = true;
    };
    let ran = false;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length && !stop; i++) {
        ran = true;
        oneIteration(intOf(i), value[i]);
      }
    } else if (value instanceof GoInt) {
      if (decl.length > 1) this.errorf(`can't use ${formatValue(value)} to iterate over more than one variable`);
      for (let i = 0n; i < value.value && !stop; i++) {
        ran = true;
        const v = goInt(value.type, i);
        oneIteration(v, v);
      }
    } else if (isGoMap(value)) {
      const keys = sortedKeys(value);
      for (let i = 0; i < keys.length && !stop; i++) {
        ran = true;
        oneIteration(keys[i], value[keys[i]!]);
      }
    } else if (value === undefined || value === null) {
      // A missing or nil value ranges over nothing (Go's reflect.Invalid case).
    } else {
      this.errorf(`range can't iterate over ${formatValue(value)}`);
    }
    if (!ran && r.elseList) this.walkList(dot, r.elseList);
    this.pop(outer);
  }

  private walkTemplate(dot: unknown, t: TemplateNode): void {
    this.at(t);
    const tree = this.program.trees.get(t.name);
    if (tree === undefined) this.errorf(`template ${JSON.stringify(t.name)} not defined`);
    if (this.depth >= MAX_EXEC_DEPTH) this.errorf(`exceeded maximum template depth (${MAX_EXEC_DEPTH})`);
    const value = t.pipe ? this.evalPipeline(dot, t.pipe) : undefined;
    const saved = { vars: this.vars, name: this.tmplName, dotFromInterface: this.dotFromInterface };
    this.vars = [{ name: '$', value }];
    this.tmplName = t.name;
    this.dotFromInterface = false;
    this.depth++;
    try {
      this.walkList(value, tree);
    } finally {
      this.depth--;
      this.vars = saved.vars;
      this.tmplName = saved.name;
      this.dotFromInterface = saved.dotFromInterface;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Pipelines and commands

  evalPipeline(dot: unknown, pipe: PipeNode): unknown {
    this.at(pipe);
    let value: Final = NO_FINAL;
    const cmds = pipe.cmds;
    for (let i = 0; i < cmds.length; i++) {
      value = this.evalCommand(dot, cmds[i]!, value);
      // Go digs a nil out of its interface here, which turns it into "no value".
      if (value === null) value = undefined;
    }
    const decl = pipe.decl;
    for (let i = 0; i < decl.length; i++) {
      if (pipe.isAssign) this.setVar(decl[i]!.ident[0]!, value);
      else this.push(decl[i]!.ident[0]!, value);
    }
    return value;
  }

  private evalCommand(dot: unknown, cmd: CommandNode, final: Final): unknown {
    const first = cmd.args[0]!;
    switch (first.kind) {
      case 'field':
        return this.evalFieldNode(dot, first, cmd.args, final);
      case 'chain':
        return this.evalChainNode(dot, first, cmd.args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.kind) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        this.errorf('nil is not a command');
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return first.text;
    }
  }

  private notAFunction(args: readonly Arg[] | undefined, final: Final): void {
    if ((args !== undefined && args.length > 1) || final !== NO_FINAL) {
      this.errorf(`can't give argument to non-function ${args?.[0]}`);
    }
  }

  private idealConstant(n: NumberNode): unknown {
    this.at(n);
    const text = n.text;
    const isHexInt = text.length > 2 && text[0] === '0' && (text[1] === 'x' || text[1] === 'X') && !/[pP]/.test(text);
    const isRuneInt = text[0] === "'";
    if (n.isFloat && !isHexInt && !isRuneInt && /[.eEpP]/.test(text)) return n.float64;
    if (n.isInt) return intOf(n.int64);
    if (n.isUint) this.errorf(`${text} overflows int`);
    return undefined;
  }

  private evalFieldNode(dot: unknown, field: FieldNode, args: readonly Arg[] | undefined, final: Final): unknown {
    this.at(field);
    return this.evalFieldChain(dot, dot, field, field.ident, args, final, this.dotFromInterface);
  }

  private evalChainNode(dot: unknown, chain: ChainNode, args: readonly Arg[] | undefined, final: Final): unknown {
    this.at(chain);
    if (chain.node.kind === 'nil') this.errorf(`indirection through explicit nil in ${chain}`);
    const receiver = this.evalArg(dot, undefined, chain.node);
    return this.evalFieldChain(dot, receiver, chain, chain.field, args, final, false);
  }

  private evalVariableNode(dot: unknown, variable: VariableNode, args: readonly Arg[] | undefined, final: Final): unknown {
    this.at(variable);
    const found = this.lookupVar(variable.ident[0]!);
    if (variable.ident.length === 1) {
      this.notAFunction(args, final);
      return found.value;
    }
    return this.evalFieldChain(dot, found.value, variable, variable.ident.slice(1), args, final, found.fromInterface === true);
  }

  private evalFieldChain(
    dot: unknown,
    receiver: unknown,
    node: { pos: number; toString(): string },
    ident: readonly string[],
    args: readonly Arg[] | undefined,
    final: Final,
    fromInterface: boolean,
  ): unknown {
    const n = ident.length;
    // Whether a receiver sits in an interface only matters for error texts, so it is worked out
    // from the container it came from, and only when needed.
    let container: unknown = fromInterface ? IN_INTERFACE : undefined;
    for (let i = 0; i < n - 1; i++) {
      const next = this.evalField(dot, ident[i]!, node, undefined, NO_FINAL, receiver, container);
      container = receiver;
      receiver = next;
    }
    this.lastFieldContainer = receiver;
    return this.evalField(dot, ident[n - 1]!, node, args, final, receiver, container);
  }

  private evalField(
    dot: unknown,
    fieldName: string,
    node: { pos: number; toString(): string },
    args: readonly Arg[] | undefined,
    final: Final,
    receiver: unknown,
    container: unknown,
  ): unknown {
    if (receiver === undefined) return undefined;
    if (receiver === null) this.errorf(`nil pointer evaluating interface {}.${fieldName}`);
    const hasArgs = (args !== undefined && args.length > 1) || final !== NO_FINAL;
    if (receiver instanceof GoObject) {
      const method = receiver.method(fieldName);
      if (method !== undefined) return this.evalCall(dot, method, fieldName, args, final, node);
      const field = receiver.field(fieldName);
      if (field !== undefined) {
        if (hasArgs) this.errorf(`${fieldName} has arguments but cannot be invoked as function`);
        return field.value;
      }
      this.errorf(`can't evaluate field ${fieldName} in type ${receiver.goType.name}`);
    }
    if (isGoMap(receiver)) {
      if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
      return mapGet(receiver, fieldName);
    }
    const inInterface = container === IN_INTERFACE || holdsInterfaces(container);
    this.errorf(`can't evaluate field ${fieldName} in type ${inInterface ? 'interface {}' : typeName(receiver)}`);
  }

  private evalFunction(
    dot: unknown,
    node: IdentifierNode,
    cmd: { pos: number; toString(): string },
    args: readonly Arg[] | undefined,
    final: Final,
  ): unknown {
    this.at(node);
    const fn = node.fn ?? this.program.lookupFunc(node.name);
    if (fn === undefined) this.errorf(`${JSON.stringify(node.name)} is not a defined function`);
    return this.evalCall(dot, fn, node.name, args, final, cmd);
  }

  private evalCall(
    dot: unknown,
    fn: Callable,
    name: string,
    allArgs: readonly Arg[] | undefined,
    final: Final,
    node: { pos: number; toString(): string },
  ): unknown {
    const args = allArgs === undefined || allArgs.length <= 1 ? NO_ARGS : allArgs.slice(1);
    const params = fn.params;
    const variadic = fn.variadic === true;
    const hasFinal = final !== NO_FINAL;
    const numIn = args.length + (hasFinal ? 1 : 0);
    let numFixed = args.length;
    if (variadic) {
      numFixed = params.length - 1;
      if (numIn < numFixed) {
        this.errorf(`wrong number of args for ${name}: want at least ${params.length - 1} got ${args.length}`);
      }
    } else if (numIn !== params.length) {
      this.errorf(`wrong number of args for ${name}: want ${params.length} got ${numIn}`);
    }

    const special = 'special' in fn ? fn.special : undefined;
    if (special === 'and' || special === 'or') {
      let v: unknown;
      for (const arg of args) {
        v = this.evalArg(dot, T_REFLECT_VALUE, arg);
        if (isTrue(v) === (special === 'or')) return v;
      }
      if (hasFinal) v = this.validateType(final, T_REFLECT_VALUE);
      return v;
    }

    const argv: unknown[] = new Array(numIn);
    let i = 0;
    for (; i < numFixed && i < args.length; i++) argv[i] = this.evalArg(dot, params[i]!, args[i]!);
    if (variadic) {
      const elemType = params[params.length - 1]!;
      for (; i < args.length; i++) argv[i] = this.evalArg(dot, elemType, args[i]!);
    }
    if (hasFinal) {
      let t = params[params.length - 1]!;
      if (variadic && numIn - 1 < numFixed) t = params[numIn - 1]!;
      argv[i] = this.validateType(final, t);
    }

    if (special === 'slice') {
      for (let k = 1; k < args.length; k++) {
        if (this.argHeldInInterface(dot, args[k]!)) argv[k] = new InterfaceValue(argv[k]);
      }
    }

    if (special === 'call') {
      // Go names the callee by its node, or by reflect.Value.String() of a piped-in value.
      const callee = args.length > 0 ? String(args[0]) : typeof final === 'string' ? final : `<${typeName(final)} Value>`;
      return this.callFunctionValue(name, node, callee, argv[0], argv.slice(1));
    }

    const impl = ('fn' in fn ? fn.fn : fn.call) as (...a: unknown[]) => unknown;
    try {
      const result = impl(...argv);
      this.meter.chargeCall(argv, result);
      return result;
    } catch (err) {
      if (err instanceof TemplateExecError) throw err;
      this.at(node);
      this.errorf(`error calling ${name}: ${errorMessage(err)}`, err instanceof BudgetExceededError ? err.limit : undefined);
    }
  }

  /** Go's `call` built-in over a function value taken from the data. */
  private callFunctionValue(
    name: string,
    node: { pos: number; toString(): string },
    callee: string,
    fn: unknown,
    args: unknown[],
  ): unknown {
    const fail = (message: string): never => {
      this.at(node);
      this.errorf(`error calling ${name}: ${message}`);
    };
    if (fn === undefined || fn === null) fail('call of nil');
    if (typeof fn !== 'function') fail(`non-function ${callee} of type ${typeName(fn)}`);
    try {
      return (fn as (...a: unknown[]) => unknown)(...args.map(toJsArgument));
    } catch (err) {
      if (err instanceof TemplateExecError) throw err;
      return fail(errorMessage(err));
    }
  }

  // -------------------------------------------------------------------------------------------
  // Arguments

  /** Whether an already evaluated argument node yields a value still wrapped in an interface. */
  private argHeldInInterface(dot: unknown, n: Arg): boolean {
    switch (n.kind) {
      case 'dot':
        return this.dotFromInterface;
      case 'field':
        this.evalFieldNode(dot, n, [n], NO_FINAL);
        return holdsInterfaces(this.lastFieldContainer);
      case 'variable':
        if (n.ident.length === 1) return this.lookupVar(n.ident[0]!).fromInterface === true;
        this.evalVariableNode(dot, n, undefined, NO_FINAL);
        return holdsInterfaces(this.lastFieldContainer);
    }
    return false;
  }

  /** Go's validateType: checks (and for nil, converts) a computed value for a parameter. */
  private validateType(value: unknown, typ: GoType | undefined): unknown {
    if (typ === undefined || typ === T_REFLECT_VALUE) return value;
    if (typ === T_STRING && typeof value === 'string') return value;
    if (value === undefined) {
      if (canBeNil(typ)) return null;
      this.errorf(`invalid value; expected ${typ.name}`);
    }
    if (typ.kind === 'interface') return value;
    if (value === null) this.errorf(`wrong type for value; expected ${typ.name}; got interface {}`);
    const actual = typeOfValue(value);
    if (actual === typ || actual?.name === typ.name) return value;
    this.errorf(`wrong type for value; expected ${typ.name}; got ${actual?.name ?? '<nil>'}`);
  }

  private evalArg(dot: unknown, typ: GoType | undefined, n: Arg): unknown {
    this.at(n);
    switch (n.kind) {
      case 'dot':
        return this.validateType(dot, typ);
      case 'nil':
        if (typ === undefined || typ === T_REFLECT_VALUE) return undefined;
        if (canBeNil(typ)) return null;
        this.errorf(`cannot assign nil to ${typ.name}`);
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], NO_FINAL), typ);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, n, undefined, NO_FINAL), typ);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), typ);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, undefined, NO_FINAL), typ);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, undefined, NO_FINAL), typ);
    }
    if (typ === undefined) this.errorf(`can't handle ${n} for arg of type <nil>`);
    switch (typ.kind) {
      case 'bool':
        if (n.kind === 'bool') return n.value;
        this.errorf(`expected bool; found ${n}`);
      case 'float64':
        if (n.kind === 'number' && n.isFloat) return n.float64;
        this.errorf(`expected float; found ${n}`);
      case 'int':
      case 'int8':
      case 'int16':
      case 'int32':
      case 'int64':
        if (n.kind === 'number' && n.isInt) return goInt(typ, n.int64);
        this.errorf(`expected integer; found ${n}`);
      case 'uint':
      case 'uint8':
      case 'uint16':
      case 'uint32':
      case 'uint64':
        if (n.kind === 'number' && n.isUint) return goInt(typ, n.uint64);
        this.errorf(`expected unsigned integer; found ${n}`);
      case 'string':
        if (n.kind === 'string') return n.text;
        this.errorf(`expected string; found ${n}`);
      case 'interface':
        return this.evalEmptyInterface(dot, n);
    }
    if (typ === T_REFLECT_VALUE) return this.evalEmptyInterface(dot, n);
    this.errorf(`can't handle ${n} for arg of type ${typ.name}`);
  }

  private evalEmptyInterface(dot: unknown, n: Arg): unknown {
    this.at(n);
    switch (n.kind) {
      case 'bool':
        return n.value;
      case 'dot':
        return dot;
      case 'field':
        return this.evalFieldNode(dot, n, undefined, NO_FINAL);
      case 'identifier':
        return this.evalFunction(dot, n, n, undefined, NO_FINAL);
      case 'nil':
        this.errorf("evalEmptyInterface: nil (can't happen)");
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return n.text;
      case 'variable':
        return this.evalVariableNode(dot, n, undefined, NO_FINAL);
      case 'pipe':
        return this.evalPipeline(dot, n);
      case 'chain':
        return this.evalChainNode(dot, n, undefined, NO_FINAL);
    }
  }
}

/** Arguments for a JavaScript function found in the data: Go ints become JS numbers. */
function toJsArgument(v: unknown): unknown {
  if (v === undefined) return null;
  if (v instanceof GoInt) return Number(v.value);
  return v;
}

function holdsInterfaces(container: unknown): boolean {
  return isGoMap(container) && typeOfValue(container)?.elem?.kind === 'interface';
}

function canBeNil(typ: GoType): boolean {
  switch (typ.kind) {
    case 'map':
    case 'slice':
    case 'ptr':
    case 'func':
    case 'interface':
      return true;
  }
  return typ === T_REFLECT_VALUE;
}

function errorMessage(err: unknown): string {
  if (err instanceof GoError) return err.message;
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return `exceeded maximum template depth (${MAX_EXEC_DEPTH})`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

function byteCount(s: string): number {
  return new TextEncoder().encode(s).length;
}

/**
 * Renders the tree named `name` with `data` as dot, within the program's execution budget, its
 * time counted from `startedAt` (a reading of the program's clock; now when absent).
 * Throws TemplateExecError; its subclass TemplateBudgetError when the render goes over budget.
 */
export function execute(program: Program, name: string, data: unknown, startedAt?: number): string {
  // Go's Execute(w, nil) sees an untyped nil: no value, not a nil interface.
  if (data === null) data = undefined;
  const tree = program.trees.get(name);
  const meter = new BudgetMeter(program.budget ?? DEFAULT_EXECUTION_BUDGET, program.now ?? monotonicClock, startedAt);
  const state: ExecState = new ExecState(program, name, data, meter);
  if (tree === undefined) return state.errorf(`${JSON.stringify(name)} is an incomplete or empty template`);
  try {
    withMeter(state.meter, () => state.walkList(data, tree));
  } catch (err) {
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      state.errorf(`exceeded maximum template depth (${MAX_EXEC_DEPTH})`);
    }
    // Steps run out wherever the walk is; the error names the node being evaluated.
    if (err instanceof BudgetExceededError) state.errorf(err.message, err.limit);
    throw err;
  }
  return state.out;
}
