/**
 * stage.json — parses the line (or an extracted value) as a JSON object and stores the results
 * of JMESPath expressions, and of top-level keys matching `regex`, in the extracted map.
 *
 * Reference quirks kept:
 * - JMESPath is the Community Edition dialect (arithmetic, `$`, `let`, `items`, …) with the
 *   reference's Go semantics where they differ from the TypeScript engine: arithmetic on a
 *   non-number gives null instead of an error (so an unquoted `user-agent` silently yields null),
 *   division by zero gives ±Inf/NaN, `{…}` on null is null, fields never resolve to inherited
 *   properties, `to_string` writes Go JSON and `to_number` parses Go floats;
 * - a path that does not exist still creates its key, holding null; objects and arrays are
 *   stored as compact JSON text with `< > &` escaped (keys sorted; the reference leaves their
 *   order unspecified), written the way json-iterator writes numbers (`1e-07`); strings,
 *   numbers and booleans are stored as they are; an evaluation error leaves the key unset;
 * - the input must be a JSON object (a literal `null` counts as an empty one) nested at most
 *   10 001 levels deep (json-iterator's limit); anything else is malformed: dropped with
 *   `drop_malformed` (not counted in any metric), otherwise passed on unchanged;
 * - a `source` that is absent, null or not convertible to text is a no-op, never malformed;
 *   numbers are converted to text first and then fail to parse as an object;
 * - regex keys are written after the expressions and override an expression of the same name;
 * - a compile error reads as the reference's, e.g. `could not compile JMES expression:
 *   SyntaxError: Unexpected token at the end of the expression: tNumber` for `foo-1`.
 */
import { compile, TreeInterpreter } from '@jmespath-community/jmespath';
import { ConfigError, FieldError } from '../core/errors';
import { goJsonMarshal, goJsonQuote, compareUtf8 } from '../core/gojson';
import { compileRegex, type Regex } from '../core/regex';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage';
import { t } from '../core/schema';
import { parseGoFloat, stringify } from '../core/values';

export interface JsonConfig {
  /** Extracted name → JMESPath expression; `""` means the name itself. */
  readonly expressions: Readonly<Record<string, string>>;
  /** RE2 pattern over top-level key names; `""` means none. */
  readonly regex: string;
  /** Extracted name to parse instead of the line; unset means the line, `""` is rejected. */
  readonly source?: string;
  readonly drop_malformed: boolean;
}

export const json = defineStage<JsonConfig>({
  name: 'json',
  doc: 'Parses the line or an extracted value as JSON and extracts values with JMESPath expressions.',
  fields: {
    expressions: { kind: t.map(t.string), default: {}, doc: 'Extracted name → JMESPath expression. An empty expression means the name itself.' },
    regex: { kind: t.string, default: '', doc: 'Top-level keys whose names match (unanchored RE2) are extracted under their own names.' },
    source: { kind: t.string, doc: 'Extracted name to parse. Unset means the line.' },
    drop_malformed: { kind: t.bool, default: false, doc: 'Drops entries whose input is not a JSON object.' },
  },
  validate: validateJson,
  build: buildJson,
});

export function validateJson(config: JsonConfig): void {
  if (Object.keys(config.expressions).length === 0 && config.regex === '') {
    throw new ConfigError('JMES expression or regex is required');
  }
  if (config.source === '') throw new FieldError('source', 'empty source');
  for (const [name, expression] of Object.entries(config.expressions)) compileExpression(name, expression);
  if (config.regex !== '') compileKeyRegex(config.regex);
}

type Expression = ReturnType<typeof compile>;

function compileExpression(name: string, expression: string): Expression {
  if (typeof expression !== 'string') throw new FieldError('expressions', `expression of ${JSON.stringify(name)} must be a string`);
  const text = expression === '' ? name : expression;
  try {
    return compile(text);
  } catch (err) {
    throw new FieldError('expressions', `could not compile JMES expression: ${goSyntaxMessage((err as Error).message)}`);
  }
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

function compileKeyRegex(pattern: string): Regex {
  try {
    return compileRegex(pattern);
  } catch (err) {
    throw new FieldError('regex', `could not compile regular expression: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The JMESPath dialect: the Community Edition engine with the reference's Go semantics.

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
    table.to_string = { ...(table.to_string as FunctionEntry), _func: ([value]: Value[]) => (typeof value === 'string' ? value : goJsonMarshal(value)) };
    table.to_number = { ...(table.to_number as FunctionEntry), _func: ([value]: Value[]) => goToNumber(value) };
  }

  override visit(node: Node, value: Value | Node): ReturnType<Interpreter['visit']> {
    switch (node.type) {
      case 'Field': {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
        return Object.prototype.hasOwnProperty.call(value, node.name) ? ((value as Record<string, Value>)[node.name] ?? null) : null;
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
  if (typeof value === 'string') return parseGoFloat(value) ?? null;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Decoding and encoding as json-iterator does.

// json-iterator stops at 10 000 nested containers below the top-level object.
const MAX_NESTING = 10_001;

/** The parsed object, or `undefined` when the text is malformed for the reference. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (doc === null) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  // Every level needs an opening and a closing bracket, so only long texts can be too deep.
  if (text.length > 2 * MAX_NESTING && nestingDepth(text) > MAX_NESTING) return undefined;
  if (mayOverflow(text) && hasNonFinite(doc)) return undefined;
  return doc as Record<string, unknown>;
}

/** The deepest bracket nesting of valid JSON text (brackets inside strings do not count). */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}

// A number out of float64 range (1e400, or 400 digits) is a decode error for the reference,
// while JSON.parse turns it into Infinity; only texts with a long exponent or digit run can hold one.
function mayOverflow(text: string): boolean {
  return /[eE][+-]?\d{3}|\d{300}/.test(text);
}

function hasNonFinite(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return true;
    } else if (value !== null && typeof value === 'object') {
      for (const child of Object.values(value)) pending.push(child);
    }
  }
  return false;
}

/**
 * Compact JSON text for an object or array result, as json-iterator's default config writes it:
 * strings HTML-escaped, numbers as Go's shortest `'f'` form or, below 1e-6 and from 1e21 on,
 * `'e'` form with at least two exponent digits. Keys are sorted (the reference's order is
 * unspecified). Iterative, so deeply nested values cannot overflow the stack. `undefined` when
 * a value cannot be encoded (NaN, ±Inf).
 */
export function marshalJsoniter(value: unknown): string | undefined {
  let out = '';
  type Frame = { readonly close: string; readonly items: unknown[]; readonly keys?: string[]; next: number };
  const stack: Frame[] = [];
  const open = (v: unknown): boolean => {
    if (v === null || v === undefined) out += 'null';
    else if (typeof v === 'string') out += goJsonQuote(v, true);
    else if (typeof v === 'boolean') out += v ? 'true' : 'false';
    else if (typeof v === 'number') {
      const text = jsoniterNumber(v);
      if (text === undefined) return false;
      out += text;
    } else if (Array.isArray(v)) {
      out += '[';
      stack.push({ close: ']', items: v, next: 0 });
    } else if (typeof v === 'object') {
      const keys = Object.keys(v).sort(compareUtf8);
      out += '{';
      stack.push({ close: '}', items: keys.map((k) => (v as Record<string, unknown>)[k]), keys, next: 0 });
    } else return false;
    return true;
  };
  if (!open(value)) return undefined;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.next === frame.items.length) {
      out += frame.close;
      stack.pop();
      continue;
    }
    const i = frame.next++;
    if (i > 0) out += ',';
    if (frame.keys) out += goJsonQuote(frame.keys[i]!, true) + ':';
    if (!open(frame.items[i])) return undefined;
  }
  return out;
}

function jsoniterNumber(n: number): string | undefined {
  if (!Number.isFinite(n)) return undefined;
  const abs = Math.abs(n);
  if (abs === 0 || (abs >= 1e-6 && abs < 1e21)) return Object.is(n, -0) ? '-0' : String(n);
  const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
  const digits = exponent.slice(1);
  return `${mantissa}e${exponent[0]}${digits.length < 2 ? '0' + digits : digits}`;
}

/** How a JMESPath result is stored: scalars as they are, null as null, the rest as JSON text. */
function storedValue(result: unknown): { ok: true; value: unknown } | { ok: false } {
  if (result === null || result === undefined) return { ok: true, value: null };
  if (typeof result === 'string' || typeof result === 'number' || typeof result === 'boolean') return { ok: true, value: result };
  const text = marshalJsoniter(result);
  return text === undefined ? { ok: false } : { ok: true, value: text };
}

/** Stores a key, including one named `__proto__`, as an own property. */
function setExtracted(extracted: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(extracted, key, { value, writable: true, enumerable: true, configurable: true });
  else extracted[key] = value;
}

// ---------------------------------------------------------------------------------------------

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
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.prototype.hasOwnProperty.call(value, name)) return null;
    value = (value as Record<string, unknown>)[name];
  }
  return value ?? null;
}

function buildJson(config: JsonConfig, ctx: BuildContext): StageImpl {
  const interpreter = new GoDialectInterpreter();
  const expressions = Object.entries(config.expressions).map(([name, expression]) => {
    const compiled = compileExpression(name, expression);
    return [name, compiled, fieldPath(compiled)] as const;
  });
  const keyRegex = config.regex === '' ? undefined : compileKeyRegex(config.regex);
  const { source, drop_malformed: dropMalformed } = config;

  return {
    kind: 'map',
    process: (entry) => {
      const { extracted } = entry;
      let input = entry.line;
      if (source !== undefined) {
        if (!Object.prototype.hasOwnProperty.call(extracted, source)) return entry;
        const text = stringify(extracted[source]);
        if (text === undefined) return entry;
        input = text;
      }
      const data = parseJsonObject(input);
      if (data === undefined) {
        ctx.debug('json: input is not a JSON object', { source: source ?? 'line' });
        return dropMalformed ? null : entry;
      }
      for (const [name, expression, path] of expressions) {
        let result: unknown;
        try {
          result = path ? readPath(data, path) : interpreter.search(expression, data as Value);
        } catch (err) {
          ctx.debug('json: failed to evaluate JMES expression', { name, error: String(err) });
          continue;
        }
        const stored = storedValue(result);
        if (stored.ok) setExtracted(extracted, name, stored.value);
      }
      if (keyRegex) {
        for (const key of Object.keys(data)) {
          if (!keyRegex.test(key)) continue;
          const stored = storedValue(data[key]);
          if (stored.ok) setExtracted(extracted, key, stored.value);
        }
      }
      return entry;
    },
  };
}
