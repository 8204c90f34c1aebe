/**
 * The hot-path PushRequest decoder against protobuf-es's `fromBinary`: the same message for any
 * encoded request (with unknown fields and groups mixed in), and the same outcome, message or
 * error text, for any bytes at all.
 */
import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PushRequestSchema, type PushRequest } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { decodePushBinary } from '../../../receivers/profiles/push-decode.js';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100);

const text = fc.string({ unit: 'grapheme', maxLength: 6 });
const pushRequest = fc
  .array(
    fc.record({
      labels: fc.array(fc.record({ name: text, value: text }), { maxLength: 4 }),
      samples: fc.array(fc.record({ rawProfile: fc.uint8Array({ maxLength: 16 }), ID: text }), { maxLength: 3 }),
      annotations: fc.array(fc.record({ key: text, value: text }), { maxLength: 2 }),
    }),
    { maxLength: 3 },
  )
  .map((series) => create(PushRequestSchema, { series }));

type Outcome = { ok: PushRequest } | { error: string };

function outcome(decode: () => PushRequest): Outcome {
  try {
    return { ok: decode() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function expectSameOutcome(bytes: Uint8Array): void {
  const expected = outcome(() => fromBinary(PushRequestSchema, bytes));
  const actual = outcome(() => decodePushBinary(bytes));
  if ('error' in expected) {
    expect(actual).toEqual(expected);
    return;
  }
  expect('ok' in actual).toBe(true);
  // `equals` ignores unknown fields, which fromBinary keeps and the hot path skips.
  expect(equals(PushRequestSchema, (actual as { ok: PushRequest }).ok, expected.ok)).toBe(true);
}

/** Unknown fields of every wire type, including a nested group, appended to a message body. */
function unknownFields(seed: number): Uint8Array {
  const w = new BinaryWriter();
  w.tag(20 + (seed % 5), WireType.Varint).uint64(seed * 1_000_003);
  w.tag(30, WireType.LengthDelimited).bytes(new Uint8Array([seed & 0xff, 1, 2]));
  w.tag(31, WireType.Bit32).fixed32(seed >>> 0);
  w.tag(32, WireType.Bit64).fixed64(BigInt(seed));
  w.tag(33, WireType.StartGroup).tag(1, WireType.Varint).uint32(7).tag(33, WireType.EndGroup);
  return w.finish();
}

describe('decodePushBinary', () => {
  it('decodes what protobuf-es encodes exactly as fromBinary does', () => {
    fc.assert(
      fc.property(pushRequest, (request) => {
        const bytes = toBinary(PushRequestSchema, request);
        const decoded = decodePushBinary(bytes);
        expect(equals(PushRequestSchema, decoded, request)).toBe(true);
        expectSameOutcome(bytes);
      }),
      { numRuns },
    );
  });

  it('skips unknown fields at every level as fromBinary does', () => {
    const request = create(PushRequestSchema, {
      series: [
        {
          labels: [{ name: 'service_name', value: 'app' }],
          samples: [{ rawProfile: new Uint8Array([1, 2, 3]), ID: 'x' }],
          annotations: [{ key: 'k', value: 'v' }],
        },
      ],
    });
    fc.assert(
      fc.property(fc.nat(), (seed) => {
        const extra = unknownFields(seed);
        const label = new BinaryWriter()
          .tag(1, WireType.LengthDelimited)
          .string('service_name')
          .tag(2, WireType.LengthDelimited)
          .string('app')
          .raw(extra)
          .finish();
        const series = new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(label).raw(extra).finish();
        const top = new BinaryWriter().raw(extra).tag(1, WireType.LengthDelimited).bytes(series).raw(extra).finish();
        expectSameOutcome(top);
        expectSameOutcome(new Uint8Array([...toBinary(PushRequestSchema, request), ...extra]));
      }),
      { numRuns },
    );
  });

  it('fails, or succeeds, exactly as fromBinary does on damaged and random bytes', () => {
    const damaged = fc.tuple(pushRequest, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat()).map(([request, at, byte, cut]) => {
      const bytes = toBinary(PushRequestSchema, request);
      if (bytes.length === 0) return bytes;
      const copy = bytes.slice(0, bytes.length - (cut % Math.min(bytes.length, 4)));
      if (copy.length > 0) copy[at % copy.length] = byte;
      return copy;
    });
    fc.assert(fc.property(fc.oneof(damaged, fc.uint8Array({ maxLength: 40 })), expectSameOutcome), { numRuns: numRuns * 10 });
  });

  it('decodes long, empty and non-ASCII strings and empty samples as fromBinary does', () => {
    const long = fc.string({ unit: 'grapheme', minLength: 60, maxLength: 200 });
    const request = fc.tuple(long, fc.string({ unit: 'grapheme-ascii', minLength: 65, maxLength: 100 }), text).map(([a, b, c]) =>
      create(PushRequestSchema, {
        series: [
          {
            labels: [
              { name: a, value: b },
              { name: '', value: c },
            ],
            samples: [{}, { ID: b }],
            annotations: [{ key: c, value: a }],
          },
        ],
      }),
    );
    fc.assert(
      fc.property(request, (r) => {
        const bytes = toBinary(PushRequestSchema, r);
        expect(equals(PushRequestSchema, decodePushBinary(bytes), r)).toBe(true);
        expectSameOutcome(bytes);
      }),
      { numRuns },
    );
  });

  it('reports a truncated message and invalid UTF-8 in fromBinary words', () => {
    const bytes = toBinary(PushRequestSchema, create(PushRequestSchema, { series: [{ labels: [{ name: 'a', value: 'b' }] }] }));
    expect(() => decodePushBinary(bytes.subarray(0, bytes.length - 1))).toThrow('premature EOF');
    const badUtf8 = new BinaryWriter()
      .tag(1, WireType.LengthDelimited)
      .bytes(
        new BinaryWriter()
          .tag(1, WireType.LengthDelimited)
          .bytes(
            new BinaryWriter()
              .tag(1, WireType.LengthDelimited)
              .bytes(new Uint8Array([0xff]))
              .finish(),
          )
          .finish(),
      )
      .finish();
    expectSameOutcome(badUtf8);
    expect(() => decodePushBinary(badUtf8)).toThrow();
  });
});
