import { compile, TreeInterpreter } from '@jmespath-community/jmespath';
import { goJsonMarshal } from './go/gojson.js';
import { goStringFunctions } from './jmespath-strings.js';
import { parseGoFloatOrUndefined } from './go/strconv.js';

/**
 * JMESPath as the reference evaluates it: the Community Edition dialect (arithmetic, `$`, `let`,
 * `items`, …) with the reference's Go semantics where they differ from the TypeScript engine —
 * arithmetic on a non-number gives null instead of an error (so an unquoted `user-agent` silently
 * yields null), division by zero gives ±Inf/NaN, `{…}` on null is null, fields never resolve to
 * inherited properties, `to_string` writes Go JSON, `to_number` parses Go floats, and the string
 * functions work on UTF-8 bytes and runes as Go's do (see jmespath-strings). Shared by
 * stage.json and stage.geoip's `custom_lookups`.
 */
export interface JmesPath {
  /** Evaluates against parsed JSON data; throws on an evaluation error. */
  search(data: unknown): unknown;
}

/** A syntax error worded as the reference words it (`SyntaxError: Unexpected token …`). */
export class JmesPathSyntaxError extends Error {}

type Expression = ReturnType<typeof compile>;

/** Compiles once at build time; plain dotted paths (most configs) are read without the interpreter. */
export function compileJmesPath(text: string): JmesPath {
  let expression: Expression;
  try {
    expression = compile(text);
  } catch (err) {
    throw new JmesPathSyntaxError(goSyntaxMessage((err as Error).message));
  }
  const path = fieldPath(expression);
  if (path) return { search: (data) => readPath(data, path) };
  return { search: (data) => interpreter.search(expression, data as Value) };
}

/**
 * The reference's wording for the one syntax error users commonly meet (trailing tokens, as in
 * `foo-1`, which lexes as `foo` followed by the number `-1`); other errors keep the engine's text.
 */
function goSyntaxMessage(message: string): string {
  const trailing = /^Syntax error: unexpected token type: (\w+), value:/.exec(message);
  if (trailing) {
    const type = trailing[1] === 'Literal' ? 'JSONLiteral' : trailing[1]!;
    return `SyntaxError: Unexpected token at the end of the expression: t${type}`;
  }
  return `SyntaxError: ${message.replace(/^Syntax error:\s*/, '')}`;
}

type Interpreter = typeof TreeInterpreter;
type Node = Parameters<Interpreter['visit']>[0];
type Value = ReturnType<Interpreter['search']>;
type FunctionEntry = Interpreter['runtime']['_functionTable'][string];
/** Engine fields that TypeScript marks private but a scoped copy must carry over. */
interface InterpreterState {
  _rootValue: unknown;
  _scope: { withScope(scope: Record<string, unknown>): unknown };
}

const EngineInterpreter = Object.getPrototypeOf(TreeInterpreter).constructor as new () => Interpreter;

class GoDialectInterpreter extends EngineInterpreter {
  constructor() {
    super();
    const table = this.runtime._functionTable;
    table.to_string = {
      ...(table.to_string as FunctionEntry),
      _func: ([value]: Value[]) => (typeof value === 'string' ? value : goJsonMarshal(value)),
    };
    table.to_number = { ...(table.to_number as FunctionEntry), _func: ([value]: Value[]) => goToNumber(value) };
    for (const [name, goFunction] of Object.entries(goStringFunctions)) {
      table[name] = { ...(table[name] as FunctionEntry), _func: (args: Value[]) => goFunction(args) as Value };
    }
  }

  override visit(node: Node, value: Value | Node): ReturnType<Interpreter['visit']> {
    switch (node.type) {
      case 'Field': {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
        return Object.hasOwn(value, node.name) ? ((value as Record<string, Value>)[node.name] ?? null) : null;
      }
      case 'Arithmetic': {
        const left = this.visit(node.left, value);
        const right = this.visit(node.right, value);
        if (typeof left !== 'number' || typeof right !== 'number') return null;
        switch (node.operator) {
          case 'Plus':
            return left + right;
          case 'Minus':
            return left - right;
          case 'Multiply':
          case 'Star':
            return left * right;
          case 'Divide':
            return left / right;
          case 'Modulo':
            return left % right;
          case 'Div':
            return Math.floor(left / right);
        }
        return null;
      }
      case 'Unary': {
        const operand = this.visit(node.operand, value);
        if (typeof operand !== 'number') return null;
        return node.operator === 'Minus' ? -operand : operand;
      }
      case 'MultiSelectHash':
        if (value === null) return null;
        break;
    }
    return super.visit(node, value);
  }

  override withScope(scope: Record<string, Value>): Interpreter {
    const scoped = new GoDialectInterpreter();
    scoped.runtime._functionTable = this.runtime._functionTable;
    const from = this as unknown as InterpreterState;
    const to = scoped as unknown as InterpreterState;
    to._rootValue = from._rootValue;
    to._scope = from._scope.withScope(scope) as InterpreterState['_scope'];
    return scoped;
  }
}

/** Go's `to_number`: numbers as they are, strings through strconv.ParseFloat, else null. */
function goToNumber(value: Value): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return parseGoFloatOrUndefined(value) ?? null;
  return null;
}

const interpreter = new GoDialectInterpreter();

/**
 * The field names of an expression that is only a dotted path (`a`, `a.b."c-d"`), which most
 * configs use; such paths are read directly, with the same results as the interpreter.
 */
function fieldPath(node: Expression): string[] | undefined {
  if (node.type === 'Field') return [node.name];
  if (node.type !== 'Subexpression') return undefined;
  const { left, right } = node as { left: Expression; right: Expression };
  const head = fieldPath(left);
  const tail = head && fieldPath(right);
  return head && tail ? [...head, ...tail] : undefined;
}

function readPath(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const name of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, name)) return null;
    value = (value as Record<string, unknown>)[name];
  }
  return value ?? null;
}
