import { describe, expect, it } from 'vitest';
import { dottedPath, evaluate, isCapsule, makeCapsule, typeOf, type ConfigValue, type EvalScope } from '../../../lib/config/evaluate.js';
import { parseConfig, parseExpression } from '../../../lib/config/parser.js';
import { ConfigError } from '../../../lib/config/errors.js';

const receiver = makeCapsule('logs.receiver', { name: 'r' });

/** A scope holding one component, `loki.write.default`, and a few plain values. */
const scope: EvalScope = {
  resolve(path): ConfigValue | undefined {
    const joined = path.join('.');
    if (joined === 'loki.write.default') return { receiver, info: { tags: ['a', 'b'] } };
    if (joined === 'local.value') return { list: [1, 2, 3], name: 'n' };
    return undefined;
  },
  env: (name) => ({ HOME: '/home/me', EMPTY: '' })[name],
};

function run(text: string, s: EvalScope = scope): ConfigValue {
  return evaluate(parseExpression(text, 'e.alloy'), s);
}

function failure(text: string, s: EvalScope = scope): string {
  try {
    run(text, s);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).message;
  }
  throw new Error(`expected ${text} to fail`);
}

describe('evaluate: literals and containers', () => {
  it('evaluates literals', () => {
    expect(run('"x"')).toBe('x');
    expect(run('12')).toBe(12);
    expect(run('1.5e1')).toBe(15);
    expect(run('true')).toBe(true);
    expect(run('null')).toBe(null);
  });

  it('evaluates arrays and objects, quoted keys as written', () => {
    expect(run('[1, "a", [true], {}]')).toEqual([1, 'a', [true], {}]);
    expect(run('{ a = 1, "b-c" = [null], "d\\te" = 2 }')).toEqual({ a: 1, 'b-c': [null], 'd\\te': 2 });
  });

  it('lets the last of two equal keys win', () => {
    expect(run('{ a = 1, b = 2, a = 3 }')).toEqual({ a: 3, b: 2 });
  });

  it('makes __proto__ an ordinary key', () => {
    const value = run('{ "__proto__" = { polluted = true } }') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('evaluate: operators', () => {
  it('keeps integer and float arithmetic apart, as the reference does', () => {
    expect(run('7 / 2')).toBe(3);
    expect(run('-7 / 2')).toBe(-3);
    expect(run('7.0 / 2')).toBe(3.5);
    expect(run('7 / 2.0')).toBe(3.5);
    expect(run('7 % 3')).toBe(1);
    expect(run('-7 % 3')).toBe(-1);
    expect(run('7.5 % 2')).toBe(1.5);
    expect(run('1 + 2 * 3')).toBe(7);
    expect(run('(1 + 2) * 3')).toBe(9);
    expect(run('10 - 2 - 3')).toBe(5);
    expect(run('-(1 - 3)')).toBe(2);
    expect(run('0.1 + 0.2')).toBe(0.30000000000000004);
  });

  it('raises to a power, right to left', () => {
    expect(run('2 ^ 10')).toBe(1024);
    expect(run('2 ^ 3 ^ 2')).toBe(512);
    expect(run('2.0 ^ -1')).toBe(0.5);
    expect(run('0 ^ 0')).toBe(1);
    // The reference's integer power loop leaves the base unchanged for a negative exponent.
    expect(run('2 ^ -1')).toBe(2);
  });

  it('concatenates and compares strings by code point', () => {
    expect(run('"ab" + "cd"')).toBe('abcd');
    expect(run('"a" < "b"')).toBe(true);
    expect(run('"b" <= "a"')).toBe(false);
    expect(run('"abc" > "ab"')).toBe(true);
    expect(run('"\\uffff" < "😀"')).toBe(true);
  });

  it('compares numbers of either kind', () => {
    expect(run('1 < 2')).toBe(true);
    expect(run('2.5 >= 2')).toBe(true);
    expect(run('3 > 3')).toBe(false);
    expect(run('3 <= 3.0')).toBe(true);
  });

  it('compares any two values with == and != deeply', () => {
    expect(run('1 == 1.0')).toBe(true);
    expect(run('1 == "1"')).toBe(false);
    expect(run('null == null')).toBe(true);
    expect(run('[1, "a", {b = [2]}] == [1, "a", {b = [2]}]')).toBe(true);
    expect(run('{a = 1} == {a = 1, b = 2}')).toBe(false);
    expect(run('{a = 1} != {b = 1}')).toBe(true);
    expect(run('loki.write.default.receiver == loki.write.default.receiver')).toBe(true);
    expect(run('string.format == string.format')).toBe(false);
  });

  it('combines bools and always evaluates both sides', () => {
    expect(run('true && false')).toBe(false);
    expect(run('false || true')).toBe(true);
    expect(run('!true')).toBe(false);
    expect(run('!!true')).toBe(true);
    expect(failure('true || nope')).toBe('e.alloy:1:9: unknown reference "nope"');
  });

  it('rejects operands of the wrong type at the operand', () => {
    expect(failure('1 + true')).toBe('e.alloy:1:5: "+" expects numbers or strings, got bool');
    expect(failure('[1] + [2]')).toBe('e.alloy:1:1: "+" expects numbers or strings, got array');
    expect(failure('"a" - "b"')).toBe('e.alloy:1:1: "-" expects numbers, got string');
    expect(failure('1 && true')).toBe('e.alloy:1:1: "&&" expects bools, got number');
    expect(failure('1 < "2"')).toBe('e.alloy:1:5: "<" needs operands of the same type, got number and string');
    expect(failure('1 + "a"')).toBe('e.alloy:1:5: "+" needs operands of the same type, got number and string');
    expect(failure('!1')).toBe('e.alloy:1:2: "!" expects a bool, got number');
    expect(failure('-"x"')).toBe('e.alloy:1:2: "-" expects a number, got string');
    expect(failure('loki.write.default.receiver + 1')).toBe('e.alloy:1:1: "+" expects numbers or strings, got capsule');
  });

  it('rejects division by zero at the divisor', () => {
    expect(failure('1 / 0')).toBe('e.alloy:1:5: division by zero');
    expect(failure('1 % (2 - 2)')).toBe('e.alloy:1:5: division by zero');
    expect(failure('1.0 / 0.0')).toBe('e.alloy:1:7: division by zero');
  });
});

describe('evaluate: references', () => {
  it('resolves a dotted reference through the scope, longest path first', () => {
    expect(run('loki.write.default.receiver')).toBe(receiver);
    expect(run('[loki.write.default.receiver]')).toEqual([receiver]);
    expect(run('loki.write.default.info.tags[1]')).toBe('b');
    expect(run('local.value.list[0] + 1')).toBe(2);
    expect(run('local.value["name"]')).toBe('n');
  });

  it('passes the whole dotted path to the scope, then shorter prefixes', () => {
    const asked: string[] = [];
    const recording: EvalScope = {
      resolve(path) {
        asked.push(path.join('.'));
        return path.length === 2 ? { c: { d: 1 } } : undefined;
      },
    };
    expect(run('a.b.c.d', recording)).toBe(1);
    expect(asked).toEqual(['a.b.c.d', 'a.b.c', 'a.b']);
  });

  it('lets the scope shadow the standard library', () => {
    const shadowing: EvalScope = { resolve: (path) => (path.length === 1 && path[0] === 'string' ? { format: 'mine' } : undefined) };
    expect(run('string.format', shadowing)).toBe('mine');
  });

  it('reports unknown references at the identifier with the whole path', () => {
    expect(failure('1 + nope.x.y')).toBe('e.alloy:1:5: unknown reference "nope.x.y"');
    expect(failure('string.nope("x")')).toBe('e.alloy:1:1: unknown reference "string.nope"');
  });

  it('reports missing fields and bad accesses', () => {
    expect(failure('loki.write.default.nope')).toBe('e.alloy:1:1: field "nope" does not exist');
    expect(failure('local.value.name.x')).toBe('e.alloy:1:1: cannot access field "x" on a value of type string');
    expect(failure('loki.write.default.receiver.x')).toBe('e.alloy:1:1: cannot access field "x" on a value of type capsule');
    expect(failure('[1].x')).toBe('e.alloy:1:1: cannot access field "x" on a value of type array');
  });

  it('indexes arrays by number and objects by string', () => {
    expect(run('[10, 20, 30][2]')).toBe(30);
    expect(run('[10, 20][1.9]')).toBe(20);
    expect(run('{a = 1}["a"]')).toBe(1);
    expect(run('{a = 1}["b"]')).toBe(null);
    expect(run('({a = {b = [5]}}).a.b[0]')).toBe(5);
  });

  it('reports bad indexes at the index', () => {
    expect(failure('[1, 2][2]')).toBe('e.alloy:1:8: index 2 is out of range of array with length 2');
    expect(failure('[1, 2][-1]')).toBe('e.alloy:1:8: index -1 is out of range of array with length 2');
    expect(failure('[1]["a"]')).toBe('e.alloy:1:5: array index must be a number, got string');
    expect(failure('{a = 1}[0]')).toBe('e.alloy:1:9: object key must be a string, got number');
    expect(failure('"abc"[0]')).toBe('e.alloy:1:1: cannot index a value of type string');
  });

  it('rejects calling something that is not a function, and functions used as values', () => {
    expect(failure('local.value.name(1)')).toBe('e.alloy:1:1: cannot call a value of type string');
    expect(failure('[string.format]')).toBe('e.alloy:1:1: function string.format cannot be used as a value; call it');
  });

  it('evaluates attribute values taken from a parsed file', () => {
    const file = parseConfig('logs.process "default" {\n  forward_to = [loki.write.default.receiver]\n}', 'c.alloy');
    const block = file.body[0]!;
    if (block.kind !== 'block' || block.body[0]!.kind !== 'attribute') throw new Error('unexpected shape');
    expect(evaluate(block.body[0]!.value, scope)).toEqual([receiver]);
  });
});

describe('evaluate: standard library', () => {
  it('reads the environment through the scope, unset variables as ""', () => {
    expect(run('sys.env("HOME")')).toBe('/home/me');
    expect(run('sys.env("UNSET")')).toBe('');
    expect(run('env("HOME")')).toBe('/home/me');
  });

  it('falls back to the process environment when the scope has none', () => {
    process.env.RIVULET_CONFIG_TEST = 'from-process';
    try {
      expect(run('sys.env("RIVULET_CONFIG_TEST")', { resolve: () => undefined })).toBe('from-process');
    } finally {
      delete process.env.RIVULET_CONFIG_TEST;
    }
  });

  it('coalesce returns the first non-zero argument, else the last', () => {
    expect(run('coalesce()')).toBe(null);
    expect(run('coalesce(sys.env("EMPTY"), "fallback")')).toBe('fallback');
    expect(run('coalesce(sys.env("HOME"), "fallback")')).toBe('/home/me');
    expect(run('coalesce([], ["x"])')).toEqual(['x']);
    expect(run('coalesce(0, 1, 2)')).toBe(1);
    expect(run('coalesce(false, true)')).toBe(true);
    expect(run('coalesce(encoding.from_json("{}"), false)')).toBe(false);
    expect(run('coalesce([], null)')).toBe(null);
    expect(run('coalesce(null, loki.write.default.receiver)')).toBe(receiver);
  });

  it('concatenates arrays', () => {
    expect(run('array.concat([true, "foo"], [], [false, 1])')).toEqual([true, 'foo', false, 1]);
    expect(run('concat()')).toEqual([]);
    expect(failure('array.concat([1], "x")')).toBe('e.alloy:1:19: array.concat: argument 2 must be an array, got string');
    expect(failure('concat(1)')).toBe('e.alloy:1:8: concat: argument 1 must be an array, got number');
  });

  it('combines arrays of objects on matching keys', () => {
    expect(run('array.combine_maps([{a = 1, b = 2.2}], [{a = 1, c = "c1"}, {a = 2}], ["a"])')).toEqual([{ a: 1, b: 2.2, c: 'c1' }]);
    expect(failure('array.combine_maps([{a = 1}], [{a = 1}], [])')).toBe(
      'e.alloy:1:42: array.combine_maps: merge conditions must not be empty',
    );
    expect(failure('array.combine_maps([{a = 1}], ["a"], ["a"])')).toBe(
      'e.alloy:1:31: array.combine_maps: element 0 of argument 2 must be an object, got string',
    );
  });

  it('formats strings the way Go fmt.Sprintf does', () => {
    expect(run('string.format("Hello %s", "World")')).toBe('Hello World');
    expect(run('string.format("%d items at %v each, %q", 3, 1.5, "x")')).toBe('3 items at 1.5 each, "x"');
    expect(run('string.format("%#v %#v", 1, true)')).toBe('1 true');
    expect(run('string.format("%v", 7.0 / 2)')).toBe('3.5');
    expect(run('string.format("%v", 2.0 * 1000000)')).toBe('2e+06');
    expect(run('string.format("%d", 2.0)')).toBe('%!d(float64=2)');
    // Inside a map or slice, a nil element prints as <nil> whatever the verb, as in Go.
    expect(run('string.format("%v|%s", [1, "a"], {b = null})')).toBe('[1 a]|map[b:<nil>]');
    expect(run('format("%s-%s", "a")')).toBe('a-%!s(MISSING)');
    expect(failure('string.format()')).toBe('e.alloy:1:1: string.format expects at least 1 argument, got 0');
  });

  it('joins, splits and replaces', () => {
    expect(run('string.join(["foo", "bar", "baz"], ", ")')).toBe('foo, bar, baz');
    expect(run('string.join([0, 0, 1], ", ")')).toBe('0, 0, 1');
    expect(run('join([1.5, "x"], "")')).toBe('1.5x');
    expect(run('string.split("/aaa/bbb", "/")')).toEqual(['', 'aaa', 'bbb']);
    expect(run('string.split("a😀b", "")')).toEqual(['a', '😀', 'b']);
    expect(run('string.split("", "")')).toEqual([]);
    expect(run('string.split("", ",")')).toEqual(['']);
    expect(run('string.replace("Hello World", " World", "!")')).toBe('Hello!');
    expect(run('string.replace("aaa", "a", "b")')).toBe('bbb');
    expect(run('string.replace("ab", "", "-")')).toBe('-a-b-');
    expect(failure('string.join(["a", true], ",")')).toBe('e.alloy:1:13: string.join: element 1 of argument 1 must be a string, got bool');
    expect(failure('string.split("a")')).toBe('e.alloy:1:1: string.split expects 2 arguments, got 1');
    expect(failure('string.split("a", [","])')).toBe('e.alloy:1:19: string.split: argument 2 must be a string, got array');
  });

  it('changes case one character at a time, as Go does', () => {
    expect(run('string.to_lower("ÀBC")')).toBe('àbc');
    expect(run('string.to_upper("straße")')).toBe('STRAßE');
    expect(run('to_upper("x")')).toBe('X');
  });

  it('trims', () => {
    expect(run('string.trim("?!hello?!", "!?")')).toBe('hello');
    expect(run('string.trim("   hello! world.!  ", "! ")')).toBe('hello! world.');
    expect(run('string.trim_prefix("helloworld", "hello")')).toBe('world');
    expect(run('string.trim_prefix("helloworld", "world")')).toBe('helloworld');
    expect(run('string.trim_suffix("helloworld", "world")')).toBe('hello');
    expect(run('string.trim_suffix("hello", "")')).toBe('hello');
    expect(run('string.trim_space("  \\t string \\n\\n")')).toBe('string');
    expect(run('string.trim_space("\\u00a0x\\u3000")')).toBe('x');
    // U+FEFF is not white space for Go.
    expect(run('string.trim_space("\\ufeffx")')).toBe('\ufeffx');
  });

  it('decodes JSON, with every number a float', () => {
    expect(run('encoding.from_json("{\\"foo\\": \\"bar\\", \\"n\\": [0, 1.5, null]}")')).toEqual({ foo: 'bar', n: [0, 1.5, null] });
    expect(run('json_decode("[7]")[0] / 2')).toBe(3.5);
    expect(failure('encoding.from_json("{")')).toMatch(/^e\.alloy:1:20: encoding\.from_json: invalid JSON: /);
  });

  it('encodes JSON with sorted keys', () => {
    expect(run('encoding.to_json({b = [1, "<"], a = null})')).toBe('{"a":null,"b":[1,"\\u003c"]}');
    expect(failure('encoding.to_json(12)')).toBe('e.alloy:1:18: encoding.to_json: argument 1 must be an object, got number');
  });

  it('encodes and decodes base64', () => {
    expect(run('encoding.from_base64("Zm9vYmFyMTIzIT8kKiYoKSctPUB+")')).toBe("foobar123!?$*&()'-=@~");
    expect(run('base64_decode("aMOp")')).toBe('hé');
    expect(run('encoding.from_URLbase64("c3RyaW5nMTIzIT8kKiYoKSctPUB-")')).toBe("string123!?$*&()'-=@~");
    expect(run('encoding.to_base64("string123!?$*&()\'-=@~")')).toBe('c3RyaW5nMTIzIT8kKiYoKSctPUB+');
    expect(run('encoding.to_URLbase64("string123!?$*&()\'-=@~")')).toBe('c3RyaW5nMTIzIT8kKiYoKSctPUB-');
    expect(failure('encoding.from_base64("Zm9v!")')).toBe('e.alloy:1:22: encoding.from_base64: illegal base64 data at input byte 4');
    expect(failure('encoding.from_base64("Zm9")')).toBe('e.alloy:1:22: encoding.from_base64: illegal base64 data at input byte 0');
  });

  it('joins file paths like Go filepath.Join', () => {
    expect(run('file.path_join("this/is", "a/path")')).toBe('this/is/a/path');
    expect(run('file.path_join()')).toBe('');
    expect(run('file.path_join("/a/", "../b", "", "./c/")')).toBe('/b/c');
    expect(run('file.path_join("a", "../..")')).toBe('..');
  });

  it('passes strings through convert.nonsensitive and exposes constants', () => {
    expect(run('convert.nonsensitive("s")')).toBe('s');
    expect(typeof run('constants.hostname')).toBe('string');
    expect(['linux', 'darwin', 'windows', 'freebsd']).toContain(run('constants.os'));
  });

  it('names stdlib functions it does not provide', () => {
    expect(failure('encoding.from_yaml("a: 1")')).toBe('e.alloy:1:1: encoding.from_yaml is not supported');
  });
});

describe('capsules and helpers', () => {
  it('recognizes capsules made by makeCapsule and plain host capsules', () => {
    expect(isCapsule(receiver)).toBe(true);
    expect(isCapsule({ capsule: 'logs.receiver', value: 1 })).toBe(true);
    expect(isCapsule({ capsule: 'x' })).toBe(false);
    expect(isCapsule([receiver])).toBe(false);
    expect(isCapsule('x')).toBe(false);
  });

  it('never takes an object written in the configuration for a capsule', () => {
    const value = run('{ capsule = "logs.receiver", value = 1 }');
    expect(value).toEqual({ capsule: 'logs.receiver', value: 1 });
    expect(isCapsule(value)).toBe(false);
    expect(isCapsule(run('[{ capsule = "x", value = 1 }]')![0 as never])).toBe(false);
  });

  it('names value types the way messages do', () => {
    expect([null, 1, 'a', true, [], {}, receiver].map((v) => typeOf(v as ConfigValue))).toEqual([
      'null',
      'number',
      'string',
      'bool',
      'array',
      'object',
      'capsule',
    ]);
  });

  it('dottedPath reads references and nothing else', () => {
    expect(dottedPath(parseExpression('a.b.c', 'x'))).toEqual(['a', 'b', 'c']);
    expect(dottedPath(parseExpression('a', 'x'))).toEqual(['a']);
    expect(dottedPath(parseExpression('a[0].b', 'x'))).toBeUndefined();
    expect(dottedPath(parseExpression('f().b', 'x'))).toBeUndefined();
  });
});
