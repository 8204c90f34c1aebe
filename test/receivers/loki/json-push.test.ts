import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EntryLimitError, SliceBudget, type DecodeProgress } from '../../../lib/loki/wire.js';
import type { PushedStream } from '../../../receivers/loki/decoded-push.js';
import { decodeJsonPushSteps, JsonPushError, MAX_JSON_DEPTH } from '../../../receivers/loki/json-push.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

function decode(text: string | Buffer, budget = new SliceBudget()): { streams: PushedStream[]; yields: DecodeProgress[] } {
  const steps = decodeJsonPushSteps(typeof text === 'string' ? Buffer.from(text) : text, budget);
  const yields: DecodeProgress[] = [];
  for (;;) {
    const step = steps.next();
    if (step.done) return { streams: step.value, yields };
    yields.push({ ...step.value });
  }
}

function errorOf(text: string): string {
  try {
    decode(text);
  } catch (err) {
    expect(err).toBeInstanceOf(JsonPushError);
    return (err as Error).message;
  }
  return 'no error';
}

const text = fc.string({ unit: 'binary', maxLength: 12 });
const pushArb = fc.array(
  fc.record({
    stream: fc.dictionary(fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/), text, { maxKeys: 3 }),
    values: fc.array(
      fc.oneof(
        fc.tuple(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map(String), text),
        fc.tuple(fc.bigInt({ min: 0n, max: 1n << 62n }).map(String), text, fc.dictionary(text, text, { maxKeys: 3 })),
      ),
      { maxLength: 4 },
    ),
  }),
  { maxLength: 3 },
);

describe('JSON push scanner', () => {
  it('decodes every push the way JSON.parse reads it', () => {
    fc.assert(
      fc.property(pushArb, fc.boolean(), (streams, spaced) => {
        const body = JSON.stringify({ streams }, null, spaced ? 2 : undefined);
        const reread = JSON.parse(body) as { streams: typeof streams };
        expect(decode(body).streams).toEqual(
          reread.streams.map((s) => ({
            labels: s.stream,
            entries: s.values.map(([ts, line, meta]) => ({
              timestampNs: BigInt(ts),
              line,
              structuredMetadata: Object.entries(meta ?? {}).map(([name, value]) => ({ name, value })),
            })),
          })),
        );
      }),
      { numRuns },
    );
  });

  it('accepts exactly the JSON that JSON.parse accepts', () => {
    const broken = fc
      .tuple(fc.json(), fc.nat(), fc.constantFrom('', '"', ',', ']', '}', '\\', '\u0001', 'x', ' '))
      .map(([json, at, insert]) => {
        const i = at % (json.length + 1);
        return json.slice(0, i) + insert + json.slice(i + (insert === '' ? 1 : 0));
      });
    fc.assert(
      fc.property(fc.oneof(fc.json(), broken), (value) => {
        let parses = true;
        try {
          JSON.parse(value);
        } catch {
          parses = false;
        }
        const body = `{"junk": ${value}, "streams": []}`;
        expect(errorOf(body) === 'no error').toBe(parses);
      }),
      { numRuns: numRuns * 5 },
    );
  });

  it('keeps JSON.parse key order, lets a repeated key win, and keeps __proto__ as a key', () => {
    const body = '{"streams":[{"stream":{"b":"1","a":"x","a":"2"},"values":[["1","l",{"z":"1","2":"two","__proto__":"p","z":"last"}]]}]}';
    expect(decode(body).streams).toEqual([
      {
        labels: { b: '1', a: '2' },
        entries: [
          {
            timestampNs: 1n,
            line: 'l',
            structuredMetadata: [
              { name: '2', value: 'two' },
              { name: 'z', value: 'last' },
              { name: '__proto__', value: 'p' },
            ],
          },
        ],
      },
    ]);
    expect(decode('{"streams":[{"stream":{"a":"1"}}],"streams":null}').streams).toEqual([]);
  });

  it('decodes escapes as JSON.parse does', () => {
    const line = 'tab\there "quoted" \\ slash/ \u00e9 \ud83d\ude00 lone \ud800 nul \u0000';
    const body = `{"streams":[{"stream":{"a":"1"},"values":[["1",${JSON.stringify(line)}]]}]}`;
    expect(decode(body).streams[0]!.entries[0]!.line).toBe(line);
    expect(decode(body.replace('"tab', '"\\u0074ab')).streams[0]!.entries[0]!.line).toBe(line);
  });

  it('names what is broken and where', () => {
    expect(errorOf('')).toBe('Unexpected end of JSON input');
    expect(errorOf('{"streams": [')).toBe('Unexpected end of JSON input');
    expect(errorOf('hello')).toBe('Unexpected token "h" at byte 0');
    expect(errorOf('{"streams": []} x')).toBe('Unexpected token "x" at byte 16');
    expect(errorOf('{"junk": "a\u0001"}')).toBe('Unexpected token "\\u0001" at byte 11');
    expect(errorOf('[]')).toBe('body: expected an object');
    expect(errorOf('{"streams": {}}')).toBe('streams: expected an array');
    expect(errorOf('{"streams": [null]}')).toBe('streams[0]: expected an object');
    expect(errorOf('{"streams": [{"stream": []}]}')).toBe('streams[0].stream: expected an object of label values');
    expect(errorOf('{"streams": [{"stream": {"a": 1}}]}')).toBe('streams[0].stream.a: label values must be strings');
    expect(errorOf('{"streams": [{"values": {}}]}')).toBe('streams[0].values: expected an array');
    const shape = 'expected ["<unix epoch in nanoseconds>", "<log line>"] with optional structured metadata';
    expect(errorOf('{"streams": [{"values": [["1"]]}]}')).toBe(`streams[0].values[0]: ${shape}`);
    expect(errorOf('{"streams": [{"values": [[1, "x", {}, 4]]}]}')).toBe(`streams[0].values[0]: ${shape}`);
    const ts = 'timestamp must be a string of nanoseconds since the epoch, got';
    expect(errorOf('{"streams": [{"values": [[1.50, "x"]]}]}')).toBe(`streams[0].values[0][0]: ${ts} 1.5`);
    expect(errorOf('{"streams": [{"values": [[[1, {"a": null}], "x"]]}]}')).toBe(`streams[0].values[0][0]: ${ts} [1,{"a":null}]`);
    expect(errorOf(`{"streams": [{"values": [[[${'0,'.repeat(1000)}0], "x"]]}]}`)).toBe(`streams[0].values[0][0]: ${ts} an array`);
    expect(errorOf('{"streams": [{"values": [["1e3", "x"]]}]}')).toBe(`streams[0].values[0][0]: ${ts} "1e3"`);
    expect(errorOf('{"streams": [{"values": [["9223372036854775808", "x"]]}]}')).toBe(
      'streams[0].values[0][0]: timestamp 9223372036854775808 is out of range',
    );
    expect(errorOf('{"streams": [{"values": [["1", 2]]}]}')).toBe('streams[0].values[0][1]: the log line must be a string');
    expect(errorOf('{"streams": [{"values": [["1", "x", []]]}]}')).toBe(
      'streams[0].values[0][2]: structured metadata must be an object of strings',
    );
    expect(errorOf('{"streams": [{"values": [["1", "x", {"k": 1}]]}]}')).toBe(
      'streams[0].values[0][2].k: structured metadata values must be strings',
    );
  });

  it('reads invalid label names as a label error of that stream alone', () => {
    const { streams } = decode('{"streams": [{"stream": {"bad-name": "x"}, "values": [["1", "l"]]}, {"stream": {"ok": "y"}}]}');
    expect(streams).toEqual([
      { labels: undefined, labelError: 'invalid label name "bad-name"', entries: [{ timestampNs: 1n, line: 'l', structuredMetadata: [] }] },
      { labels: { ok: 'y' }, entries: [] },
    ]);
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels without using the call stack`, () => {
    expect(errorOf(`{"junk": ${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}, "streams": []}`)).toBe('no error');
    expect(errorOf(`{"junk": ${'['.repeat(1_000_000)}`)).toBe(`nesting is deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it('stops at the first entry past the limit, having read no further', () => {
    const body = Buffer.from(`{"streams":[{"stream":{"a":"1"},"values":[${'["0",""],'.repeat(1_000_000)}["0",""]]}]}`);
    const budget = new SliceBudget({ maxEntries: 1000 });
    expect(() => decode(body, budget)).toThrow(new EntryLimitError(1000));
    expect(budget.progress.entries).toBe(1000);
  });

  it('yields after every slice of entries, and of bytes scanned where there are none', () => {
    const entries = decode(
      `{"streams":[{"values":[${Array.from({ length: 1000 }, () => '["1","x",{"k":"v"}]').join(',')}]}]}`,
      new SliceBudget({ sliceItems: 100 }),
    );
    expect(entries.yields.length).toBeGreaterThanOrEqual(19);
    expect(entries.yields.at(-1)).toMatchObject({ streams: 1 });
    const skipped = decode(`{"junk":[${'0,'.repeat(2_000_000)}0],"streams":[]}`);
    expect(skipped.yields.length).toBeGreaterThanOrEqual(3);
  });
});
