import { describe, expect, it } from 'vitest';
import { expandTemplate } from '../../../lib/regex/go-expand.js';

const groups: Record<string, string | undefined> = { 0: 'all', 1: 'one', 2: undefined, 10: 'ten', name: 'N', 名前: 'J', '1x': undefined };
const lookup = (ref: string | number) => groups[String(ref)];

describe('expandTemplate', () => {
  it.each([
    ['$1-${1}', 'one-one'],
    ['$0', 'all'],
    ['$10', 'ten'],
    ['$1x', ''],
    ['${1}x', 'onex'],
    ['$name.$名前', 'N.J'],
    ['$2|$9|$01', '||'],
    ['$$1', '$1'],
    ['a$', 'a$'],
    ['$-x', '$-x'],
    ['${name', '${name'],
    ['${}', '${}'],
    ['$ {1}', '$ {1}'],
    ['$999999999', ''],
  ])('expands %s to %s', (template, expanded) => {
    expect(expandTemplate(template, lookup)).toBe(expanded);
  });

  it('looks a name up as a number only when it is plain ASCII digits without a leading zero', () => {
    const seen: (string | number)[] = [];
    expandTemplate('$7 $07 $٣', (ref) => (seen.push(ref), undefined));
    expect(seen).toEqual([7, '07', '٣']);
  });
});
