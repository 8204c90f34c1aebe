import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('sprig string functions', () => {
  it.each([
    ['{{ "fooo" | substr 0 3 }}', 'foo'],
    ['{{ "foo" | substr 0 10 }}', 'foo'],
    ['{{ substr -1 2 "hello" }}', 'he'],
    ['{{ "foooooo" | trunc 3 }}|{{ "baaaaaar" | trunc -3 }}|{{ "baaaaaar" | trunc -999 }}|{{ "baaaaaz" | trunc 0 }}', 'foo|aar|baaaaaar|'],
    ['{{ quote "a" "b" "c" }}|{{ quote 1 2 3 }}|{{ .value | quote }}', '"a" "b" "c"|"1" "2" "3"|'],
    ['{{ squote "a" 1 }}|{{ .value | squote }}', "'a' '1'|"],
    [
      '{{ if contains "cat" "fair catch" }}1{{ end }}{{ if hasPrefix "cat" "catch" }}2{{ end }}{{ if hasSuffix "cat" "ducat" }}3{{ end }}',
      '123',
    ],
    [
      '{{ trim "   5.00   " }}|{{ trimAll "$" "$5.00$" }}|{{ trimall "$" "$5$" }}|{{ trimPrefix "$" "$5.00" }}|{{ trimSuffix "$" "5.00$" }}',
      '5.00|5.00|5|5.00|5.00',
    ],
    ['{{ trim "\\ufeff x\\u00a0" }}', '\ufeff x'],
    ['{{ upper "héllo ß" }}|{{ lower "ÀB" }}|{{ title "hello wORLD_x" }}|{{ untitle "First Try" }}', 'HÉLLO ß|àb|Hello WORLD_x|first try'],
    ['{{ abbrev 5 "hello world" }}|{{ abbrev 3 "hello" }}|{{ abbrevboth 5 10 "1234 5678 9123" }}', 'he...|hello|...5678...'],
    ['{{ nospace "h e l l o " }}|{{ initials "First Try" }}|{{ swapcase "Hello World" }}', 'hello|FT|hELLO wORLD'],
    ['{{ nospace "é b" }}|{{ initials "élan vital" }}', 'Ã©b|Ãv'],
    [
      '{{ wrap 5 "Hello World" }}|{{ wrapWith 5 "\\t" "Hello World" }}|{{ wrapWith 3 "-" "abcdefg" }}',
      'Hello\nWorld|Hello\tWorld|abc-def-g',
    ],
    ['{{ indent 4 "a\\nb" }}|{{ nindent 2 "x" }}', '    a\n    b|\n  x'],
    ['{{ "I Am Henry VIII" | replace " " "-" }}|{{ repeat 3 "ab" }}', 'I-Am-Henry-VIII|ababab'],
    ['{{ $num := len "two" }}{{ $num }} {{ $num | plural "1 char" "chars" }}|{{ len "t" | plural "cheese" "%d chars" }}', '3 chars|cheese'],
    ['{{ $b := "b" }}{{ "c" | cat "a" $b }}|{{ .value | cat "a" "b" }}|{{ cat 1 2.5 true }}', 'a b c|a b|1 2.5 true'],
    ['{{ toString 1.5 }}|{{ toString .missing }}|{{ toString (list 1 "a") }}', '1.5|<nil>|[1 a]'],
    ['{{ hello }}', 'Hello!'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template, { value: null })).toBe(want);
  });

  it.each([
    ['FirstName', 'first_name', 'first-name', 'FirstName'],
    ['HTTPServer', 'http_server', 'http-server', 'Httpserver'],
    ['NoHTTPS', 'no_https', 'no-https', 'NoHTTPS'],
    ['GO_PATH', 'go_path', 'go-path', 'GoPath'],
    ['GO PATH', 'go_path', 'go-path', 'GoPath'],
    ['http2xx', 'http_2xx', 'http-2xx', 'Http2xx'],
    ['HTTP20xOK', 'http_20x_ok', 'http-20x-ok', 'Http20xOK'],
    ['Duration2m3s', 'duration_2m3s', 'duration-2m3s', 'Duration2m3s'],
    ['Bld4Floor3rd', 'bld4_floor_3rd', 'bld4-floor-3rd', 'Bld4Floor3rd'],
    ['http_server', 'http_server', 'http-server', 'HttpServer'],
    ['_complex__case_', '_complex__case_', '-complex--case-', '_Complex_Case_'],
  ])('converts %j to snake %j, kebab %j and camel %j', (input, snake, kebab, camel) => {
    expect(render('{{ snakecase .s }}|{{ kebabcase .s }}|{{ camelcase .s }}', { s: input })).toBe(`${snake}|${kebab}|${camel}`);
  });

  it('produces random strings of the requested length from the right alphabet', () => {
    expect(render('{{ randAlphaNum 20 }}')).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(render('{{ randAlpha 20 }}')).toMatch(/^[A-Za-z]{20}$/);
    expect(render('{{ randNumeric 20 }}')).toMatch(/^[0-9]{20}$/);
    expect(render('{{ randAscii 20 }}')).toMatch(/^[\x20-\x7e]{20}$/);
    expect(render('{{ randAlpha 0 }}{{ randAlpha -1 }}')).toBe('');
  });

  it('shuffles the runes of a string', () => {
    expect([...render('{{ shuffle "héllo" }}')].sort().join('')).toBe([...'héllo'].sort().join(''));
  });

  it('panics like Go on byte slices out of range and negative repeats', () => {
    expect(renderError('{{ substr 4 2 "hello" }}')).toContain('error calling substr: runtime error: slice bounds out of range');
    expect(renderError('{{ repeat -1 "x" }}')).toContain('error calling repeat: strings: negative Repeat count');
  });

  it('rejects a string where sprig expects an int', () => {
    expect(renderError('{{ repeat "3" "x" }}')).toBe('template: tpl:1:10: executing "tpl" at <"3">: expected integer; found "3"');
    expect(renderError('{{ repeat (add 1 2) "x" }}')).toBe(
      // Go reports the last node it visited, the 2 inside the parentheses.
      'template: tpl:1:17: executing "tpl" at <2>: wrong type for value; expected int; got int64',
    );
  });
});
