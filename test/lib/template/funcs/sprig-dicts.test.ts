import { describe, expect, it } from 'vitest';
import { render, renderError } from '../render.js';

describe('sprig dictionary functions', () => {
  it.each([
    ['{{ dict "a" 1 "b" "x" }}|{{ dict "odd" }}|{{ dict 1 2 }}', 'map[a:1 b:x]|map[odd:]|map[1:2]'],
    ['{{ $d := dict "a" 1 }}{{ get $d "a" }}|{{ get $d "z" }}|{{ hasKey $d "a" }}|{{ hasKey $d "z" }}', '1||true|false'],
    ['{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ $d }}|{{ unset $d "a" }}|{{ $d }}', 'map[a:1 b:2]|map[b:2]|map[b:2]'],
    ['{{ keys (dict "b" 1 "a" 2) (dict "c" 3) | sortAlpha }}|{{ values (dict "k" 1) }}', '[a b c]|[1]'],
    ['{{ pick (dict "a" 1 "b" 2 "c" 3) "a" "c" "z" }}|{{ omit (dict "a" 1 "b" 2) "a" }}', 'map[a:1 c:3]|map[b:2]'],
    ['{{ pluck "a" (dict "a" 1) (dict "b" 2) (dict "a" 3) }}', '[1 3]'],
    ['{{ dig "a" "b" "def" (dict "a" (dict "b" "found")) }}|{{ dig "x" "y" "def" (dict) }}', 'found|def'],
    [
      '{{ merge (dict "a" 1 "b" "") (dict "b" 2 "c" 3) }}|{{ mergeOverwrite (dict "a" 1 "b" 2) (dict "b" 3 "c" "") }}',
      'map[a:1 b:2 c:3]|map[a:1 b:3 c:]',
    ],
    [
      '{{ merge (dict "n" (dict "x" 1) "l" (list 1)) (dict "n" (dict "x" 2 "y" 3) "l" (list 2)) }}|{{ mergeOverwrite (dict "l" (list 1)) (dict "l" (list 2)) }}',
      'map[l:[1] n:map[x:1 y:3]]|map[l:[2]]',
    ],
    [
      '{{ merge .missing (dict "a" 1) }}|{{ mustMerge (dict) (dict "a" nil) }}|{{ mergeOverwrite (dict "a" 1) (dict "a" nil) }}',
      'map[a:1]|map[]|map[a:<nil>]',
    ],
    ['{{ $d := dict "k" (list 1) }}{{ $c := deepCopy $d }}{{ $_ := set $c "k" 2 }}{{ $d }} {{ $c }}', 'map[k:[1]] map[k:2]'],
  ])('renders %j as %j', (template, want) => {
    expect(render(template)).toBe(want);
  });

  it('works on the template data itself', () => {
    expect(render('{{ get . "a" }}{{ hasKey . "b" }}', { a: 'x' })).toBe('xfalse');
  });

  it('fails like Go on wrong dictionary types', () => {
    expect(renderError('{{ get (list) "a" }}')).toContain('wrong type for value; expected map[string]interface {}; got []interface {}');
    expect(renderError('{{ set .missing "a" 1 }}')).toContain('error calling set: assignment to entry in nil map');
    expect(renderError('{{ dig "a" "b" "d" (dict "a" "s") }}')).toContain(
      'error calling dig: interface conversion: interface {} is string, not map[string]interface {}',
    );
  });
});
