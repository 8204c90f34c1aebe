import { describe, expect, it } from 'vitest';
import { type Json, JsonPathError, jsonPath } from '../../../lib/config/jsonpath.js';
import { evaluate, type ConfigValue, type EvalScope } from '../../../lib/config/evaluate.js';
import { ConfigError } from '../../../lib/config/errors.js';
import { parseExpression } from '../../../lib/config/parser.js';

const store: Json = {
  store: {
    book: [
      { category: 'reference', author: 'Nigel Rees', title: 'Sayings of the Century', price: 8.95 },
      { category: 'fiction', author: 'Evelyn Waugh', title: 'Sword of Honour', price: 12.99 },
      { category: 'fiction', author: 'Herman Melville', title: 'Moby Dick', isbn: '0-553-21311-3', price: 8.99 },
      { category: 'fiction', author: 'J. R. R. Tolkien', title: 'The Lord of the Rings', isbn: '0-395-19395-8', price: 22.99 },
    ],
    bicycle: { color: 'red', price: 19.95 },
  },
};

const noScope: EvalScope = { resolve: () => undefined };

function run(text: string): ConfigValue {
  return evaluate(parseExpression(text, 'e.alloy'), noScope);
}

function failure(text: string): string {
  try {
    run(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).message;
  }
  throw new Error(`expected ${text} to fail`);
}

describe('json_path in the config language', () => {
  it('gives the results of the reference documentation examples', () => {
    expect(run('json_path("{\\"key\\": \\"value\\"}", ".key")')).toEqual(['value']);
    expect(
      run(
        'json_path("[{\\"name\\": \\"Department\\",\\"value\\": \\"IT\\"},{\\"name\\":\\"TestStatus\\",\\"value\\":\\"Pending\\"}]", "[?(@.name == \\"Department\\")].value")',
      ),
    ).toEqual(['IT']);
    expect(run('json_path("{\\"key\\": \\"value\\"}", ".nonexists")')).toEqual([]);
    expect(run('json_path("{\\"key\\": \\"value\\"}", ".key")[0]')).toBe('value');
  });

  it('returns JSON numbers as floats, as the reference decodes them', () => {
    expect(run('json_path("{\\"a\\": [1, 2.5]}", "$.a[*]")')).toEqual([1, 2.5]);
    expect(run('json_path("{\\"a\\": 7}", "$.a")[0] / 2')).toBe(3.5);
  });

  it('names the argument that is wrong', () => {
    // Newer Node versions add the line and column to JSON.parse's message.
    expect(failure('json_path("{", "$")')).toMatch(
      /^e\.alloy:1:11: json_path: invalid JSON: Expected property name or '\}' in JSON at position 1( \(line 1 column 2\))?$/,
    );
    expect(failure('json_path("{}", "$.a[")')).toBe(
      'e.alloy:1:17: json_path: invalid JSONPath "$.a[": unexpected the end at 4, expected an index, a name, "*" or a filter',
    );
    expect(failure('json_path(1, "$")')).toBe('e.alloy:1:11: json_path: argument 1 must be a string, got number');
    expect(failure('json_path("{}")')).toBe('e.alloy:1:1: json_path expects 2 arguments, got 1');
  });
});

describe('constants', () => {
  it('gives the version as v and the package version', async () => {
    const { version } = (await import('../../../package.json', { with: { type: 'json' } })).default as { version: string };
    expect(run('constants.version')).toBe(`v${version}`);
  });
});

describe('jsonPath', () => {
  it('selects children, wildcards, indexes, unions and slices', () => {
    expect(jsonPath(store, '$.store.bicycle.color')).toEqual(['red']);
    expect(jsonPath(store, "$['store']['bicycle']")).toEqual([{ color: 'red', price: 19.95 }]);
    expect(jsonPath(store, '$.store.book[*].author')).toEqual(['Nigel Rees', 'Evelyn Waugh', 'Herman Melville', 'J. R. R. Tolkien']);
    expect(jsonPath(store, '$.store.book[-1].title')).toEqual(['The Lord of the Rings']);
    expect(jsonPath(store, '$.store.book[0,2].price')).toEqual([8.95, 8.99]);
    expect(jsonPath(store, '$.store.book[1:3].price')).toEqual([12.99, 8.99]);
    expect(jsonPath(store, '$.store.book[::-2].price')).toEqual([22.99, 12.99]);
    expect(jsonPath(store, '$.store.book[:2].category')).toEqual(['reference', 'fiction']);
    expect(jsonPath(store, '$.store.bicycle.*')).toEqual(['red', 19.95]);
    expect(jsonPath(store, 'store.bicycle.color')).toEqual(['red']);
    expect(jsonPath([10, 20], '[1]')).toEqual([20]);
    expect(jsonPath(store, '$.store.book[9]')).toEqual([]);
    expect(jsonPath(store, '$.store.bicycle[0]')).toEqual([]);
  });

  it('descends recursively in document order, members of an object in key order', () => {
    expect(jsonPath(store, '$..price')).toEqual([19.95, 8.95, 12.99, 8.99, 22.99]);
    expect(jsonPath(store, '$..book[2].author')).toEqual(['Herman Melville']);
    expect(jsonPath({ a: { b: 1 }, c: [{ b: 2 }] }, '$..b')).toEqual([1, 2]);
  });

  it('filters with comparisons, logic and existence', () => {
    expect(jsonPath(store, '$.store.book[?(@.price < 10)].title')).toEqual(['Sayings of the Century', 'Moby Dick']);
    expect(jsonPath(store, '$.store.book[?(@.isbn)].author')).toEqual(['Herman Melville', 'J. R. R. Tolkien']);
    expect(jsonPath(store, '$.store.book[?(!@.isbn)].author')).toEqual(['Nigel Rees', 'Evelyn Waugh']);
    expect(jsonPath(store, "$.store.book[?(@.category == 'fiction' && @.price >= 12.99)].price")).toEqual([12.99, 22.99]);
    expect(jsonPath(store, '$.store.book[?(@.price > 20 || @.author == "Nigel Rees")].price')).toEqual([8.95, 22.99]);
    expect(jsonPath(store, '$.store.book[?(@.price <= $.store.bicycle.price)].price')).toEqual([8.95, 12.99, 8.99]);
    expect(jsonPath(store, '$.store.book[?(@.isbn != "0-553-21311-3")].price')).toEqual([8.95, 12.99, 22.99]);
    expect(jsonPath([1, 'a', null, true], '$[?(@ == null)]')).toEqual([null]);
    expect(jsonPath([{ a: [1, 2] }, { a: [1] }], '$[?(@.a == @.a)].a')).toEqual([[1, 2], [1]]);
  });

  it('refuses what it does not parse, saying where', () => {
    const error = (path: string) => {
      try {
        jsonPath(store, path);
      } catch (err) {
        expect(err).toBeInstanceOf(JsonPathError);
        return (err as Error).message;
      }
      throw new Error(`expected ${path} to fail`);
    };
    expect(error('$.')).toBe('unexpected the end at 2, expected a name');
    expect(error('$[?(@.a =~ /x/)]')).toBe('regular expression matches (=~) are not supported, at 8');
    expect(error("$['a")).toBe('unterminated string starting at 2');
    expect(error('$.a b')).toBe('unexpected "b" at 4');
  });
});
