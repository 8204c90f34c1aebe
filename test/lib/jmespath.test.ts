import { clearCustomFunctions, getCustomFunctions, search } from '@jmespath-community/jmespath';
import { describe, expect, it } from 'vitest';
import { compileJmesPath, JmesPathSyntaxError } from '../../lib/jmespath.js';

const data = {
  a: 'x',
  n: 4,
  z: 0,
  obj: { constructor: 'own' },
  nested: { toString: 1 },
  list: [{ n: 2 }, { n: 1 }, { n: 3 }],
};
const evaluate = (expression: string, input: unknown = data) => compileJmesPath(expression).search(input);

describe('the Go dialect, computed by the engine on a rewritten tree', () => {
  it.each([
    ['a.constructor || `"none"`', 'none'],
    ['obj.constructor', 'own'],
    ['[nested.toString, nested.valueOf]', [1, null]],
    ['user-agent', null],
    ['a - n', null],
    ['-a', null],
    ['-n', -4],
    ['+n', 4],
    ['n % `3`', 1],
    ['n // `3`', 1],
    ['n / z', Number.POSITIVE_INFINITY],
    ['-n / z', Number.NEGATIVE_INFINITY],
    ['missing.{x: a}', null],
    ['missing | {x: a}', null],
    ['[missing].{x: @}', { x: [null] }],
    ['sort_by(list, &-n)[].n', [3, 2, 1]],
    ['map(&n * `2`, list)', [4, 2, 6]],
    ['let $x = to_string(obj) in upper($x)', '{"CONSTRUCTOR":"OWN"}'],
    ["upper('ßa')", 'ßA'],
    ["find_first('héllo', 'l')", 3],
    ['to_string(`{"b":"<"}`)', '{"b":"\\u003c"}'],
    ["to_number('0x1p-2')", 0.25],
    ['`{"type": "Field", "name": "constructor"}`.name', 'constructor'],
  ])('%s gives %j', (expression, expected) => {
    expect(evaluate(expression)).toEqual(expected);
  });

  it('divides zero by zero into NaN, as Go float64 division does', () => {
    expect(evaluate('z / z')).toBeNaN();
  });

  it('checks the replaced functions arguments as the engine checks its own', () => {
    expect(() => evaluate('upper(n)')).toThrow('expected argument 1 to be type (string) but received type number instead.');
  });
});

describe('the engine other code in the process sees', () => {
  it('keeps its built-in functions as it ships them', () => {
    evaluate("upper('ß')");
    expect(search({}, "upper('ß')")).toBe('SS');
    expect(() => search({ n: 'x' }, 'n - `1`')).toThrow('not-a-number');
  });

  it('cannot call the private functions from an expression', () => {
    expect(() => compileJmesPath("go:upper('a')")).toThrow(JmesPathSyntaxError);
    expect(getCustomFunctions().every((name) => name.startsWith('go:'))).toBe(true);
  });

  it('registers them again after the package custom functions were cleared', () => {
    const compiled = compileJmesPath("upper('ßa')");
    clearCustomFunctions();
    expect(compiled.search({})).toBe('ßA');
  });
});
