import { describe, expect, it } from 'vitest';
import { describeToken, isFloatLiteral, isIdentifier, numberLiteralValue, tokenize } from '../../../lib/config/lexer.js';

const kinds = (text: string): string[] => tokenize(text, 'f').tokens.map((t) => t.kind);
const texts = (text: string): string[] => tokenize(text, 'f').tokens.map((t) => t.text);

describe('tokenize', () => {
  it('inserts a terminator at a newline after an identifier, a literal or a closing bracket', () => {
    expect(kinds('a = 1\nb = "x"\nc = d\ne = [1]\nf = g()\nh {}\n')).toEqual([
      'ident',
      '=',
      'number',
      'terminator',
      'ident',
      '=',
      'string',
      'terminator',
      'ident',
      '=',
      'ident',
      'terminator',
      'ident',
      '=',
      '[',
      'number',
      ']',
      'terminator',
      'ident',
      '=',
      'ident',
      '(',
      ')',
      'terminator',
      'ident',
      '{',
      '}',
      'terminator',
      'eof',
    ]);
    expect(kinds('a = true\nb = null\n')).toEqual(['ident', '=', 'bool', 'terminator', 'ident', '=', 'null', 'terminator', 'eof']);
  });

  it('inserts no terminator after an operator, an opening bracket or a comma', () => {
    expect(kinds('a = 1 +\n2')).toEqual(['ident', '=', 'number', '+', 'number', 'terminator', 'eof']);
    expect(kinds('a = [\n1,\n]')).toEqual(['ident', '=', '[', 'number', ',', ']', 'terminator', 'eof']);
    expect(kinds('a = \n1')).toEqual(['ident', '=', 'number', 'terminator', 'eof']);
    expect(kinds('\n\n\n')).toEqual(['eof']);
  });

  it('inserts a terminator at the end of the file, with an empty text', () => {
    const { tokens } = tokenize('a = 1', 'f');
    expect(tokens.map((t) => [t.kind, t.text])).toEqual([
      ['ident', 'a'],
      ['=', '='],
      ['number', '1'],
      ['terminator', ''],
      ['eof', ''],
    ]);
    expect(describeToken(tokens[3]!)).toBe('end of file');
  });

  it('treats a comment running to the end of the line like the newline', () => {
    const { tokens, comments } = tokenize('a = 1 // one\nb = 2 /* two\n lines */ c', 'f');
    expect(tokens.map((t) => t.kind)).toEqual([
      'ident',
      '=',
      'number',
      'terminator',
      'ident',
      '=',
      'number',
      'terminator',
      'ident',
      'terminator',
      'eof',
    ]);
    expect(tokens[3]!.pos).toEqual({ file: 'f', line: 1, col: 7, offset: 6 });
    expect(comments.map((c) => c.text)).toEqual(['// one', '/* two\n lines */']);
  });

  it('keeps a one-line block comment between tokens out of the way', () => {
    expect(kinds('a = /* x */ 1 /* y */ + 2')).toEqual(['ident', '=', 'number', '+', 'number', 'terminator', 'eof']);
    expect(kinds('a = 1 /* x */\nb = 2')).toEqual(['ident', '=', 'number', 'terminator', 'ident', '=', 'number', 'terminator', 'eof']);
  });

  it('drops carriage returns from comments', () => {
    const { comments } = tokenize('// a\r\n/* b\r\nc */\r\n', 'f');
    expect(comments.map((c) => c.text)).toEqual(['// a', '/* b\nc */']);
  });

  it('scans every operator and punctuation mark', () => {
    const all = '|| && ! = == != < <= > >= + - * / % ^ { } ( ) [ ] , .';
    expect(texts(all).slice(0, -1)).toEqual(all.split(' '));
    expect(kinds('a<=b')).toEqual(['ident', '<=', 'ident', 'terminator', 'eof']);
    expect(kinds('!x')).toEqual(['!', 'ident', 'terminator', 'eof']);
  });

  it('scans integers and floats with fractions and exponents', () => {
    expect(
      tokenize('1 123 1.5 .5 1. 1e3 1E+3 2.5e-10', 'f')
        .tokens.slice(0, -2)
        .map((t) => [t.kind, t.text]),
    ).toEqual([
      ['number', '1'],
      ['number', '123'],
      ['float', '1.5'],
      ['float', '.5'],
      ['float', '1.'],
      ['float', '1e3'],
      ['float', '1E+3'],
      ['float', '2.5e-10'],
    ]);
  });

  it('scans identifiers with Unicode letters and digits, and the keywords', () => {
    expect(
      tokenize('_a1 héllo ñ٣ true false null truth', 'f')
        .tokens.slice(0, -2)
        .map((t) => [t.kind, t.text]),
    ).toEqual([
      ['ident', '_a1'],
      ['ident', 'héllo'],
      ['ident', 'ñ٣'],
      ['bool', 'true'],
      ['bool', 'false'],
      ['null', 'null'],
      ['ident', 'truth'],
    ]);
  });

  it('decodes string literals and keeps their source text', () => {
    const [token] = tokenize('"a\\tb"', 'f').tokens;
    expect(token).toMatchObject({ kind: 'string', text: '"a\\tb"', value: 'a\tb' });
    const [raw] = tokenize('`x\ny`', 'f').tokens;
    expect(raw).toMatchObject({ kind: 'string', text: '`x\ny`', value: 'x\ny', end: { line: 2, col: 3 } });
  });

  it('counts columns in characters, not UTF-16 units', () => {
    const { tokens } = tokenize('a = "😀" + b', 'f');
    expect(tokens[3]!.pos).toEqual({ file: 'f', line: 1, col: 9, offset: 9 });
  });

  it('skips a byte order mark at the start', () => {
    const { tokens } = tokenize('\ufeffa = 1', 'f');
    expect(tokens[0]).toMatchObject({ kind: 'ident', text: 'a', pos: { line: 1, col: 1, offset: 1 } });
  });

  it('turns bad text into illegal tokens that carry their error, and goes on', () => {
    const { tokens } = tokenize('a = "\\q" @ 1e\n', 'f');
    expect(tokens.map((t) => t.kind)).toEqual(['ident', '=', 'illegal', 'illegal', 'illegal', 'terminator', 'eof']);
    expect(tokens.slice(2, 5).map((t) => t.error)).toEqual([
      { message: 'unknown escape sequence "\\q"', pos: { file: 'f', line: 1, col: 6, offset: 5 } },
      { message: 'unexpected character "@" (U+0040)', pos: { file: 'f', line: 1, col: 10, offset: 9 } },
      { message: 'malformed number "1e": exponent has no digits', pos: { file: 'f', line: 1, col: 12, offset: 11 } },
    ]);
  });
});

describe('numberLiteralValue', () => {
  it('reads integers like Go ParseInt with base 0, so a leading zero means octal', () => {
    expect(numberLiteralValue('42')).toBe(42);
    expect(numberLiteralValue('010')).toBe(8);
    expect(numberLiteralValue('0')).toBe(0);
    expect(numberLiteralValue('09')).toBe(9);
  });

  it('reads floats', () => {
    expect(numberLiteralValue('1.5')).toBe(1.5);
    expect(numberLiteralValue('.5')).toBe(0.5);
    expect(numberLiteralValue('1.')).toBe(1);
    expect(numberLiteralValue('1e3')).toBe(1000);
  });

  it('tells the float kind from the integer kind', () => {
    expect(['1.0', '.5', '1e3', '09'].map(isFloatLiteral)).toEqual([true, true, true, true]);
    expect(['1', '010', '0'].map(isFloatLiteral)).toEqual([false, false, false]);
  });
});

describe('isIdentifier', () => {
  it('accepts identifiers and rejects keywords, empty text and other characters', () => {
    expect(['a', '_', 'a_b9', 'é'].every(isIdentifier)).toBe(true);
    expect(['', '9a', 'a-b', 'a.b', 'true', 'false', 'null', 'a b'].some(isIdentifier)).toBe(false);
  });
});
