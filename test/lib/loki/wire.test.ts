import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PushRequestSchema } from '../../support/gen/logproto_pb.js';
import {
  decodePushRequest,
  decodePushRequestSteps,
  encodePushRequest,
  EntryLimitError,
  SliceBudget,
  WireError,
  type DecodeProgress,
  type WireStream,
} from '../../../lib/loki/wire.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

/** The same streams through the generated message classes. */
function generatedEncode(streams: readonly WireStream[]): Uint8Array {
  return toBinary(
    PushRequestSchema,
    create(PushRequestSchema, {
      streams: streams.map((s) => ({
        labels: s.labels,
        entries: s.entries.map((e) => {
          let seconds = e.timestampNs / 1_000_000_000n;
          let nanos = e.timestampNs - seconds * 1_000_000_000n;
          if (nanos < 0n) {
            nanos += 1_000_000_000n;
            seconds -= 1n;
          }
          return {
            timestamp: { seconds, nanos: Number(nanos) },
            line: e.line,
            structuredMetadata: e.structuredMetadata.map((p) => ({ ...p })),
          };
        }),
      })),
    }),
  );
}

function generatedDecode(bytes: Uint8Array): WireStream[] {
  return fromBinary(PushRequestSchema, bytes).streams.map((s) => ({
    labels: s.labels,
    entries: s.entries.map((e) => ({
      timestampNs: (e.timestamp?.seconds ?? 0n) * 1_000_000_000n + BigInt(e.timestamp?.nanos ?? 0),
      line: e.line,
      structuredMetadata: e.structuredMetadata.map((p) => ({ name: p.name, value: p.value })),
    })),
  }));
}

const text = fc.string({ unit: 'grapheme', maxLength: 20 });
const streamArb: fc.Arbitrary<WireStream> = fc.record({
  labels: text,
  entries: fc.array(
    fc.record({
      timestampNs: fc.bigInt({ min: -(1n << 62n), max: 1n << 62n }),
      line: text,
      structuredMetadata: fc.array(fc.record({ name: text, value: text }), { maxLength: 3 }),
    }),
    { maxLength: 5 },
  ),
});

describe('push request wire codec', () => {
  it('encodes byte for byte what the generated code encodes', () => {
    fc.assert(
      fc.property(fc.array(streamArb, { maxLength: 4 }), (streams) => {
        expect(Buffer.from(encodePushRequest(streams))).toEqual(Buffer.from(generatedEncode(streams)));
      }),
      { numRuns },
    );
  });

  it('decodes what the generated code encodes', () => {
    fc.assert(
      fc.property(fc.array(streamArb, { maxLength: 4 }), (streams) => {
        expect(decodePushRequest(generatedEncode(streams))).toEqual(generatedDecode(generatedEncode(streams)));
        expect(decodePushRequest(generatedEncode(streams))).toEqual(streams);
      }),
      { numRuns },
    );
  });

  it('agrees with the generated decoder on arbitrary bytes or fails with a WireError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        let ours: WireStream[] | Error;
        try {
          ours = decodePushRequest(bytes);
        } catch (err) {
          expect(err).toBeInstanceOf(WireError);
          ours = err as Error;
        }
        let theirs: WireStream[] | undefined;
        try {
          theirs = generatedDecode(bytes);
        } catch {
          theirs = undefined;
        }
        if (!(ours instanceof Error) && theirs !== undefined) expect(ours).toEqual(theirs);
      }),
      { numRuns },
    );
  });

  it('keeps nanosecond timestamps, including times before the epoch', () => {
    const streams: WireStream[] = [
      {
        labels: '{app="a"}',
        entries: [
          { timestampNs: 1_700_000_000_123_456_789n, line: 'one', structuredMetadata: [{ name: 'trace_id', value: 'abc' }] },
          { timestampNs: -1n, line: 'before', structuredMetadata: [] },
        ],
      },
    ];
    expect(decodePushRequest(encodePushRequest(streams))).toEqual(streams);
  });

  it('names a truncated body', () => {
    const bytes = encodePushRequest([{ labels: '{a="1"}', entries: [{ timestampNs: 5n, line: 'hello', structuredMetadata: [] }] }]);
    expect(() => decodePushRequest(bytes.subarray(0, bytes.length - 2))).toThrow(
      new WireError('field length 22 runs past the end of its message at offset 2'),
    );
  });

  it('rejects a line that is not valid UTF-8', () => {
    // streams { entries { line: 0xff } }
    const bytes = Uint8Array.from([0x0a, 0x05, 0x12, 0x03, 0x12, 0x01, 0xff]);
    let caught: unknown;
    try {
      decodePushRequest(bytes);
    } catch (err) {
      caught = err;
    }
    expect(caught).toEqual(new WireError('EntryAdapter.line is not valid UTF-8', true));
    expect((caught as WireError).invalidUtf8).toBe(true);
  });

  it('keeps a line that holds U+FFFD itself, which is valid UTF-8', () => {
    const streams: WireStream[] = [{ labels: '{a="\uFFFD"}', entries: [{ timestampNs: 1n, line: 'a \uFFFD b', structuredMetadata: [] }] }];
    expect(decodePushRequest(encodePushRequest(streams))).toEqual(streams);
  });

  it('skips unknown fields and the hash and format fields', () => {
    const known = generatedEncode([{ labels: '{a="1"}', entries: [{ timestampNs: 1n, line: 'x', structuredMetadata: [] }] }]);
    // format = "json" (field 2), then an unknown fixed32 field 9.
    const extra = Uint8Array.from([0x12, 0x04, 0x6a, 0x73, 0x6f, 0x6e, 0x4d, 1, 2, 3, 4]);
    const bytes = new Uint8Array(known.length + extra.length);
    bytes.set(known);
    bytes.set(extra, known.length);
    expect(decodePushRequest(bytes)).toEqual([{ labels: '{a="1"}', entries: [{ timestampNs: 1n, line: 'x', structuredMetadata: [] }] }]);
  });
});

/** Runs a sliced decode to its end: the result and a copy of each progress it yielded. */
function drain(bytes: Uint8Array, budget: SliceBudget): { streams: WireStream[]; yields: DecodeProgress[] } {
  const steps = decodePushRequestSteps(bytes, budget);
  const yields: DecodeProgress[] = [];
  for (;;) {
    const step = steps.next();
    if (step.done) return { streams: step.value, yields };
    yields.push({ ...step.value });
  }
}

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 128; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return out;
}

/** streams { entries {} × `entries` }, each entry with `pairs` empty metadata pairs. */
function emptyEntries(entries: number, pairs = 0): Buffer {
  const entry = Buffer.concat([Buffer.from([0x12, ...varint(pairs * 2)]), Buffer.alloc(pairs * 2)]);
  for (let i = 0, at = entry.length - pairs * 2; i < pairs; i++) entry[at + 2 * i] = 0x1a;
  const body = Buffer.concat(Array.from({ length: entries }, () => entry));
  return Buffer.concat([Buffer.from([0x0a, ...varint(body.length)]), body]);
}

describe('push request decoding in slices', () => {
  it('yields its progress after every slice and decodes what the whole decode does', () => {
    const streams: WireStream[] = Array.from({ length: 3 }, (_, s) => ({
      labels: `{s="${s}"}`,
      entries: Array.from({ length: 40 }, (_, i) => ({
        timestampNs: BigInt(i),
        line: `line ${i}`,
        structuredMetadata: [{ name: 'n', value: 'v' }],
      })),
    }));
    const bytes = encodePushRequest(streams);
    const budget = new SliceBudget({ sliceItems: 25 });
    const { streams: decoded, yields } = drain(bytes, budget);
    expect(decoded).toEqual(streams);
    // 3 streams, 120 entries and 120 pairs: 243 items, a yield at least every 25.
    expect(yields.length).toBeGreaterThanOrEqual(9);
    expect(budget.progress).toMatchObject({ streams: 3, entries: 120, pairs: 120 });
    expect(yields.at(-1)!.entries).toBeLessThanOrEqual(120);
    expect(budget.progress.bytes).toBeGreaterThan(120 * 'line 0'.length);
  });

  it('stops at the first entry past the limit, having built no more', () => {
    const budget = new SliceBudget({ maxEntries: 1000, sliceItems: Number.POSITIVE_INFINITY });
    expect(() => drain(emptyEntries(1_000_000), budget)).toThrow(new EntryLimitError(1000));
    expect(new EntryLimitError(1000).message).toBe('push request has more than 1000 entries');
    expect(budget.progress.entries).toBe(1000);
    expect(drain(emptyEntries(1000), new SliceBudget({ maxEntries: 1000 })).streams[0]!.entries.length).toBe(1000);
  });

  it('ends slices between the metadata pairs of one entry', () => {
    const budget = new SliceBudget({ sliceItems: 100 });
    const steps = decodePushRequestSteps(emptyEntries(1, 10_000), budget);
    const first = steps.next();
    expect(first.done).toBe(false);
    expect(first.value).toMatchObject({ entries: 1, pairs: 98 });
  });

  it('ends slices between empty streams', () => {
    const oneEmptyStream = Buffer.from([0x0a, 0x00]);
    const { streams, yields } = drain(
      Buffer.concat(Array.from({ length: 1000 }, () => oneEmptyStream)),
      new SliceBudget({ sliceItems: 100 }),
    );
    expect(streams.length).toBe(1000);
    expect(yields.length).toBe(10);
  });
});
