import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { buildPipeline, ingress } from '../../core/pipeline.js';
import { json, type JsonConfig } from '../../operators/json.js';
import { marshalJsoniter, parseJsonObject } from '../../lib/go/jsoniter.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const anyChar = fc
  .oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0x10ffff }))
  .map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? '\uFFFD' : String.fromCodePoint(cp)));

/** Runs one stage.json directly; `failures` collects any exception the pipeline guard caught. */
function runJson(
  config: Partial<JsonConfig>,
  line: string,
  extracted: Record<string, unknown> = {},
): { out: Entry | null; failures: string[]; registry: Registry } {
  const failures: string[] = [];
  const registry = new Registry();
  const built = buildPipeline([json(config).spec], {
    clock: new ManualClock(0n),
    registry,
    debug: (message, fields) => {
      if (message.startsWith('stage failed')) failures.push(String(fields?.error));
    },
  });
  const out = built.process!(ingress(entry(line, {}, { extracted })));
  built.dispose();
  return { out, failures, registry };
}

const extract = (expressions: Record<string, string>, line: string) => runJson({ expressions }, line).out!.extracted;

describe('stage.json', () => {
  describe('expressions', () => {
    it('stores strings, numbers and booleans as they are and objects as compact JSON text', () => {
      const line = '{"app":"loki","duration":125,"ok":true,"nested":{"child":"value"},"list":["a","b"]}';
      expect(extract({ app: '', duration: '', ok: '', nested: '', list: '' }, line)).toEqual({
        app: 'loki',
        duration: 125,
        ok: true,
        nested: '{"child":"value"}',
        list: '["a","b"]',
      });
    });

    it('creates the key holding null when the path does not exist', () => {
      expect(extract({ unknown: '', deep: 'a.b.c' }, '{"x":1}')).toEqual({ unknown: null, deep: null });
    });

    it('uses the name as the expression when the expression is empty', () => {
      expect(extract({ message: '' }, '{"message":"hi"}')).toEqual({ message: 'hi' });
    });

    it('escapes < > & and sorts keys in stored JSON text', () => {
      expect(extract({ o: '' }, '{"o":{"z":"<a href=\\"x\\">&","a":1}}')).toEqual({
        o: '{"a":1,"z":"\\u003ca href=\\"x\\"\\u003e\\u0026"}',
      });
    });

    it('writes numbers inside stored JSON text the way json-iterator does', () => {
      expect(extract({ o: '' }, '{"o":[1e-7,1e21,1.5,-0,100,123456789012345678]}')).toEqual({
        o: '[1e-07,1e+21,1.5,-0,100,123456789012345680]',
      });
    });

    it('evaluates Community Edition JMESPath: arithmetic, let, items, $ and code-point length', () => {
      const line = '{"a":7,"b":2,"s":"héllo😀","o":{"k":"v"}}';
      expect(
        extract(
          { sum: 'a + b', floor: 'a // b', let: 'let $x = a in $x * `2`', items: 'items(o)', root: 'o | $.a', len: 'length(s)' },
          line,
        ),
      ).toEqual({
        sum: 9,
        floor: 3,
        let: 14,
        items: '[["k","v"]]',
        root: 7,
        len: 6,
      });
    });

    it('reads an unquoted hyphenated name as a subtraction that is silently null on strings', () => {
      expect(extract({ ua: 'user-agent' }, '{"user-agent":"curl","user":"u","agent":"a"}')).toEqual({ ua: null });
      expect(extract({ ua: 'user-agent' }, '{"user":5,"agent":2}')).toEqual({ ua: 3 });
      expect(extract({ ua: '"user-agent"' }, '{"user-agent":"curl"}')).toEqual({ ua: 'curl' });
    });

    it('divides by zero the way Go floats do', () => {
      expect(extract({ inf: 'a / `0`', nan: 'a % `0`' }, '{"a":1}')).toEqual({ inf: Infinity, nan: NaN });
    });

    it('never resolves a field to an inherited property', () => {
      expect(extract({ constructor: '', toString: '', proto: '"__proto__"' }, '{"x":1}')).toEqual({
        constructor: null,
        toString: null,
        proto: null,
      });
    });

    it('reads and stores a key named __proto__ as an ordinary key', () => {
      const { out } = runJson({ expressions: { __proto__: '' }, regex: '^__' }, '{"__proto__":"p"}');
      expect(Object.getPrototypeOf(out!.extracted)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(out!.extracted, '__proto__')?.value).toBe('p');
    });

    it('gives null for a multi-select hash on null', () => {
      expect(extract({ m: 'missing.{a: a}', l: 'items[*].{a: a}' }, '{"items":[null,{"a":1}]}')).toEqual({ m: null, l: '[{"a":1}]' });
    });

    it('converts with Go rules in to_number and to_string', () => {
      expect(extract({ n: "to_number(' 1')", m: "to_number('0x10')", s: 'to_string(o)' }, '{"o":{"b":"<","a":1}}')).toEqual({
        n: null,
        m: null,
        s: '{"a":1,"b":"\\u003c"}',
      });
    });

    it('leaves the key unset when evaluation fails', () => {
      expect(extract({ bad: 'nope(@)', abs: 'abs(s)', ok: 's' }, '{"s":"x"}')).toEqual({ ok: 'x' });
    });

    it('never changes the line or the labels', () => {
      const { entries } = runConfig('stage.json { expressions = { a = "" } }', [entry('{"a":"1"}', { job: 'x' })]);
      expect(entries[0]).toMatchObject({ line: '{"a":"1"}', labels: { job: 'x' } });
    });
  });

  describe('regex', () => {
    it('extracts top-level keys whose names match, unanchored', () => {
      expect(
        runJson({ regex: 'pod_' }, '{"time":"t","pod_name":"p","my_pod_x":{"a":[1]},"nested":{"pod_inner":1}}').out!.extracted,
      ).toEqual({
        pod_name: 'p',
        my_pod_x: '{"a":[1]}',
      });
    });

    it('overrides an expression of the same name', () => {
      expect(runJson({ expressions: { app: 'other' }, regex: '^app$' }, '{"app":"a","other":"o"}').out!.extracted).toEqual({ app: 'a' });
    });
  });

  describe('input and malformed documents', () => {
    it('accepts a literal null document as an empty object', () => {
      expect(extract({ a: '' }, 'null')).toEqual({ a: null });
    });

    it.each([
      ['plain text', 'ts=now log=notjson'],
      ['a top-level array', '[{"a":1}]'],
      ['a top-level string', '"{}"'],
      ['a top-level number', '5'],
      ['trailing garbage', '{"a":1} x'],
      ['a broken object', '{"page": 1, fruits": ["apple"]}'],
      ['an out-of-range number', '{"a":1e400}'],
      ['a 400-digit number', `{"a":${'9'.repeat(400)}}`],
      ['the empty line', ''],
    ])('passes %s on unchanged, or drops it with drop_malformed, without counting', async (_what, line) => {
      const kept = runJson({ expressions: { a: '' } }, line);
      expect(kept.out!.line).toBe(line);
      expect(kept.out!.extracted).toEqual({});
      const dropped = runJson({ expressions: { a: '' }, drop_malformed: true }, line);
      expect(dropped.out).toBeNull();
      expect(await dropped.registry.metrics()).not.toContain('logs_process_dropped_lines_total{');
    });

    it('reads extracted[source] instead of the line', () => {
      const { out } = runJson({ expressions: { user: '' }, source: 'extra' }, 'not json', { extra: '{"user":"marco"}' });
      expect(out!.extracted).toEqual({ extra: '{"user":"marco"}', user: 'marco' });
    });

    it('does nothing, even with drop_malformed, when the source is absent, null or not convertible', () => {
      for (const extracted of [{}, { log: null }, { log: { a: 1 } }, { log: ['x'] }]) {
        const { out } = runJson({ expressions: { a: '' }, source: 'log', drop_malformed: true }, '{"a":1}', extracted);
        expect(out).not.toBeNull();
        expect(out!.extracted).toEqual(extracted);
      }
    });

    it('converts a number source to text, which then is malformed', () => {
      expect(runJson({ expressions: { a: '' }, source: 'n', drop_malformed: true }, '{"a":1}', { n: 5 }).out).toBeNull();
      expect(runJson({ expressions: { a: '' }, source: 'b', drop_malformed: true }, '{"a":1}', { b: true }).out).toBeNull();
    });

    it('accepts 10 001 nesting levels and rejects 10 002, as json-iterator does', () => {
      const nested = (depth: number) => '{"a":' + '['.repeat(depth - 1) + ']'.repeat(depth - 1) + '}';
      expect(parseJsonObject(nested(10_001))).toBeDefined();
      expect(parseJsonObject(nested(10_002))).toBeUndefined();
      const { out, failures } = runJson({ expressions: { a: '' } }, nested(10_001));
      expect(failures).toEqual([]);
      expect((out!.extracted.a as string).length).toBe(2 * 10_000);
    });
  });

  describe('validation', () => {
    it('requires expressions or a regex', () => {
      expect(() => runConfig('stage.json {}', [])).toThrow('test.alloy:1:1: stage.json: JMES expressions or regex is required');
    });

    it('rejects an explicitly empty source', () => {
      expect(() => runConfig('stage.json {\n expressions = { a = "" }\n source = ""\n}', [])).toThrow(
        'test.alloy:3:2: stage.json: empty source',
      );
    });

    it('rejects a trailing hyphenated number with the reference message', () => {
      expect(() => runConfig('stage.json { expressions = { a = "foo-1" } }', [])).toThrow(
        'stage.json: could not compile JMES expression: SyntaxError: Unexpected token at the end of the expression: tNumber',
      );
    });

    it('rejects an expression that does not lex', () => {
      expect(() => runConfig('stage.json { expressions = { extr1 = "3##@$#33" } }', [])).toThrow(
        'could not compile JMES expression: SyntaxError: unknown character: #',
      );
    });

    it('rejects a regex that does not compile with Go’s error as it is, unprefixed', () => {
      expect(() => runConfig('stage.json { regex = "((" }', [])).toThrow(
        /^test\.alloy:1:24: stage\.json: error parsing regexp: missing closing \): `\(\(`$/,
      );
    });
  });

  describe('properties', () => {
    const anyText = fc.string({ unit: anyChar, maxLength: 300 });
    const config = { expressions: { a: '', b: 'a.b[0]', len: 'length(@)', all: '@', ua: 'user-agent' }, regex: '.*', drop_malformed: true };

    it('never throws on any input string', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            anyText,
            fc.json(),
            fc.json().map((j) => `{"a":${j}}`),
          ),
          (line) => {
            expect(runJson(config, line).failures).toEqual([]);
          },
        ),
        { numRuns: NUM_RUNS },
      );
    });

    it('never throws on deep nesting or a 1 MiB line', () => {
      for (const line of [
        '['.repeat(100_000),
        '{"a":' + '{"b":'.repeat(10_000) + '1' + '}'.repeat(10_001),
        `{"a":"${'x'.repeat(1 << 20)}"}`,
        '{'.repeat(1 << 20),
      ]) {
        expect(runJson(config, line).failures).toEqual([]);
      }
    });

    it('reads dotted paths exactly as the interpreter does', () => {
      const key = fc.constantFrom('a', 'b', 'constructor', '__proto__', 'x-y');
      const doc = fc.dictionary(key, fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }))));
      fc.assert(
        fc.property(doc, fc.array(key, { minLength: 1, maxLength: 3 }), (object, path) => {
          const dotted = path.map((k) => JSON.stringify(k)).join('.');
          const out = runJson({ expressions: { direct: dotted, interpreted: `${dotted} | @` } }, JSON.stringify(object)).out!.extracted;
          expect(out.direct).toEqual(out.interpreted);
        }),
        { numRuns: NUM_RUNS },
      );
    });

    it('stores object and array results as JSON text that parses back to the same value', () => {
      fc.assert(
        fc.property(fc.dictionary(fc.string({ unit: anyChar, maxLength: 6 }), fc.jsonValue({ maxDepth: 4 })), (object) => {
          const text = marshalJsoniter(object);
          expect(text).toBeDefined();
          // Go writes negative zero as -0, which JSON.stringify cannot; compare it as 0.
          const positiveZero = (_key: string, value: unknown) => (Object.is(value, -0) ? 0 : value);
          expect(JSON.parse(text!, positiveZero)).toEqual(JSON.parse(JSON.stringify(object)));
        }),
        { numRuns: NUM_RUNS },
      );
    });
  });
});
