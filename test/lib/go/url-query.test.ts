import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeQuery, escapeQueryComponent, firstQueryValue, parseQuery } from '../../../lib/go/url-query.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

describe('query strings', () => {
  it('reads plus as a space and skips pairs with semicolons or malformed escapes', () => {
    const parsed = parseQuery('name=a+b%7Bx%3Dy%7D&bad=%zz&semi=1;2&empty&from=1&from=2');
    expect([...parsed]).toEqual([
      ['name', ['a b{x=y}']],
      ['empty', ['']],
      ['from', ['1', '2']],
    ]);
  });

  it('finds the first value of one key the same way', () => {
    expect(firstQueryValue('from=1&name=a%7Bb%3Dc%7D&name=second', 'name')).toBe('a{b=c}');
    expect(firstQueryValue('name=%zz&name=ok+go', 'name')).toBe('ok go');
    expect(firstQueryValue('from=1', 'name')).toBe('');
    expect(firstQueryValue('na%6De=%C3%BC%FF', 'name')).toBe('ü\udcff');
  });

  it('keeps the stray bytes of escapes that are not valid UTF-8 (as lone surrogates) and writes them back as they came', () => {
    expect(firstQueryValue('name=%E2%82x', 'name')).toBe('\udce2\udc82x');
    expect(firstQueryValue('name=%F0%9F%98%80%F0%9F%98', 'name')).toBe('😀\udcf0\udc9f\udc98');
    expect(firstQueryValue('name=%ED%A0%80', 'name')).toBe('\udced\udca0\udc80');
    expect(parseQuery('x=%C0%AF').get('x')).toEqual(['\udcc0\udcaf']);
    expect(encodeQuery(parseQuery('x=%C0%AF&y=%E2%82x'))).toBe('x=%C0%AF&y=%E2%82x');
  });

  it('writes keys sorted, spaces as plus and everything but unreserved characters escaped', () => {
    expect(
      encodeQuery(
        new Map([
          ['name', ['my app{env=prod}']],
          ['from', ['1']],
          ['custom', ['a/b', 'c~d']],
        ]),
      ),
    ).toBe('custom=a%2Fb&custom=c~d&from=1&name=my+app%7Benv%3Dprod%7D');
    expect(escapeQueryComponent('ü')).toBe('%C3%BC');
  });

  it('reads back what it writes', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    fc.assert(
      fc.property(
        fc.dictionary(
          text.filter((k) => k !== ''),
          fc.array(text, { minLength: 1, maxLength: 3 }),
        ),
        (record) => {
          const values = new Map(Object.entries(record));
          const parsed = parseQuery(encodeQuery(values));
          expect(Object.fromEntries(parsed)).toEqual(Object.fromEntries([...values].sort(([a], [b]) => (a < b ? -1 : 1))));
        },
      ),
      { numRuns },
    );
  });
});
