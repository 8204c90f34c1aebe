import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packLine } from '../../operators/pack.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const anyChar = fc
  .oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0x10ffff }))
  .map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? '\uFFFD' : String.fromCodePoint(cp)));
const START = 1_700_000_000_000_000_000n;
const BEFORE = 1_000_000_000n;
const noIngest = (labels: string) => `stage.pack {\n labels = ${labels}\n ingest_timestamp = false\n}`;

describe('stage.pack', () => {
  it('packs the listed values in byte order with _entry last and removes packed labels', () => {
    const { entries } = runConfig(noIngest('["foo", "extr1"]'), [
      entry('test line 1', { foo: 'bar', bar: 'baz' }, { extracted: { extr1: 'etr1val', extr2: 'etr2val' }, timestamp: BEFORE }),
    ]);
    expect(entries[0]).toMatchObject({
      line: '{"extr1":"etr1val","foo":"bar","_entry":"test line 1"}',
      labels: { bar: 'baz' },
      timestamp: BEFORE,
    });
  });

  it('writes only _entry for an empty list', () => {
    const { entries } = runConfig(noIngest('[]'), [entry('x', { foo: 'bar' })]);
    expect(entries[0]).toMatchObject({ line: '{"_entry":"x"}', labels: { foo: 'bar' } });
  });

  it('sorts keys by UTF-8 bytes, not UTF-16 units', () => {
    expect(
      packLine(
        [
          ['\uff61', 'b'],
          ['\u{1F600}', 'a'],
          ['Z', 'c'],
        ],
        'l',
      ),
    ).toBe('{"Z":"c","\uff61":"b","\u{1F600}":"a","_entry":"l"}');
  });

  it('escapes like Go with HTML escaping', () => {
    expect(packLine([['k', '<a>&"\\']], 'tab\there\nnew\u0008\u000c\u2028')).toBe(
      '{"k":"\\u003ca\\u003e\\u0026\\"\\\\","_entry":"tab\\there\\nnew\\u0008\\u000c\\u2028"}',
    );
  });

  it('converts numbers and booleans to text and skips values that do not convert, keeping such labels', () => {
    const { entries } = runConfig(noIngest('["n", "b", "list", "nul", "foo"]'), [
      entry('l', { foo: 'bar' }, { extracted: { n: 1e21, b: true, list: [1, 2], nul: null } }),
    ]);
    expect(entries[0]!.line).toBe('{"b":"true","foo":"bar","n":"1000000000000000000000","_entry":"l"}');
  });

  it('neither packs nor removes a label added after seeding', () => {
    const { entries } = runConfig(`stage.static_labels { values = { late = "v" } }\n${noIngest('["late"]')}`, [entry('l')]);
    expect(entries[0]).toMatchObject({ line: '{"_entry":"l"}', labels: { late: 'v' } });
  });

  it('keeps a label whose extracted copy was replaced by a value that does not convert', () => {
    const { entries } = runConfig(`stage.json { expressions = { foo = "missing" } }\n${noIngest('["foo"]')}`, [
      entry('{}', { foo: 'bar' }),
    ]);
    expect(entries[0]).toMatchObject({ line: '{"_entry":"{}"}', labels: { foo: 'bar' } });
  });

  it('packs a name listed twice once', () => {
    const { entries } = runConfig(noIngest('["a", "a"]'), [entry('l', { a: '1' })]);
    expect(entries[0]!.line).toBe('{"a":"1","_entry":"l"}');
  });

  it('writes _entry twice when it is also a listed name, as the reference does', () => {
    const { entries } = runConfig(noIngest('["_entry"]'), [entry('l', {}, { extracted: { _entry: 'x' } })]);
    expect(entries[0]!.line).toBe('{"_entry":"x","_entry":"l"}');
  });

  it('sets the timestamp to the time the stage runs by default', () => {
    const { entries } = runConfig('stage.pack { labels = [] }', [entry('l', {}, { timestamp: BEFORE })], { startNs: START });
    expect(entries[0]!.timestamp).toBe(START);
  });

  it('requires labels', () => {
    expect(() => runConfig('stage.pack {}', [])).toThrow('missing required attribute "labels"');
  });

  it('produces JSON holding _entry equal to the old line and every packed value (property)', () => {
    const text = fc.string({ unit: anyChar, maxLength: 40 });
    fc.assert(
      fc.property(
        text,
        fc.dictionary(
          fc.string({ unit: anyChar, minLength: 1, maxLength: 8 }).filter((k) => k !== '_entry' && k !== '__proto__'),
          text,
          { maxKeys: 5 },
        ),
        (line, values) => {
          const names = Object.keys(values);
          const { entries } = runConfig(noIngest(JSON.stringify(names)), [entry(line, {}, { extracted: { ...values } })]);
          const parsed = JSON.parse(entries[0]!.line) as Record<string, string>;
          expect(parsed._entry).toBe(line);
          expect(Object.keys(parsed).at(-1)).toBe('_entry');
          for (const name of names) expect(parsed[name]).toBe(values[name]);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
