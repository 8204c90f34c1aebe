import { ConfigError, type Position } from './errors.js';
import type { BinaryOp, Expr } from './ast.js';
import { isFloatLiteral } from './lexer.js';
import { STDLIB, isStdlibName } from './stdlib.js';
import {
  ConfigFunction,
  type GoFloat,
  getField,
  isFloatKind,
  isNumber,
  isObjectValue,
  makeNumber,
  makeObject,
  numberValue,
  toConfigValue,
  typeOf,
  valuesEqual,
  type ConfigValue,
  type Value,
  type ValueType,
} from './value.js';

export type { Capsule, ConfigValue } from './value.js';
export { isCapsule, makeCapsule, typeOf } from './value.js';

/**
 * What an expression can see: references to other components and the environment.
 *
 * `resolve` receives a whole dotted reference (`loki.write.default.receiver`) and returns its
 * value, or undefined when it does not know it. Evaluation asks for the full path first and
 * then for ever shorter prefixes, reading the remaining names as object fields; names the scope
 * does not know fall back to the standard library (`sys.env`, `string.format`, ...).
 */
export interface EvalScope {
  resolve(path: readonly string[], pos: Position): ConfigValue | undefined;
  /** Environment variables for `sys.env`; when absent, the process environment is used. */
  env?: (name: string) => string | undefined;
  /**
   * Whether an expression refers to something known to be missing and already reported; a
   * decoder then takes the attribute as written but of unknown value and skips its checks.
   */
  unresolved?: (expr: Expr) => boolean;
}

/**
 * Evaluates an expression as the reference does: integer and float arithmetic kept apart
 * (`7 / 2` is 3), `+` concatenating strings, `==` comparing any two values deeply, `&&`/`||`
 * on bools (both sides are always evaluated). Errors are ConfigErrors at the offending node.
 *
 * @example evaluate(parseExpression('string.format("%s-%d", "a", 1 + 2)', 'x'), scope) // 'a-3'
 */
export function evaluate(expr: Expr, scope: EvalScope): ConfigValue {
  return toConfigValue(new Evaluator(scope).eval(expr), expr.pos);
}

/** The names of a reference such as `a.b.c`, or undefined when `expr` is not one. */
export function dottedPath(expr: Expr): string[] | undefined {
  if (expr.kind === 'ident') return [expr.name];
  if (expr.kind !== 'access') return undefined;
  const base = dottedPath(expr.object);
  return base ? [...base, expr.name] : undefined;
}

const ALLOWED_OPERANDS: Readonly<Record<Exclude<BinaryOp, '==' | '!='>, readonly ValueType[]>> = {
  '||': ['bool'],
  '&&': ['bool'],
  '+': ['number', 'string'],
  '-': ['number'],
  '*': ['number'],
  '/': ['number'],
  '%': ['number'],
  '^': ['number'],
  '<': ['number', 'string'],
  '<=': ['number', 'string'],
  '>': ['number', 'string'],
  '>=': ['number', 'string'],
};

const PLURAL: Readonly<Record<string, string>> = { bool: 'bools', number: 'numbers', string: 'strings' };

class Evaluator {
  constructor(private readonly scope: EvalScope) {}

  eval(expr: Expr): Value {
    switch (expr.kind) {
      case 'string':
      case 'bool':
        return expr.value;
      case 'null':
        return null;
      case 'number':
        return makeNumber(expr.value, isFloatLiteral(expr.raw));
      case 'array':
        return expr.items.map((item) => this.eval(item));
      case 'object':
        return makeObject(expr.fields.map((field) => [field.key, this.eval(field.value)] as const));
      case 'paren':
        return this.eval(expr.inner);
      case 'ident':
        return this.reference([expr.name], expr.pos);
      case 'access': {
        const path = dottedPath(expr);
        if (path) return this.reference(path, expr.pos);
        return this.field(this.eval(expr.object), expr.name, expr.pos);
      }
      case 'index':
        return this.index(expr.object, expr.index);
      case 'call':
        return this.call(expr.callee, expr.args, expr.pos);
      case 'unary':
        return this.unary(expr.op, this.eval(expr.operand), expr.operand.pos);
      case 'binary':
        return this.binary(expr.op, expr.left, expr.right);
    }
  }

  private reference(names: readonly string[], pos: Position): Value {
    for (let n = names.length; n >= 1; n--) {
      const found = this.scope.resolve(names.slice(0, n), pos);
      if (found !== undefined) {
        return names.slice(n).reduce<Value>((value, name) => this.field(value, name, pos), found as Value);
      }
    }
    const unknown = (): ConfigError => new ConfigError(`unknown reference ${JSON.stringify(names.join('.'))}`, pos);
    if (!isStdlibName(names[0]!)) throw unknown();
    let value: Value = STDLIB[names[0]!]!;
    for (const name of names.slice(1)) {
      const next: Value | undefined = isObjectValue(value) ? getField(value, name) : undefined;
      if (next === undefined) throw unknown();
      value = next;
    }
    return value;
  }

  private field(value: Value, name: string, pos: Position): Value {
    if (isObjectValue(value)) {
      const found = getField(value, name);
      if (found === undefined) throw new ConfigError(`field ${JSON.stringify(name)} does not exist`, pos);
      return found;
    }
    throw new ConfigError(`cannot access field ${JSON.stringify(name)} on a value of type ${typeOf(value)}`, pos);
  }

  private index(objectExpr: Expr, indexExpr: Expr): Value {
    const value = this.eval(objectExpr);
    const index = this.eval(indexExpr);
    if (Array.isArray(value)) {
      const items = value as readonly Value[];
      if (!isNumber(index)) throw new ConfigError(`array index must be a number, got ${typeOf(index)}`, indexExpr.pos);
      const i = Math.trunc(numberValue(index));
      if (!(i >= 0 && i < items.length)) {
        throw new ConfigError(`index ${i} is out of range of array with length ${items.length}`, indexExpr.pos);
      }
      return items[i]!;
    }
    if (isObjectValue(value)) {
      if (typeof index !== 'string') throw new ConfigError(`object key must be a string, got ${typeOf(index)}`, indexExpr.pos);
      // A missing key read with [] is null, unlike `.name`.
      return getField(value, index) ?? null;
    }
    throw new ConfigError(`cannot index a value of type ${typeOf(value)}`, objectExpr.pos);
  }

  private call(calleeExpr: Expr, argExprs: readonly Expr[], pos: Position): Value {
    const callee = this.eval(calleeExpr);
    if (!(callee instanceof ConfigFunction)) {
      throw new ConfigError(`cannot call a value of type ${typeOf(callee)}`, calleeExpr.pos);
    }
    const args = argExprs.map((arg) => this.eval(arg));
    const scopeEnv = this.scope.env;
    return callee.call(args, {
      name: dottedPath(calleeExpr)?.join('.') ?? callee.name,
      pos,
      argPos: argExprs.map((arg) => arg.pos),
      env: (name) => (scopeEnv ? scopeEnv(name) : process.env[name]) ?? '',
    });
  }

  private unary(op: '!' | '-', operand: Value, pos: Position): Value {
    if (op === '!') {
      if (typeof operand !== 'boolean') throw new ConfigError(`"!" expects a bool, got ${typeOf(operand)}`, pos);
      return !operand;
    }
    if (!isNumber(operand)) throw new ConfigError(`"-" expects a number, got ${typeOf(operand)}`, pos);
    return makeNumber(-numberValue(operand), isFloatKind(operand));
  }

  private binary(op: BinaryOp, leftExpr: Expr, rightExpr: Expr): Value {
    const left = this.eval(leftExpr);
    const right = this.eval(rightExpr);
    if (op === '==') return valuesEqual(left, right);
    if (op === '!=') return !valuesEqual(left, right);

    const allowed = ALLOWED_OPERANDS[op];
    const expects = allowed.map((t) => PLURAL[t]).join(' or ');
    const leftType = typeOf(left);
    const rightType = typeOf(right);
    if (!allowed.includes(leftType)) throw new ConfigError(`"${op}" expects ${expects}, got ${leftType}`, leftExpr.pos);
    if (!allowed.includes(rightType)) throw new ConfigError(`"${op}" expects ${expects}, got ${rightType}`, rightExpr.pos);
    if (leftType !== rightType) {
      throw new ConfigError(`"${op}" needs operands of the same type, got ${leftType} and ${rightType}`, rightExpr.pos);
    }

    if (leftType === 'bool') return op === '||' ? left === true || right === true : left === true && right === true;
    if (leftType === 'string') {
      const a = left as string;
      const b = right as string;
      if (op === '+') return a + b;
      return compare(op, compareCodePoints(a, b));
    }

    const a = left as number | GoFloat;
    const b = right as number | GoFloat;
    const x = numberValue(a);
    const y = numberValue(b);
    const float = isFloatKind(a) || isFloatKind(b);
    switch (op) {
      case '+':
        return makeNumber(x + y, float);
      case '-':
        return makeNumber(x - y, float);
      case '*':
        return makeNumber(x * y, float);
      case '/':
        if (y === 0) throw new ConfigError('division by zero', rightExpr.pos);
        return makeNumber(float ? x / y : Math.trunc(x / y), float);
      case '%':
        if (y === 0) throw new ConfigError('division by zero', rightExpr.pos);
        return makeNumber(x % y, float);
      case '^':
        return makeNumber(float ? x ** y : integerPower(x, y), float);
      default:
        return compare(op, x < y ? -1 : x > y ? 1 : 0);
    }
  }
}

function compare(op: BinaryOp, order: number): boolean {
  switch (op) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    default:
      throw new Error(`not a comparison: ${op}`);
  }
}

/** Orders strings by code point, as Go orders their UTF-8 bytes. */
function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * The reference's integer power: 1 for a zero exponent, and for negative exponents the base
 * itself (its loop runs no iterations); large exponents overflow to infinity here instead of
 * wrapping around as 64-bit integers do.
 */
function integerPower(base: number, exponent: number): number {
  if (exponent === 0 || base === 1) return 1;
  if (base === 0 && exponent > 0) return 0;
  if (exponent < 2) return base;
  if (exponent > 2048) return base ** exponent;
  let result = base;
  for (let i = 2; i <= exponent; i++) result *= base;
  return result;
}
