import { compile, isRegistered, register, type search, TreeInterpreter, TYPE_ANY } from '@jmespath-community/jmespath';
import { goJsonMarshal } from './go/gojson.js';
import { goStringFunctions, type JmesFunction } from './jmespath-strings.js';
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
type Value = Parameters<typeof search>[0];
type BinaryOperator = Extract<Expression, { type: 'Arithmetic' }>['operator'];

const ANY = { types: [TYPE_ANY] };

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
  const dialect = goDialect(expression);
  return {
    search: (data) => {
      ensureRegistered();
      return TreeInterpreter.search(dialect, data as Value);
    },
  };
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

/**
 * The Go dialect on the engine's public API only: the compiled tree is rewritten so the engine's
 * own interpreter computes what go-jmespath does. A field whose name an object inherits
 * (`constructor`, `toString`…) becomes a call that reads own properties; arithmetic and unary
 * signs become calls that give null for a non-number; `{…}` is guarded by `@ == null`; and the
 * functions the reference computes differently are called by private names. The private
 * functions are registered in the engine's function table, which every user of the package in
 * this process shares: their names (`go:…`) cannot be written in an expression, so they neither
 * clash with nor replace anyone's functions, and the built-ins stay as the engine ships them.
 */
const PRIVATE = 'go:';

const goFunctions: Readonly<Record<string, JmesFunction>> = {
  field: { signature: [ANY, ANY], call: ([value, name]) => ownField(value, name as string) },
  to_string: { signature: [ANY], call: ([value]) => (typeof value === 'string' ? value : goJsonMarshal(value)) },
  to_number: { signature: [ANY], call: ([value]) => goToNumber(value) },
  ...goStringFunctions,
  ...arithmetic({
    Plus: (a, b) => a + b,
    Minus: (a, b) => a - b,
    Multiply: (a, b) => a * b,
    Star: (a, b) => a * b,
    // Go's float64 division: a zero divisor gives ±Inf or NaN, never an error.
    Divide: (a, b) => a / b,
    Modulo: (a, b) => a % b,
    Div: (a, b) => Math.floor(a / b),
  }),
  'unary Plus': { signature: [ANY], call: ([a]) => (typeof a === 'number' ? a : null) },
  'unary Minus': { signature: [ANY], call: ([a]) => (typeof a === 'number' ? -a : null) },
};

/** The functions evaluated the reference's way instead of the engine's. */
const REPLACED_FUNCTIONS = new Set(['to_string', 'to_number', ...Object.keys(goStringFunctions)]);

function arithmetic(operators: Record<BinaryOperator, (a: number, b: number) => number>): Record<string, JmesFunction> {
  return Object.fromEntries(
    Object.entries(operators).map(([operator, apply]) => [
      `arithmetic ${operator}`,
      { signature: [ANY, ANY], call: ([a, b]) => (typeof a === 'number' && typeof b === 'number' ? apply(a, b) : null) },
    ]),
  );
}

/** Registers the private functions, again after anyone cleared the package's custom functions. */
function ensureRegistered(): void {
  if (isRegistered(`${PRIVATE}field`)) return;
  for (const [name, { signature, call }] of Object.entries(goFunctions)) {
    register(`${PRIVATE}${name}`, call as Parameters<typeof register>[1], signature, { override: true });
  }
}

const call = (name: string, children: Expression[]): Expression => ({ type: 'Function', name: `${PRIVATE}${name}`, children });
const literal = (value: string | null): Expression => ({ type: 'Literal', value });
const CURRENT: Expression = { type: 'Current' };

/** The tree with the Go dialect's rewrites applied; every other node is copied as it is. */
function goDialect(node: Expression): Expression {
  switch (node.type) {
    case 'Field':
      // The data are plain objects (parsed JSON, MaxMind records): only Object.prototype's names
      // can be inherited, so only those fields need the call; the others stay as fast as they are.
      return node.name in Object.prototype ? call('field', [CURRENT, literal(node.name)]) : node;
    case 'Arithmetic':
      return call(`arithmetic ${node.operator}`, [goDialect(node.left), goDialect(node.right)]);
    case 'Unary':
      return call(`unary ${node.operator}`, [goDialect(node.operand)]);
    case 'Function':
      return {
        ...node,
        name: REPLACED_FUNCTIONS.has(node.name) ? `${PRIVATE}${node.name}` : node.name,
        children: node.children.map(goDialect),
      };
    case 'MultiSelectHash':
      return {
        type: 'Ternary',
        condition: { type: 'Comparator', name: 'EQ', left: CURRENT, right: literal(null) },
        trueExpr: literal(null),
        falseExpr: { ...node, children: node.children.map((pair) => ({ ...pair, value: goDialect(pair.value) })) },
      };
    case 'Literal':
      // A literal's value is JSON, not a tree: `{"type": "Field"}` is data.
      return node;
    default:
      return rewriteChildren(node);
  }
}

/** Applies `goDialect` to whatever subexpressions a node holds, whatever its type. */
function rewriteChildren(node: Expression): Expression {
  const copy: Record<string, unknown> = { ...node };
  for (const [key, child] of Object.entries(node)) {
    if (Array.isArray(child)) copy[key] = child.map((c) => (isNode(c) ? goDialect(c) : c));
    else if (isNode(child)) copy[key] = goDialect(child);
  }
  return copy as unknown as Expression;
}

function isNode(value: unknown): value is Expression {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** A field as go-jmespath reads it: an own property of an object, else null. */
function ownField(value: unknown, name: string): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  return Object.hasOwn(value, name) ? ((value as Record<string, unknown>)[name] ?? null) : null;
}

/** Go's `to_number`: numbers as they are, strings through strconv.ParseFloat, else null. */
function goToNumber(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return parseGoFloatOrUndefined(value) ?? null;
  return null;
}

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
