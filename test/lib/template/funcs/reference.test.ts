import { describe, expect, it } from 'vitest';
import { referenceFuncs, sprigFuncs } from '../../../../lib/template/index.js';
import { render, renderError } from '../render.js';

describe("the reference's own functions", () => {
  it.each([
    ['{{ ToUpper "abc" }} {{ ToLower "ÀBC" }} {{ TrimSpace "  x \\t" }}', 'ABC àbc x'],
    [
      '{{ Replace "aaa" "a" "b" -1 }} {{ Replace "aaa" "a" "b" 2 }} {{ Replace "ab" "" "-" -1 }} {{ Replace "ab" "" "-" 1 }}',
      'bbb bba -a-b- -ab',
    ],
    [
      '{{ Trim "!!x!!" "!" }} {{ TrimLeft "xxyx" "x" }} {{ TrimRight "xyxx" "x" }} {{ TrimPrefix "prefix-x" "prefix-" }} {{ TrimSuffix "x.log" ".log" }}',
      'x yx xy x x',
    ],
    ['{{ Hash .Value "salt" }}', 'a4df31f3dbab5dd36de820a441c4606beb351e680a64957a8f6bc5e2f82841a9'],
    ['{{ Sha2Hash .Value "salt" }}', '99cc7e00e4de6f55db02daf50fe67be8ee0522e41f8c0224e66615218481026d'],
    ['{{ regexReplaceAll "(Silly)" .Value "${1}foo" }}', 'this is a test'],
    ['{{ regexReplaceAll "( |Of)" "Silly Of Text" "_" }} {{ regexReplaceAllLiteral "(a)" "aba" "$1" }}', 'Silly___Text $1b$1'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template, { Value: 'this is a test' })).toBe(want);
  });

  it('hashes the concatenation of both arguments', () => {
    expect(render('{{ Hash "ab" "c" }}')).toBe(render('{{ Hash "a" "bc" }}'));
    expect(render('{{ .Value | Hash "salt" }}', { Value: 'v' })).toBe(render('{{ Hash "salt" "v" }}'));
  });

  it('fails the render on an invalid pattern', () => {
    expect(renderError('{{ regexReplaceAll "\\\\K" .Value "x" }}', { Value: 'v' })).toBe(
      'template: tpl:1:3: executing "tpl" at <regexReplaceAll "\\\\K" .Value "x">: error calling regexReplaceAll: regexp: Compile(`\\K`): error parsing regexp: invalid escape sequence: `\\K`',
    );
  });

  it('builds the map from built-ins, the whole sprig map and the custom functions', () => {
    expect(Object.keys(sprigFuncs)).toHaveLength(211);
    expect(referenceFuncs['slice']).toBe(sprigFuncs['slice']);
    expect(referenceFuncs['regexReplaceAll']).not.toBe(sprigFuncs['regexReplaceAll']);
    expect(referenceFuncs['printf']).toBeDefined();
    expect(Object.keys(referenceFuncs)).toHaveLength(211 + 18 + 11);
  });
});
