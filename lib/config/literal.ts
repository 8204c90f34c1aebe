import type { Expr } from './ast.js';
import type { Position } from './errors.js';
import { positionWithin } from './lexer.js';

/** The source text of each string literal the parser built (quotes and escapes as written). */
const literalSources = new WeakMap<Expr, string>();

/** Called by the parser for every string literal, so positions inside it can be found later. */
export function recordLiteralSource(expr: Expr, source: string): void {
  literalSources.set(expr, source);
}

/**
 * The file position of the character at `index` in a string literal's decoded value, found by
 * walking the literal's escapes as written (`"a\\(b"`: index 1 is the `\` at column 3 of the
 * literal). Undefined when the expression is not a literal from the parser, or when a byte escape
 * (`\x..`, octal) comes before `index`, whose decoded length cannot be told apart per character.
 */
export function positionInLiteral(expr: Expr, index: number): Position | undefined {
  if (expr.kind !== 'string') return undefined;
  const source = literalSources.get(expr);
  if (source === undefined || index < 0 || index > expr.value.length) return undefined;
  const raw = source[0] === '`';
  let decoded = 0;
  let at = 1;
  while (decoded < index) {
    if (at >= source.length - 1) return undefined;
    const ch = source[at]!;
    if (raw) {
      at++;
      if (ch !== '\r') decoded++;
      continue;
    }
    if (ch !== '\\') {
      at++;
      decoded++;
      continue;
    }
    const kind = source[at + 1];
    if (kind === 'u' || kind === 'U') {
      const digits = kind === 'u' ? 4 : 8;
      const code = Number.parseInt(source.slice(at + 2, at + 2 + digits), 16);
      if (Number.isNaN(code) || code > 0x10ffff) return undefined;
      decoded += code > 0xffff ? 2 : 1;
      at += 2 + digits;
    } else if (kind === 'x' || (kind !== undefined && kind >= '0' && kind <= '7')) {
      return undefined;
    } else {
      decoded++;
      at += 2;
    }
  }
  if (decoded !== index) return undefined;
  return positionWithin(expr.pos, source, at);
}
