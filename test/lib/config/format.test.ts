import { describe, expect, it } from 'vitest';
import type { Block, ConfigFile, Expr } from '../../../lib/config/ast.js';
import { MAX_LINE_WIDTH, formatConfig, formatExpression } from '../../../lib/config/format.js';
import { parseConfig, parseExpression } from '../../../lib/config/parser.js';
import type { Position } from '../../../lib/config/errors.js';

function fmt(text: string): string {
  return formatConfig(parseConfig(text, 'f.alloy'));
}

function lines(...l: string[]): string {
  return l.join('\n') + '\n';
}

const at: Position = { file: 'gen', line: 1, col: 1, offset: 0 };

describe('formatConfig', () => {
  it('indents with two spaces, one statement per line, and closes empty blocks on one line', () => {
    expect(fmt('logs.process "default" {\n\t\tforward_to = []\n\tstage.cri {\n}\n  stage.json { source = "x" }\n}')).toBe(
      lines('logs.process "default" {', '  forward_to = []', '  stage.cri {}', '  stage.json {', '    source = "x"', '  }', '}'),
    );
  });

  it('formats an empty file as empty text', () => {
    expect(fmt('')).toBe('');
    expect(fmt('\n\n')).toBe('');
  });

  it('aligns the = of consecutive attributes', () => {
    expect(fmt('stage.drop {\n source = "key"\n expression = ".*"\n older_than = "1h"\n}')).toBe(
      lines('stage.drop {', '  source     = "key"', '  expression = ".*"', '  older_than = "1h"', '}'),
    );
  });

  it('starts a new alignment run after a blank line, a comment line or a block', () => {
    expect(fmt('a = 1\nlonger = 2\n\nb = 3\nbbbbbb = 4\n// note\nc = 5\nblock {}\nd = 6\ndddd = 7')).toBe(
      lines('a      = 1', 'longer = 2', '', 'b      = 3', 'bbbbbb = 4', '// note', 'c = 5', 'block {}', 'd    = 6', 'dddd = 7'),
    );
  });

  it('keeps single blank lines between statements and shortens longer gaps', () => {
    expect(fmt('a = 1\n\n\n\nb = 2\nc {}\n\n\nd {}\n')).toBe(lines('a = 1', '', 'b = 2', 'c {}', '', 'd {}'));
  });

  it('drops blank lines at the start and end of a block', () => {
    expect(fmt('x {\n\n  a = 1\n\n}')).toBe(lines('x {', '  a = 1', '}'));
  });

  it('re-quotes strings the way Go quotes them', () => {
    expect(fmt('a = `raw "quotes" \\d`\nb = "\\x41\\u00e9\\t"\nc = `two\nlines`')).toBe(
      lines('a = "raw \\"quotes\\" \\\\d"', 'b = "Aé\\t"', 'c = "two\\nlines"'),
    );
  });

  it('writes numbers as they were written', () => {
    expect(fmt('a = [1, 1.50, .5, 1e3, 010]')).toBe(lines('a = [1, 1.50, .5, 1e3, 010]'));
  });

  it('keeps short one-line arrays and objects on one line, with spaces inside braces', () => {
    expect(fmt('a = {x=1,"y-z"=[1,2,],}\nb = {}\nc = [ ]')).toBe(lines('a = { x = 1, "y-z" = [1, 2] }', 'b = {}', 'c = []'));
  });

  it('keeps objects and arrays that were written on several lines one element per line', () => {
    expect(fmt('values = {\n  filename = "", stream = "",\n}\nlist = [1,\n2]')).toBe(
      lines('values = {', '  filename = "",', '  stream   = "",', '}', 'list   = [', '  1,', '  2,', ']'),
    );
  });

  it('breaks one-line arrays and objects that do not fit', () => {
    const items = Array.from({ length: 12 }, (_, i) => `"label_number_${i}"`);
    const out = fmt(`labels = [${items.join(', ')}]`);
    expect(out).toBe(lines('labels = [', ...items.map((i) => `  ${i},`), ']'));
    expect(out.split('\n').every((l) => l.length <= MAX_LINE_WIDTH)).toBe(true);
  });

  it('breaks an array that holds an element written on several lines', () => {
    expect(fmt('a = [{ x = 1 }, {\n  y = 2,\n}]')).toBe(lines('a = [', '  { x = 1 },', '  {', '    y = 2,', '  },', ']'));
  });

  it('prints expressions with their operators and parentheses', () => {
    expect(fmt('a = 1+2*(3-x.y[0])\nb = !ok||-n>=2\nc = string.format("%s",sys.env("X"))\nd = 2^3^2')).toBe(
      lines('a = 1 + 2 * (3 - x.y[0])', 'b = !ok || -n >= 2', 'c = string.format("%s", sys.env("X"))', 'd = 2 ^ 3 ^ 2'),
    );
  });

  it('quotes object keys that are not identifiers, keeping them verbatim', () => {
    expect(fmt('a = { "true" = 1, "a\\tb" = 2, `c"d` = 3, ok = 4, "quoted" = 5 }')).toBe(
      lines('a = { "true" = 1, "a\\tb" = 2, `c"d` = 3, ok = 4, "quoted" = 5 }'),
    );
  });

  it('keeps comments on their own lines and at the ends of lines', () => {
    const text = [
      '// header',
      '',
      '/* block',
      '   comment */',
      'logs.process "default" { // after brace',
      '  forward_to = [loki.write.default.receiver] // trailing',
      '',
      '  // before stage',
      '  stage.json {',
      '    expressions = {',
      '      // about app',
      '      app = "", // app',
      '      "nested-key" = "x",',
      '      /* before close */',
      '    }',
      '    source = "extra"',
      '  }',
      '  stage.drop { /* inside */ }',
      '  list = [',
      '    1, // one',
      '    // before two',
      '    2,',
      '  ]',
      '}',
      '',
      '',
      '// end',
    ].join('\n');
    expect(fmt(text)).toBe(
      lines(
        '// header',
        '',
        '/* block',
        '   comment */',
        'logs.process "default" {',
        '  // after brace',
        '  forward_to = [loki.write.default.receiver] // trailing',
        '',
        '  // before stage',
        '  stage.json {',
        '    expressions = {',
        '      // about app',
        '      app          = "", // app',
        '      "nested-key" = "x",',
        '      /* before close */',
        '    }',
        '    source = "extra"',
        '  }',
        '  stage.drop {',
        '    /* inside */',
        '  }',
        '  list = [',
        '    1, // one',
        '    // before two',
        '    2,',
        '  ]',
        '}',
        '',
        '// end',
      ),
    );
  });

  it('moves a comment inside a one-line expression to the end of its line', () => {
    expect(fmt('a = f(1, /* mid */ 2)\nbb = 1 + /* x */ 2')).toBe(lines('a  = f(1, 2) /* mid */', 'bb = 1 + 2 /* x */'));
  });

  it('breaks a one-line array or object that holds a comment', () => {
    expect(fmt('a = [1, /* x */ 2]')).toBe(lines('a = [', '  1, /* x */', '  2,', ']'));
    expect(fmt('a = { /* x */ b = 1 }')).toBe(lines('a = {', '  /* x */', '  b = 1,', '}'));
  });

  it('is idempotent on a file with comments everywhere', () => {
    const once = fmt('a = 1 // x\n/* y */ b = [ // z\n 1, /* w */\n]\nc { d = f(/* v */ 1) }\n');
    expect(fmt(once)).toBe(once);
  });
});

describe('formatConfig on hand-built trees', () => {
  const num = (value: number): Expr => ({ kind: 'number', value, raw: String(value), pos: at });
  const ident = (name: string): Expr => ({ kind: 'ident', name, pos: at });

  it('adds the parentheses that keep the tree as built', () => {
    const sum: Expr = { kind: 'binary', op: '+', left: num(1), right: num(2), pos: at };
    expect(formatExpression({ kind: 'binary', op: '*', left: sum, right: sum, pos: at })).toBe('(1 + 2) * (1 + 2)');
    expect(
      formatExpression({
        kind: 'binary',
        op: '-',
        left: num(1),
        right: { kind: 'binary', op: '-', left: num(2), right: num(3), pos: at },
        pos: at,
      }),
    ).toBe('1 - (2 - 3)');
    const pow: Expr = { kind: 'binary', op: '^', left: num(2), right: num(3), pos: at };
    expect(formatExpression({ kind: 'binary', op: '^', left: pow, right: num(2), pos: at })).toBe('(2 ^ 3) ^ 2');
    expect(formatExpression({ kind: 'unary', op: '-', operand: sum, pos: at })).toBe('-(1 + 2)');
    expect(formatExpression({ kind: 'access', object: sum, name: 'x', pos: at })).toBe('(1 + 2).x');
    expect(formatExpression({ kind: 'access', object: num(1), name: 'x', pos: at })).toBe('1 .x');
    expect(formatExpression({ kind: 'call', callee: ident('f'), args: [num(1), sum], pos: at })).toBe('f(1, 1 + 2)');
  });

  it('formats a list of blocks taken out of a file', () => {
    const file = parseConfig('logs.process "a" {\n  stage.json { source = "x" }\n\n  stage.cri {}\n}', 'f');
    const stages = (file.body[0] as Block).body;
    const extracted: ConfigFile = { file: '', body: stages };
    expect(formatConfig(extracted)).toBe(lines('stage.json {', '  source = "x"', '}', '', 'stage.cri {}'));
  });

  it('quotes labels and keys that could not be written bare', () => {
    const block: Block = { kind: 'block', name: 'b', label: 'not an identifier', body: [], pos: at, endPos: at };
    expect(formatConfig({ file: '', body: [block] })).toBe('b "not an identifier" {}\n');
    const obj: Expr = {
      kind: 'object',
      fields: [
        { key: 'has space', quoted: false, keyPos: at, value: num(1) },
        { key: 'a"b`c', quoted: true, keyPos: at, value: num(2) },
      ],
      pos: at,
    };
    expect(formatExpression(obj)).toBe('{ "has space" = 1, "a\\"b`c" = 2 }');
  });

  it('formats a parsed expression on its own', () => {
    expect(formatExpression(parseExpression('[ 1,2 ]', 'f'))).toBe('[1, 2]');
  });
});
