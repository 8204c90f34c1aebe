import fc from 'fast-check';
import type { Attribute, BinaryOp, Block, ConfigFile, Expr, ObjectField, Statement } from '../../../lib/config/ast.js';
import { isIdentifier, numberLiteralValue } from '../../../lib/config/lexer.js';
import { BINARY_PRECEDENCE } from '../../../lib/config/parser.js';
import type { Position } from '../../../lib/config/errors.js';

/**
 * Generators of syntax trees for property tests. Trees are canonical: they hold the
 * parentheses the formatter would otherwise add, so formatting and parsing give them back.
 */

const at: Position = { file: 'gen.alloy', line: 1, col: 1, offset: 0 };

export const identifier: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('a', 'b', 'x', '_', 'é', 'stage', 'true', 'null'),
    fc.string({ unit: fc.constantFrom('a', 'z', '0', '9', '_', 'ß', '٣'), maxLength: 6 }),
  )
  .map(([head, tail]) => head + tail)
  .filter(isIdentifier);

const anyCharacter = fc
  .integer({ min: 0, max: 0x10ffff })
  .filter((c) => c < 0xd800 || c >= 0xe000)
  .map((c) => String.fromCodePoint(c));

/** Any string value, tricky characters included. */
export const stringValue: fc.Arbitrary<string> = fc.string({
  unit: fc.oneof(
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
    fc.constantFrom('"', '\\', '\n', '\r', '\t', '`', '\0', '\u00a0', '\u2028', '\ufeff', '😀', 'é'),
    anyCharacter,
  ),
  maxLength: 12,
});

/** Text that can sit between the quotes of a key verbatim. */
const quotedKey: fc.Arbitrary<string> = fc.string({
  unit: fc.constantFrom('a', 'B', '-', ' ', '.', '/', 'é', '😀', '\\n', '\\t'),
  maxLength: 6,
});

const numberRaw: fc.Arbitrary<string> = fc.oneof(
  fc.nat({ max: 1_000_000_000 }).map(String),
  fc
    .tuple(fc.nat({ max: 9999 }), fc.string({ unit: fc.constantFrom('0', '1', '5', '9'), minLength: 1, maxLength: 4 }))
    .map(([i, f]) => `${i}.${f}`),
  fc.tuple(fc.nat({ max: 99 }), fc.constantFrom('e', 'E', 'e+', 'e-'), fc.nat({ max: 30 })).map(([m, e, x]) => `${m}${e}${x}`),
  fc.constantFrom('.5', '1.', '010', '0'),
);

const leaf: fc.Arbitrary<Expr> = fc.oneof(
  stringValue.map((value): Expr => ({ kind: 'string', value, pos: at })),
  numberRaw.map((raw): Expr => ({ kind: 'number', value: numberLiteralValue(raw), raw, pos: at })),
  fc.boolean().map((value): Expr => ({ kind: 'bool', value, pos: at })),
  fc.constant<Expr>({ kind: 'null', pos: at }),
  identifier.map((name): Expr => ({ kind: 'ident', name, pos: at })),
);

function paren(inner: Expr): Expr {
  return { kind: 'paren', inner, pos: at };
}

function precedenceOf(expr: Expr): number {
  return expr.kind === 'binary' ? BINARY_PRECEDENCE[expr.op] : 7;
}

/** Wraps operands in parentheses wherever the formatter would. */
function binary(op: BinaryOp, left: Expr, right: Expr): Expr {
  const p = BINARY_PRECEDENCE[op];
  const rightAssociative = op === '^';
  const l = precedenceOf(left) < p + (rightAssociative ? 1 : 0) ? paren(left) : left;
  const r = precedenceOf(right) < p + (rightAssociative ? 0 : 1) ? paren(right) : right;
  return { kind: 'binary', op, left: l, right: r, pos: at };
}

function postfixObject(expr: Expr): Expr {
  return expr.kind === 'binary' || expr.kind === 'unary' ? paren(expr) : expr;
}

const { expr } = fc.letrec<{ expr: Expr }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('expr'), { maxLength: 4 }).map((items): Expr => ({ kind: 'array', items, pos: at })),
    fc
      .array(
        fc
          .tuple(
            fc.oneof(
              identifier.map((k) => [k, false] as const),
              quotedKey.map((k) => [k, true] as const),
            ),
            tie('expr'),
          )
          .map(([[key, quoted], value]): ObjectField => ({ key, quoted, keyPos: at, value })),
        { maxLength: 4 },
      )
      .map((fields): Expr => ({ kind: 'object', fields, pos: at })),
    fc.tuple(tie('expr'), identifier).map(([object, name]): Expr => ({ kind: 'access', object: postfixObject(object), name, pos: at })),
    fc.tuple(tie('expr'), tie('expr')).map(([object, index]): Expr => ({ kind: 'index', object: postfixObject(object), index, pos: at })),
    fc
      .tuple(tie('expr'), fc.array(tie('expr'), { maxLength: 3 }))
      .map(([callee, args]): Expr => ({ kind: 'call', callee: postfixObject(callee), args, pos: at })),
    fc.tuple(fc.constantFrom<'!' | '-'>('!', '-'), tie('expr')).map(
      ([op, operand]): Expr => ({
        kind: 'unary',
        op,
        operand: operand.kind === 'binary' ? paren(operand) : operand,
        pos: at,
      }),
    ),
    fc
      .tuple(fc.constantFrom<BinaryOp>(...(Object.keys(BINARY_PRECEDENCE) as BinaryOp[])), tie('expr'), tie('expr'))
      .map(([op, l, r]) => binary(op, l, r)),
    tie('expr').map(paren),
  ),
}));

export const expression: fc.Arbitrary<Expr> = expr;

const blockName: fc.Arbitrary<string> = fc.array(identifier, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));

const attribute: fc.Arbitrary<Attribute> = fc
  .tuple(identifier, expression)
  .map(([name, value]) => ({ kind: 'attribute', name, value, pos: at }));

const { statement } = fc.letrec<{ statement: Statement }>((tie) => ({
  statement: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    attribute,
    fc
      .tuple(blockName, fc.option(identifier, { nil: undefined }), fc.array(tie('statement'), { maxLength: 4 }))
      .map(([name, label, body]): Block => {
        const block: Block = { kind: 'block', name, body, pos: at, endPos: at };
        return label === undefined ? block : { ...block, label };
      }),
  ),
}));

/** A whole configuration file. */
export const configFile: fc.Arbitrary<ConfigFile> = fc.array(statement, { maxLength: 5 }).map((body) => ({ file: 'gen.alloy', body }));

/** Tokens of the language, for token soup. */
export const tokenText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '{',
    '}',
    '[',
    ']',
    '(',
    ')',
    ',',
    '.',
    '=',
    '==',
    '!=',
    '<',
    '<=',
    '>',
    '>=',
    '+',
    '-',
    '*',
    '/',
    '%',
    '^',
    '!',
    '||',
    '&&',
    'true',
    'false',
    'null',
    'stage.json',
    'logs.process',
    '"default"',
    '"a\\tb"',
    '"\\q"',
    '"unterminated',
    '`raw\nstring`',
    '`open',
    '// comment\n',
    '/* block */',
    '/* open',
    '1',
    '1.5',
    '.5',
    '1e',
    '1e10',
    '010',
    '@',
    ';',
    '|',
    '&',
    "'x'",
    '\n',
    '\n\n',
    '\t',
    '\r\n',
    '\ufeff',
    '\0',
  ),
  identifier,
  stringValue.map((s) => JSON.stringify(s)),
);
