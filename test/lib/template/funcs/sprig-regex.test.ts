import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('sprig regex functions', () => {
  it.each([
    ['{{ regexMatch "^[a-z]+\\\\d$" "abc1" }} {{ regexMatch "(" "x" }}', 'true false'],
    [
      '{{ regexFindAll "[0-9]+" "a1b22c333" -1 }}|{{ regexFindAll "[0-9]+" "a1b22c333" 2 }}|{{ regexFindAll "x" "abc" -1 }}',
      '[1 22 333]|[1 22]|[]',
    ],
    ['{{ regexFind "[0-9]+" "ab12cd34" }}|{{ regexFind "x" "abc" }}', '12|'],
    [
      '{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}|{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "$1W" }}|{{ regexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "${1}" }}',
      '-W-xxW-|---|-${1}-${1}-',
    ],
    ['{{ regexSplit "z+" "pizza" -1 }}|{{ regexSplit "a*" "abaabaccadaaae" 5 }}|{{ regexSplit "," "" -1 }}', '[pi a]|[ b b c cadaaae]|[]'],
    ['{{ regexQuoteMeta "1.2.3*[x]" }}', '1\\.2\\.3\\*\\[x\\]'],
    ['{{ regexReplaceAll "(?P<word>\\\\w+)" "ab cd" "<${word}>" }}', '<ab> <cd>'],
    // Go accepts a repeated group name; ${c} is the first group of that name that took part
    ['{{ regexReplaceAll "(?:(?P<c>\\\\d+)|(?P<c>[a-z]+))" "12 ab" "<${c}>" }}', '<12> <ab>'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('panics on an invalid pattern in the plain forms and returns the error in the must forms', () => {
    expect(renderError('{{ regexFind "(" "x" }}')).toBe(
      'template: tpl:1:3: executing "tpl" at <regexFind "(" "x">: error calling regexFind: regexp: Compile(`(`): error parsing regexp: missing closing ): `(`',
    );
    expect(renderError('{{ mustRegexMatch "(" "x" }}')).toBe(
      'template: tpl:1:3: executing "tpl" at <mustRegexMatch "(" "x">: error calling mustRegexMatch: error parsing regexp: missing closing ): `(`',
    );
  });

  it.each([
    ['[a-z/', 'missing closing ]: `[a-z/`'],
    ['(?<n', 'invalid named capture: `(?<n`'],
    ['a\\\\', 'trailing backslash at end of expression: ``'],
    ['a**', 'invalid nested repetition operator: `**`'],
    ['x{2,1}', 'invalid repeat count: `{2,1}`'],
  ])('returns Go’s error for %j, in Go’s words and on the text as written', (pattern, want) => {
    expect(renderError(`{{ mustRegexFind "${pattern}" "x" }}`)).toBe(
      `template: tpl:1:3: executing "tpl" at <mustRegexFind "${pattern}" "x">: error calling mustRegexFind: error parsing regexp: ${want}`,
    );
  });
});
