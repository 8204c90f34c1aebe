import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('sprig list functions', () => {
  it.each([
    ['{{ list 1 "a" nil }}|{{ tuple 1 2 }}|{{ list }}', '[1 a <nil>]|[1 2]|[]'],
    [
      '{{ first (list 1 2) }}|{{ last (list 1 2) }}|{{ first (list) }}|{{ rest (list 1 2 3) }}|{{ initial (list 1 2 3) }}|{{ rest (list) }}',
      '1|2|<no value>|[2 3]|[1 2]|[]',
    ],
    [
      '{{ append (list 1) 2 }}|{{ push (list) "x" }}|{{ prepend (list 1) 0 }}|{{ concat (list 1) (list 2 3) (splitList "," "a,b") }}',
      '[1 2]|[x]|[0 1]|[1 2 3 a b]',
    ],
    [
      '{{ reverse (list 1 2 3) }}|{{ uniq (list 1 1 "1" 2 1) }}|{{ without (list 1 2 3 2) 2 }}|{{ has 2 (list 1 2) }}|{{ has 2 nil }}',
      '[3 2 1]|[1 1 2]|[1 3]|true|false',
    ],
    ['{{ compact (list 0 1 "" "a" nil (list) false) }}|{{ chunk 2 (list 1 2 3 4 5) }}|{{ chunk 3 (list) }}', '[1 a]|[[1 2] [3 4] [5]]|[]'],
    [
      '{{ slice (list 1 2 3) 1 }}|{{ slice (list 1 2 3) 1 2 }}|{{ slice (list 1 2 3) "1" }}|{{ slice (list) }}',
      '[2 3]|[2]|[2 3]|<no value>',
    ],
    ['{{ splitList "," "a,b,c" }}|{{ splitList "" "héj" }}|{{ printf "%T" (splitList "," "") }}', '[a b c]|[h é j]|[]string'],
    [
      '{{ $v := "foo$bar$baz" | split "$" }}{{ $v._0 }} {{ $v }}|{{ splitn "$" 2 "foo$bar$baz" }}',
      'foo map[_0:foo _1:bar _2:baz]|map[_0:foo _1:bar$baz]',
    ],
    [
      '{{ tuple "a" "b" "c" | join "-" }}|{{ tuple 1 2 3 | join "-" }}|{{ join "-" .V }}|{{ join "," (list "1" nil "2") }}',
      'a-b-c|1-2-3|abc|1,2',
    ],
    ['{{ list "c" "a" "b" | sortAlpha | join "" }}|{{ list 2 10 1 | sortAlpha }}|{{ sortAlpha "x" }}', 'abc|[1 10 2]|[x]'],
    ['{{ $s := list 1 2 3 | toStrings }}{{ index $s 1 | kindOf }}|{{ list 1 .value 2 | toStrings }}', 'string|[1 2]'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template, { V: 'abc', value: null })).toBe(want);
  });

  it('reports non-list arguments with sprig messages and nil lists as a Go nil dereference', () => {
    expect(renderError('{{ first "abc" }}')).toContain('error calling first: Cannot find first on type string');
    expect(renderError('{{ slice "abc" 1 }}')).toContain('error calling slice: list should be type of slice or array but string');
    expect(renderError('{{ concat (list 1) 2 }}')).toContain('error calling concat: Cannot concat type int as list');
    expect(renderError('{{ first .missing }}')).toContain(
      'error calling first: runtime error: invalid memory address or nil pointer dereference',
    );
  });
});
