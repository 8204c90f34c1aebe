import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeLogfmt } from '../../lib/logfmt.js';
import { doesNotTouch, entryStream } from '../../testing/index.js';
import { logfmt } from '../../operators/index.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const anyChar = fc
  .oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0x10ffff }))
  .map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? '\uFFFD' : String.fromCodePoint(cp)));

const extract = (config: string, line: string, extracted: Record<string, unknown> = {}) =>
  runConfig(config, [entry(line, {}, { extracted })]).entries[0]!.extracted;

describe('stage.logfmt', () => {
  it('stores every value as a string', () => {
    expect(extract('stage.logfmt { mapping = { d = "duration", ok = "", f = "" } }', 'duration=125 ok=true f=1.5')).toEqual({
      d: '125',
      ok: 'true',
      f: '1.5',
    });
  });

  it('gives the empty string for a bare key, key= and key=""', () => {
    expect(extract('stage.logfmt { mapping = { a = "", b = "", c = "" } }', 'a b= c=""')).toEqual({ a: '', b: '', c: '' });
  });

  it('does not create mapped keys that are absent', () => {
    expect(extract('stage.logfmt { mapping = { app = "", unknown = "" } }', 'app=loki')).toEqual({ app: 'loki' });
  });

  it('decodes quoted values with JSON escapes', () => {
    expect(extract('stage.logfmt { mapping = { m = "msg" } }', 'msg="a \\"quoted\\"\\n\\u00e9 value"')).toEqual({
      m: 'a "quoted"\né value',
    });
  });

  it('collects keys from every line, later values winning', () => {
    expect(extract('stage.logfmt { regex = ".*" }', 'a=1 b=2\r\nb=3\n\tc=4\n')).toEqual({ a: '1', b: '3', c: '4' });
  });

  it('keeps what was decoded before a syntax error and nothing after it', () => {
    expect(extract('stage.logfmt { regex = ".*" }', 'a=1 url=http://x?y=z b=2')).toEqual({ a: '1' });
    expect(extract('stage.logfmt { regex = ".*" }', 'a=1 extra="user=foo"" b=2')).toEqual({ a: '1', extra: 'user=foo' });
    expect(extract('stage.logfmt { regex = ".*" }', 'a=1 b="unterminated')).toEqual({ a: '1' });
  });

  it('keeps earlier records but nothing of a record of 64 KiB or more', () => {
    const long = `big=${'x'.repeat(64 * 1024)}`;
    expect(extract('stage.logfmt { regex = ".*" }', long)).toEqual({});
    expect(extract('stage.logfmt { regex = ".*" }', `a=1\n${long}\nc=3`)).toEqual({ a: '1' });
  });

  it('stores a key under its mapped name and, when the regex matches, under its own', () => {
    expect(extract('stage.logfmt {\n mapping = { out = "message" }\n regex = "^mess"\n}', 'message=hi')).toEqual({
      out: 'hi',
      message: 'hi',
    });
  });

  it('keeps one name when two map to the same key', () => {
    expect(extract('stage.logfmt { mapping = { first = "k", second = "k" } }', 'k=v')).toEqual({ second: 'v' });
  });

  it('tests the regex against key names unanchored', () => {
    expect(extract('stage.logfmt { regex = "pod_" }', 'time=t pod_name=p my_pod_x=y')).toEqual({ pod_name: 'p', my_pod_x: 'y' });
  });

  it('reads extracted[source] and leaves the line alone', () => {
    const { entries } = runConfig('stage.logfmt {\n mapping = { user = "" }\n source = "extra"\n}', [
      entry('the line', {}, { extracted: { extra: 'user=foo' } }),
    ]);
    expect(entries[0]!.line).toBe('the line');
    expect(entries[0]!.extracted).toEqual({ extra: 'user=foo', user: 'foo' });
  });

  it('treats source = "" as the line', () => {
    expect(extract('stage.logfmt {\n mapping = { a = "" }\n source = ""\n}', 'a=1')).toEqual({ a: '1' });
  });

  it('does nothing when the source is absent or not convertible, and converts numbers', () => {
    const config = 'stage.logfmt {\n mapping = { a = "" }\n source = "s"\n}';
    expect(extract(config, 'a=line')).toEqual({});
    expect(extract(config, 'a=line', { s: null })).toEqual({ s: null });
    expect(extract(config, 'a=line', { s: ['a=1'] })).toEqual({ s: ['a=1'] });
    expect(extract('stage.logfmt {\n mapping = { v = "5" }\n source = "s"\n}', 'a=line', { s: 5 })).toEqual({ s: 5, v: '' });
  });

  it('stores a key named __proto__ as an ordinary key', () => {
    const out = extract('stage.logfmt { regex = "proto" }', '__proto__=x');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe('x');
  });

  it('requires a mapping or a regex', () => {
    expect(() => runConfig('stage.logfmt {}', [])).toThrow('test.alloy:1:1: stage.logfmt: logfmt mapping or regex is required');
  });

  it('rejects a regex that does not compile with Go’s error as it is, unprefixed', () => {
    expect(() => runConfig('stage.logfmt { regex = "((" }', [])).toThrow(
      /^test\.alloy:1:26: stage\.logfmt: error parsing regexp: missing closing \): `\(\(`$/,
    );
  });

  it('round-trips the values it encodes (property)', () => {
    const key = fc.string({ unit: fc.constantFrom(...'abcxyz_.-/0129'), minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(key, fc.string({ unit: anyChar, maxLength: 20 })), { selector: ([k]) => k, maxLength: 6 }),
        (pairs) => {
          const line = encodeLogfmt(pairs);
          const out = extract('stage.logfmt { regex = ".*" }', line);
          expect(out).toEqual(Object.fromEntries(pairs));
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('never throws and never changes the line or labels (property)', () => {
    const inputs = entryStream({ streams: fc.constant([{ job: 'x' }]), line: fc.string({ unit: anyChar, maxLength: 200 }) });
    doesNotTouch(logfmt, 'stage.logfmt {\n mapping = { a = "" }\n regex = "."\n}', ['line', 'labels'], { inputs, numRuns: NUM_RUNS });
  });
});
