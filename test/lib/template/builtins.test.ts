import { describe, expect, it } from 'vitest';
import { builtinFuncs } from '../../../lib/template/index.js';
import { htmlEscape, jsEscape, queryEscape } from '../../../lib/template/builtins.js';
import { render, renderError } from './render.js';

const builtins = (template: string, data: unknown = {}): string => render(template, data, builtinFuncs);

describe('and, or, not', () => {
  it('returns the deciding operand and stops evaluating there', () => {
    expect(builtins('{{ and 1 0 2 }}|{{ and 1 2 3 }}|{{ or 0 "" "x" }}|{{ or 0 "" }}')).toBe('0|3|x|');
    expect(builtins('{{ or .s (index .l 9) }}', { s: 'hit', l: [] })).toBe('hit');
    expect(builtins('{{ not 0 }} {{ not .l }}', { l: [] })).toBe('true true');
  });
});

describe('comparisons', () => {
  it('compares basic kinds, and eq against any of several values', () => {
    expect(builtins('{{ eq "b" "a" "b" }} {{ ne 1 2 }} {{ lt 1.5 2.5 }} {{ le 2 2 }} {{ gt "b" "a" }} {{ ge 1 2 }}')).toBe(
      'true true true true true false',
    );
  });

  it('orders strings by bytes, not by UTF-16 units', () => {
    expect(builtins('{{ lt "\\uffff" "\\U0001F600" }} {{ lt "é" "z" }}')).toBe('true false');
  });

  it('refuses to compare an int with a float or a string', () => {
    expect(renderError('{{ eq 1 1.0 }}', {}, builtinFuncs)).toBe(
      'template: tpl:1:3: executing "tpl" at <eq 1 1.0>: error calling eq: incompatible types for comparison: int and float64',
    );
    expect(renderError('{{ lt true false }}', {}, builtinFuncs)).toContain('error calling lt: invalid type for comparison');
  });

  it('treats nil and missing operands as equal to nil only', () => {
    expect(builtins('{{ eq nil nil }} {{ eq .z nil }} {{ eq .missing "x" }}', { z: null })).toBe('true true false');
  });

  it('does not compare slices', () => {
    expect(renderError('{{ eq .l .l }}', { l: [1] }, builtinFuncs)).toContain(
      'error calling eq: non-comparable type [%!s(float64=1)]: []interface {}',
    );
  });
});

describe('len, index, slice', () => {
  it('counts bytes of strings and entries of slices and maps', () => {
    expect(builtins('{{ len "héllo" }} {{ len .l }} {{ len .m }}', { l: [1, 2], m: { a: 1 } })).toBe('6 2 1');
  });

  it('indexes slices, maps (zero value when missing) and string bytes', () => {
    expect(builtins('{{ index .l 1 }} {{ index .m "a" }} {{ index .m "zz" }} {{ index "abc" 1 }}', { l: ['x', 'y'], m: { a: 'A' } })).toBe(
      'y A <no value> 98',
    );
    expect(renderError('{{ index .l 2 }}', { l: [1, 2] }, builtinFuncs)).toContain(
      'error calling index: reflect: slice index out of range',
    );
    expect(renderError('{{ index .l 5 }}', { l: [1, 2] }, builtinFuncs)).toContain('error calling index: index out of range: 5');
  });

  it('slices strings by bytes and slices by elements', () => {
    expect(builtins('{{ slice "hello" 1 3 }} {{ slice .l 1 }} {{ slice .l 0 1 2 }}', { l: ['a', 'b', 'c'] })).toBe('el [b c] [a]');
    expect(renderError('{{ slice "abc" 0 1 2 }}', {}, builtinFuncs)).toContain('cannot 3-index slice a string');
  });
});

describe('print, html, js, urlquery', () => {
  it('prints like fmt.Sprint, Sprintf and Sprintln', () => {
    expect(builtins('{{ print 1 2 "a" }}|{{ printf "%05.1f" 3.14159 }}|{{ println "x" 1 }}')).toBe('1 2a|003.1|x 1\n');
  });

  it('escapes for HTML, JavaScript and URL queries', () => {
    expect(htmlEscape(`<a href='x'>&"\0`)).toBe('&lt;a href=&#39;x&#39;&gt;&amp;&#34;\uFFFD');
    expect(jsEscape('a\'b"c\\d<e>f&g=h\ni\u2028é\x01')).toBe('a\\\'b\\"c\\\\d\\u003Ce\\u003Ef\\u0026g\\u003Dh\\u000Ai\\u2028é\\u0001');
    expect(queryEscape('a b&c=d/é?+~._-')).toBe('a+b%26c%3Dd%2F%C3%A9%3F%2B~._-');
  });

  it('writes a nil argument of html/js/urlquery as <no value>', () => {
    expect(builtins('{{ html .missing }}|{{ urlquery nil 1 }}')).toBe('&lt;no value&gt;|%3Cno+value%3E1');
  });
});
