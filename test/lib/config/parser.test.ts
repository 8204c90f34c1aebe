import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Attribute, Block, Expr } from '../../../lib/config/ast.js';
import { MAX_ERRORS, parseConfig, parseExpression } from '../../../lib/config/parser.js';
import { ConfigErrors } from '../../../lib/config/errors.js';
import { stripPositions } from './strip.js';

const FILE = 'main.alloy';

function parse(text: string) {
  return stripPositions(parseConfig(text, FILE));
}

function expr(text: string): Expr {
  return stripPositions(parseExpression(text, FILE));
}

function errorOf(text: string): string {
  try {
    parseConfig(text, FILE);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigErrors);
    return (err as ConfigErrors).message;
  }
  throw new Error(`expected a parse error for ${JSON.stringify(text)}`);
}

function valueOf(text: string): Expr {
  const [stmt] = parse(`a = ${text}`).body;
  return (stmt as Attribute).value;
}

describe('parseConfig: statements', () => {
  it('parses attributes and blocks with dotted names and labels', () => {
    expect(parse('logs.process "default" {\n  forward_to = []\n}\nhttp {}\n')).toEqual({
      file: FILE,
      body: [
        {
          kind: 'block',
          name: 'logs.process',
          label: 'default',
          body: [{ kind: 'attribute', name: 'forward_to', value: { kind: 'array', items: [] } }],
        },
        { kind: 'block', name: 'http', body: [] },
      ],
    });
  });

  it('nests blocks in blocks', () => {
    const file = parse(
      'http {\n  tls {\n    cert = "c"\n  }\n}\nstage.match {\n  selector = "{a=\\"b\\"}"\n  stage.json {\n    expressions = { a = "" }\n  }\n}',
    );
    const [http, match] = file.body as Block[];
    expect(http).toEqual({
      kind: 'block',
      name: 'http',
      body: [{ kind: 'block', name: 'tls', body: [{ kind: 'attribute', name: 'cert', value: { kind: 'string', value: 'c' } }] }],
    });
    expect(match!.body.map((s) => s.name)).toEqual(['selector', 'stage.json']);
    expect((match!.body[1] as Block).body[0]).toEqual({
      kind: 'attribute',
      name: 'expressions',
      value: { kind: 'object', fields: [{ key: 'a', quoted: false, value: { kind: 'string', value: '' } }] },
    });
  });

  it('accepts a whole block on one line and an empty label as no label', () => {
    expect(parse('stage.json { source = "x" }\nstage.cri "" {}')).toEqual({
      file: FILE,
      body: [
        { kind: 'block', name: 'stage.json', body: [{ kind: 'attribute', name: 'source', value: { kind: 'string', value: 'x' } }] },
        { kind: 'block', name: 'stage.cri', body: [] },
      ],
    });
  });

  it('parses an empty file, blank lines and comments only', () => {
    expect(parse('')).toEqual({ file: FILE, body: [] });
    expect(parse('\n\n  // nothing\n/* here */\n')).toEqual({ file: FILE, body: [] });
  });

  it('records the position of every node', () => {
    const file = parseConfig('logs.process "a" {\n  stage.json {\n    expressions = { "k" = x.y }\n  }\n}\n', FILE);
    const block = file.body[0] as Block;
    expect(block.pos).toEqual({ file: FILE, line: 1, col: 1, offset: 0 });
    expect(block.endPos).toEqual({ file: FILE, line: 5, col: 1, offset: 70 });
    const inner = block.body[0] as Block;
    expect(inner.pos).toMatchObject({ line: 2, col: 3 });
    const attr = inner.body[0] as Attribute;
    expect(attr.pos).toMatchObject({ line: 3, col: 5 });
    expect(attr.endPos).toMatchObject({ line: 3, col: 32 });
    const obj = attr.value as Extract<Expr, { kind: 'object' }>;
    expect(obj.pos).toMatchObject({ line: 3, col: 19 });
    expect(obj.endPos).toMatchObject({ line: 3, col: 31 });
    expect(obj.fields[0]!.keyPos).toMatchObject({ line: 3, col: 21 });
    expect(obj.fields[0]!.value.pos).toMatchObject({ line: 3, col: 27 });
  });

  it('keeps the comments of the file in order', () => {
    const file = parseConfig('// a\nx = 1 /* b */ // c\n', FILE);
    expect(file.comments).toEqual([
      { text: '// a', pos: { file: FILE, line: 1, col: 1, offset: 0 } },
      { text: '/* b */', pos: { file: FILE, line: 2, col: 7, offset: 11 } },
      { text: '// c', pos: { file: FILE, line: 2, col: 15, offset: 19 } },
    ]);
  });

  it('allows comments anywhere between tokens', () => {
    const text = [
      '// top',
      'stage.json /* name */ { // open',
      '  expressions = { // object',
      '    // before key',
      '    a /* key */ = /* value */ "x", // after',
      '    /* before close */',
      '  } // close',
      '  list = [ /* first */ 1, // one',
      '    2, /* two */',
      '  ]',
      '  sum = 1 /* op */ + /* rhs */ 2',
      '} // done',
      '/* end */',
    ].join('\n');
    expect(parse(text).body).toEqual([
      {
        kind: 'block',
        name: 'stage.json',
        body: [
          {
            kind: 'attribute',
            name: 'expressions',
            value: { kind: 'object', fields: [{ key: 'a', quoted: false, value: { kind: 'string', value: 'x' } }] },
          },
          {
            kind: 'attribute',
            name: 'list',
            value: {
              kind: 'array',
              items: [
                { kind: 'number', value: 1, raw: '1' },
                { kind: 'number', value: 2, raw: '2' },
              ],
            },
          },
          {
            kind: 'attribute',
            name: 'sum',
            value: { kind: 'binary', op: '+', left: { kind: 'number', value: 1, raw: '1' }, right: { kind: 'number', value: 2, raw: '2' } },
          },
        ],
      },
    ]);
    expect(parseConfig(text, FILE).comments).toHaveLength(17);
  });
});

describe('parseConfig: literals', () => {
  it('parses every literal kind', () => {
    expect(valueOf('"text"')).toEqual({ kind: 'string', value: 'text' });
    expect(valueOf('`raw \\n`')).toEqual({ kind: 'string', value: 'raw \\n' });
    expect(valueOf('42')).toEqual({ kind: 'number', value: 42, raw: '42' });
    expect(valueOf('1.25')).toEqual({ kind: 'number', value: 1.25, raw: '1.25' });
    expect(valueOf('.5')).toEqual({ kind: 'number', value: 0.5, raw: '.5' });
    expect(valueOf('6.02e23')).toEqual({ kind: 'number', value: 6.02e23, raw: '6.02e23' });
    expect(valueOf('1E-3')).toEqual({ kind: 'number', value: 0.001, raw: '1E-3' });
    expect(valueOf('010')).toEqual({ kind: 'number', value: 8, raw: '010' });
    expect(valueOf('true')).toEqual({ kind: 'bool', value: true });
    expect(valueOf('false')).toEqual({ kind: 'bool', value: false });
    expect(valueOf('null')).toEqual({ kind: 'null' });
  });

  it('decodes every Go escape in double-quoted strings', () => {
    expect(valueOf('"\\a\\b\\f\\n\\r\\t\\v\\\\\\""')).toEqual({ kind: 'string', value: '\x07\b\f\n\r\t\v\\"' });
    expect(valueOf('"\\101\\x42\\u0043\\U00000044"')).toEqual({ kind: 'string', value: 'ABCD' });
    expect(valueOf('"\\xe2\\x82\\xac \\u20ac \\U0001F600"')).toEqual({ kind: 'string', value: '€ € 😀' });
  });

  it('reads raw strings across lines, without escapes and without carriage returns', () => {
    expect(valueOf('`{{ .Value }}\r\n  "x" \\d`')).toEqual({ kind: 'string', value: '{{ .Value }}\n  "x" \\d' });
    const file = parseConfig('template = `line 1\nline 2`\nnext = 1', FILE);
    expect(file.body.map((s) => s.name)).toEqual(['template', 'next']);
    expect(file.body[1]!.pos).toMatchObject({ line: 3, col: 1 });
  });

  it('parses arrays and objects with trailing commas, on one or several lines', () => {
    expect(valueOf('[1, "two", [3],]')).toEqual({
      kind: 'array',
      items: [
        { kind: 'number', value: 1, raw: '1' },
        { kind: 'string', value: 'two' },
        { kind: 'array', items: [{ kind: 'number', value: 3, raw: '3' }] },
      ],
    });
    expect(valueOf('[\n  "a",\n  "b",\n]')).toEqual({
      kind: 'array',
      items: [
        { kind: 'string', value: 'a' },
        { kind: 'string', value: 'b' },
      ],
    });
    expect(valueOf('{}')).toEqual({ kind: 'object', fields: [] });
    expect(valueOf('{\n  a = 1,\n  "b-c" = { d = null },\n}')).toEqual({
      kind: 'object',
      fields: [
        { key: 'a', quoted: false, value: { kind: 'number', value: 1, raw: '1' } },
        { key: 'b-c', quoted: true, value: { kind: 'object', fields: [{ key: 'd', quoted: false, value: { kind: 'null' } }] } },
      ],
    });
  });

  it('keeps quoted object keys verbatim, as the reference does', () => {
    expect(valueOf('{ "a\\tb" = 1, `c d` = 2, "" = 3 }')).toEqual({
      kind: 'object',
      fields: [
        { key: 'a\\tb', quoted: true, value: { kind: 'number', value: 1, raw: '1' } },
        { key: 'c d', quoted: true, value: { kind: 'number', value: 2, raw: '2' } },
        { key: '', quoted: true, value: { kind: 'number', value: 3, raw: '3' } },
      ],
    });
  });
});

describe('parseConfig: expressions', () => {
  it('parses references as access chains over an identifier', () => {
    expect(valueOf('[loki.write.default.receiver]')).toEqual({
      kind: 'array',
      items: [
        {
          kind: 'access',
          object: { kind: 'access', object: { kind: 'access', object: { kind: 'ident', name: 'loki' }, name: 'write' }, name: 'default' },
          name: 'receiver',
        },
      ],
    });
  });

  it('parses calls, indexes and field access in any order', () => {
    expect(expr('string.split(x, ",")[0].y')).toEqual({
      kind: 'access',
      object: {
        kind: 'index',
        object: {
          kind: 'call',
          callee: { kind: 'access', object: { kind: 'ident', name: 'string' }, name: 'split' },
          args: [
            { kind: 'ident', name: 'x' },
            { kind: 'string', value: ',' },
          ],
        },
        index: { kind: 'number', value: 0, raw: '0' },
      },
      name: 'y',
    });
    expect(expr('f()')).toEqual({ kind: 'call', callee: { kind: 'ident', name: 'f' }, args: [] });
    expect(expr('f(1,)')).toEqual({ kind: 'call', callee: { kind: 'ident', name: 'f' }, args: [{ kind: 'number', value: 1, raw: '1' }] });
  });

  it('follows operator precedence: || < && < comparison < + - < * / % < ^ < unary', () => {
    const n = (v: number) => ({ kind: 'number', value: v, raw: String(v) });
    expect(expr('1 + 2 * 3')).toEqual({ kind: 'binary', op: '+', left: n(1), right: { kind: 'binary', op: '*', left: n(2), right: n(3) } });
    expect(expr('1 - 2 - 3')).toEqual({ kind: 'binary', op: '-', left: { kind: 'binary', op: '-', left: n(1), right: n(2) }, right: n(3) });
    expect(expr('2 ^ 3 ^ 2')).toEqual({ kind: 'binary', op: '^', left: n(2), right: { kind: 'binary', op: '^', left: n(3), right: n(2) } });
    expect(expr('-2 ^ 2')).toEqual({ kind: 'binary', op: '^', left: { kind: 'unary', op: '-', operand: n(2) }, right: n(2) });
    expect(expr('a || b && c == d')).toEqual({
      kind: 'binary',
      op: '||',
      left: { kind: 'ident', name: 'a' },
      right: {
        kind: 'binary',
        op: '&&',
        left: { kind: 'ident', name: 'b' },
        right: { kind: 'binary', op: '==', left: { kind: 'ident', name: 'c' }, right: { kind: 'ident', name: 'd' } },
      },
    });
    expect(expr('1 < 2 != 3 >= 4')).toMatchObject({ op: '>=', left: { op: '!=', left: { op: '<' } } });
    expect(expr('6 % 4 / 2 <= 1 > 0')).toMatchObject({ op: '>', left: { op: '<=', left: { op: '/', left: { op: '%' } } } });
  });

  it('keeps parentheses and nested unary operators', () => {
    expect(expr('!(a && b)')).toEqual({
      kind: 'unary',
      op: '!',
      operand: {
        kind: 'paren',
        inner: { kind: 'binary', op: '&&', left: { kind: 'ident', name: 'a' }, right: { kind: 'ident', name: 'b' } },
      },
    });
    expect(expr('- -1')).toEqual({
      kind: 'unary',
      op: '-',
      operand: { kind: 'unary', op: '-', operand: { kind: 'number', value: 1, raw: '1' } },
    });
  });

  it('lets an expression continue on the next line after an operator', () => {
    expect(valueOf('1 +\n  2')).toEqual({
      kind: 'binary',
      op: '+',
      left: { kind: 'number', value: 1, raw: '1' },
      right: { kind: 'number', value: 2, raw: '2' },
    });
  });

  it('parses a standalone expression and rejects trailing tokens', () => {
    expect(expr('  x  \n')).toEqual({ kind: 'ident', name: 'x' });
    expect(() => parseExpression('x y', FILE)).toThrow('main.alloy:1:3: expected end of expression, got identifier "y"');
  });
});

describe('parseConfig: errors', () => {
  const cases: [string, string][] = [
    ['foo }', 'main.alloy:1:5: expected "=" or "{" after identifier "foo", got "}"'],
    ['a = ', 'main.alloy:1:5: expected expression, got end of file'],
    ['a = ]', 'main.alloy:1:5: expected expression, got "]"'],
    ['a = "abc', 'main.alloy:1:5: unterminated string literal'],
    ['a = `abc', 'main.alloy:1:5: unterminated raw string literal'],
    ['a = "\\q"', 'main.alloy:1:6: unknown escape sequence "\\q"'],
    ['a = "é\\z"', 'main.alloy:1:7: unknown escape sequence "\\z"'],
    ['a = "\\\'"', 'main.alloy:1:6: unknown escape sequence "\\\'"'],
    ['a = "\\x4g"', 'main.alloy:1:6: invalid escape sequence "\\x4g": expected 2 hexadecimal digits'],
    ['a = "\\u00"', 'main.alloy:1:6: invalid escape sequence "\\u00": expected 4 hexadecimal digits'],
    ['a = "\\400"', 'main.alloy:1:6: octal escape sequence "\\400" is out of range (maximum "\\377")'],
    ['a = "\\ud800"', 'main.alloy:1:6: escape sequence "\\ud800" is not a valid Unicode code point'],
    ["a = 'x'", 'main.alloy:1:5: single-quoted strings are not allowed; use double quotes'],
    ['a = 1 2', 'main.alloy:1:7: expected newline after attribute value, got number 2'],
    ['a = x.1', 'main.alloy:1:6: expected newline after attribute value, got number .1'],
    ['stage.json { a = 1 b = 2 }', 'main.alloy:1:20: expected newline after attribute value, got identifier "b"'],
    ['a.b = 1', 'main.alloy:1:1: attribute name "a.b" must be a single identifier'],
    ['a "x" = 1', 'main.alloy:1:3: attribute "a" cannot have a label'],
    ['stage.json "my label" {}', 'main.alloy:1:12: block label must be a valid identifier, got "my label"'],
    ['stage.json `x` {}', 'main.alloy:1:12: block label must be a double-quoted string'],
    ['stage.json {', 'main.alloy:1:13: expected "}" to close block "stage.json" opened at 1:12, got end of file'],
    ['}', 'main.alloy:1:1: unexpected "}" with no open block to close'],
    ['a = [1, 2\n]', 'main.alloy:1:10: expected "," or "]" after array element, got newline'],
    ['a = [1,,2]', 'main.alloy:1:8: expected expression, got ","'],
    ['a = {b = 1\n}', 'main.alloy:1:11: expected "," or "}" after object field, got newline'],
    ['a = {1 = 2}', 'main.alloy:1:6: expected field name (identifier or string), got number 1'],
    ['a = {,}', 'main.alloy:1:6: expected field name (identifier or string), got ","'],
    ['a = {b 1}', 'main.alloy:1:8: expected "=" after field name "b", got number 1'],
    ['a = { "k" }', 'main.alloy:1:11: expected "=" after field name "k", got "}"'],
    ['a = f(1 2)', 'main.alloy:1:9: expected "," or ")" after argument, got number 2'],
    ['a = (1', 'main.alloy:1:7: expected ")" to close "(", got end of file'],
    ['a = ()', 'main.alloy:1:6: expected expression, got ")"'],
    ['a = x.', 'main.alloy:1:7: expected identifier after ".", got end of file'],
    ['a = x[1', 'main.alloy:1:8: expected "]" after index, got end of file'],
    ['a = -', 'main.alloy:1:6: expected expression, got end of file'],
    ['a = 1 ==', 'main.alloy:1:9: expected expression, got end of file'],
    ['a = 1e', 'main.alloy:1:5: malformed number "1e": exponent has no digits'],
    ['a = 1 @ 2', 'main.alloy:1:7: unexpected character "@" (U+0040)'],
    ['a = \u0000', 'main.alloy:1:5: unexpected character U+0000'],
    ['a = 1 | 2', 'main.alloy:1:7: unexpected character "|" (did you mean "||"?)'],
    ['a = 1 && & 2', 'main.alloy:1:10: unexpected character "&" (did you mean "&&"?)'],
    ['a = 1; b = 2', 'main.alloy:1:6: unexpected character ";": statements are separated by newlines'],
    ['/* never closed', 'main.alloy:1:1: unterminated block comment'],
    ['a = foo {}', 'main.alloy:1:5: a block cannot be used as an attribute value'],
    ['a = foo "x" {}', 'main.alloy:1:5: a block cannot be used as an attribute value'],
    ['stage.json {} stage.cri {}', 'main.alloy:1:15: expected newline after block, got identifier "stage"'],
    ['stage. {}', 'main.alloy:1:8: expected identifier after ".", got "{"'],
    ['stage.json 1 {}', 'main.alloy:1:12: expected "{" or a block label after block name "stage.json", got number 1'],
    ['x "a" 1', 'main.alloy:1:7: expected "{" after block label "a", got number 1'],
    ['1 = 2', 'main.alloy:1:1: expected attribute or block name, got number 1'],
    ['logs.process "x" {\n  stage.json {\n    expressions = { a = }\n  }\n}', 'main.alloy:3:25: expected expression, got "}"'],
    ['a = true\nb = 1 +', 'main.alloy:2:8: expected expression, got end of file'],
  ];

  it.each(cases)('rejects %j', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('names long string literals in messages by their beginning', () => {
    expect(errorOf('a = 1 "a very long string literal that goes on and on"')).toBe(
      'main.alloy:1:7: expected newline after attribute value, got string "a very long string literal ..."',
    );
  });

  it('quotes a raw string spanning lines, so each message stays on its one line', () => {
    expect(errorOf('a = 1 `two\nlines`')).toBe('main.alloy:1:7: expected newline after attribute value, got string "`two\\nlines`"');
    expect(errorOf('a = { `k\ney` 1 }')).toBe('main.alloy:2:5: expected "=" after field name "`k\\ney`", got number 1');
    expect(errorOf('a = 1 `tab\there`')).toBe('main.alloy:1:7: expected newline after attribute value, got string "`tab\\there`"');
    expect(errorOf('a = "\\\r"')).toBe('main.alloy:1:6: unknown escape sequence "\\\\r"');
    expect(errorOf('a = 1 \u2028')).toBe('main.alloy:1:7: unexpected character "\\u2028" (U+2028)');
  });

  it('never puts a line break or control character into a message, whatever the text', () => {
    const piece = fc.constantFrom(
      'a = ',
      '`',
      '"',
      '\\',
      '\n',
      '\r',
      '\t',
      '\u2028',
      '{',
      '}',
      '[',
      ']',
      ',',
      '=',
      'x',
      '1',
      ' ',
      '/*',
      '#',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 30 }), (pieces) => {
        try {
          parseConfig(pieces.join(''), FILE);
        } catch (err) {
          for (const e of (err as ConfigErrors).errors) expect(e.message).not.toMatch(/[\u0000-\u001f\u007f\u0085\u2028\u2029]/);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('recovers at the next statement and reports every bad statement in order', () => {
    expect(errorOf('a = ]\nb = 1\nc = [')).toBe(
      'main.alloy:1:5: expected expression, got "]"\nmain.alloy:3:6: expected expression, got end of file',
    );
    // `a =` at the end of a line continues on the next one, so the error is at the second `=`.
    expect(errorOf('stage.json {\n  a = \n  b = ok\n  c = 1 2\n}\nstage.cri { d = [ }\ne = 1')).toBe(
      [
        'main.alloy:3:5: expected newline after attribute value, got "="',
        'main.alloy:4:9: expected newline after attribute value, got number 2',
        'main.alloy:6:19: expected expression, got "}"',
      ].join('\n'),
    );
  });

  it('ends a statement after a malformed number or string, so the next one is still checked', () => {
    expect(errorOf('a = 1e\nb = ]\nc = "\\q"\nd = }')).toBe(
      [
        'main.alloy:1:5: malformed number "1e": exponent has no digits',
        'main.alloy:2:5: expected expression, got "]"',
        'main.alloy:3:6: unknown escape sequence "\\q"',
        'main.alloy:4:5: expected expression, got "}"',
      ].join('\n'),
    );
  });

  it('reports lexical errors in a skipped statement too', () => {
    expect(errorOf('a = ] "\\q"\nb = @')).toBe(
      [
        'main.alloy:1:5: expected expression, got "]"',
        'main.alloy:1:8: unknown escape sequence "\\q"',
        'main.alloy:2:5: unexpected character "@" (U+0040)',
      ].join('\n'),
    );
  });

  it('reports two unterminated strings when a string breaks across a line', () => {
    expect(errorOf('a = "x\ny"')).toBe('main.alloy:1:5: unterminated string literal\nmain.alloy:2:2: unterminated string literal');
  });

  it('holds one ConfigError per problem, with its position', () => {
    try {
      parseConfig('a = ]\nb = [', FILE);
      throw new Error('expected an error');
    } catch (err) {
      const errors = (err as ConfigErrors).errors;
      expect(errors.map((e) => [e.reason, e.pos])).toEqual([
        ['expected expression, got "]"', { file: FILE, line: 1, col: 5, offset: 4 }],
        ['expected expression, got end of file', { file: FILE, line: 2, col: 6, offset: 11 }],
      ]);
    }
  });

  it('stops after MAX_ERRORS errors', () => {
    const text = Array.from({ length: 50 }, () => 'a = ]').join('\n');
    expect((errorOf(text).match(/\n/g) ?? []).length + 1).toBe(MAX_ERRORS);
  });

  it('limits nesting instead of overflowing the stack', () => {
    expect(errorOf('a = ' + '['.repeat(100_000))).toBe('main.alloy:1:262: nesting is too deep (more than 256 levels)');
    expect(errorOf('a = ' + '('.repeat(300) + '1' + ')'.repeat(300))).toBe('main.alloy:1:262: nesting is too deep (more than 256 levels)');
    expect(errorOf('a = ' + '-'.repeat(100_000) + '1')).toBe('main.alloy:1:262: nesting is too deep (more than 256 levels)');
    expect(errorOf('a {\n'.repeat(300))).toBe(
      'main.alloy:257:3: nesting is too deep (more than 256 levels)\nmain.alloy:301:1: expected "}" to close block "a" opened at 256:3, got end of file',
    );
    expect(errorOf('a = ' + '2 ^ '.repeat(1000) + '1')).toBe('main.alloy:1:1033: nesting is too deep (more than 256 levels)');
  });

  it('limits the depth of long operator and access chains', () => {
    expect(errorOf('a = ' + '1 + '.repeat(5000) + '1')).toBe('main.alloy:1:5: expression is too deeply nested (more than 1000 levels)');
    expect(errorOf('a = x' + '.y'.repeat(5000))).toBe('main.alloy:1:5: expression is too deeply nested (more than 1000 levels)');
    expect(errorOf('a = f' + '()'.repeat(5000))).toBe('main.alloy:1:5: expression is too deeply nested (more than 1000 levels)');
  });

  it('accepts nesting up to the limit', () => {
    const text = 'a = ' + '['.repeat(255) + ']'.repeat(255);
    expect(parseConfig(text, FILE).body).toHaveLength(1);
  });
});
