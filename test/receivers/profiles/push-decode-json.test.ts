/**
 * The JSON PushRequest decoder against protobuf-es's `fromJsonString` (with unknown fields
 * ignored), which the receiver used before: the same message for any request it writes, in
 * either field naming and with unknown fields mixed in, and the same errors, in its words, for the
 * common mistakes.
 */
import { create, equals, fromJsonString, toJsonString } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PushRequestSchema, type PushRequest } from '../../../lib/pyroscope/gen/push/v1/push_pb.js';
import { finishSteps } from '../../../lib/slices.js';
import { decodePushJsonSteps } from '../../../receivers/profiles/push-decode-json.js';
import { PushObjects } from '../../../receivers/profiles/push-objects.js';

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

function decode(json: string | Buffer): PushRequest {
  return finishSteps(decodePushJsonSteps(Buffer.from(json), new PushObjects(Number.POSITIVE_INFINITY)));
}

type Outcome = { ok: PushRequest } | { error: string };

function outcome(run: () => PushRequest): Outcome {
  try {
    return { ok: run() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const utf8 = new TextDecoder();

/** Compared with what the receiver did before: the body read as UTF-8 text (a byte order mark dropped), then fromJsonString. */
function expectSameOutcome(json: string): void {
  const expected = outcome(() => fromJsonString(PushRequestSchema, utf8.decode(Buffer.from(json)), { ignoreUnknownFields: true }));
  const actual = outcome(() => decode(json));
  if ('error' in expected) {
    expect(actual).toEqual(expected);
    return;
  }
  expect('ok' in actual, JSON.stringify(actual)).toBe(true);
  expect(equals(PushRequestSchema, (actual as { ok: PushRequest }).ok, expected.ok)).toBe(true);
}

describe('decodePushJsonSteps', () => {
  it('decodes what toJsonString writes, in either field naming, as fromJsonString does', () => {
    fc.assert(
      fc.property(pushRequest, fc.boolean(), fc.constantFrom(0, 2), (request, useProtoFieldName, prettySpaces) => {
        const json = toJsonString(PushRequestSchema, request, { useProtoFieldName, prettySpaces });
        expectSameOutcome(json);
        expect(equals(PushRequestSchema, decode(json), request)).toBe(true);
      }),
      { numRuns },
    );
  });

  it('skips unknown fields at every level, of any kind, as fromJsonString does', () => {
    const unknown = '"x":{"a":[1,-2.5e3,true,false,null,"s\\u00e9",{"b":[]}]}';
    expectSameOutcome(
      `{${unknown},"series":[{${unknown},"labels":[{${unknown},"name":"a","value":"b"}],` +
        `"samples":[{${unknown},"ID":"i","rawProfile":"AAE="}],"annotations":[{"key":"k",${unknown}}]}]}`,
    );
  });

  it('reads null as the default, both base64 alphabets, escapes and a byte order mark', () => {
    for (const json of [
      '{"series":null}',
      '{"series":[{"labels":null,"samples":[{"rawProfile":null,"ID":null}],"annotations":[{"key":null,"value":null}]}]}',
      '{"series":[{"samples":[{"raw_profile":"-_8"},{"rawProfile":"+/8="},{"rawProfile":"YQ"},{"rawProfile":"Y Q=\\n="}]}]}',
      '{"series":[{"labels":[{"name":"\\u0061\\n\\"","value":"é😀"}]}]}',
      '\ufeff{"series":[{}]}',
      ' \n{ } ',
    ])
      expectSameOutcome(json);
  });

  it('fails with protobuf-es words on values of the wrong kind', () => {
    for (const json of [
      '{"series":3}',
      '{"series":[null]}',
      '{"series":["x"]}',
      '{"series":[{"labels":{}}]}',
      '{"series":[{"labels":[3]}]}',
      '{"series":[{"labels":[null]}]}',
      '{"series":[{"labels":[{"name":1}]}]}',
      '{"series":[{"labels":[{"name":[1,[2]]}]}]}',
      '{"series":[{"labels":[{"value":"a string longer than thirty characters"}]}]}',
      '{"series":[{"labels":[{"name":"\\ud800"}]}]}',
      '{"series":[{"samples":[{"rawProfile":1e2}]}]}',
      '{"series":[{"samples":[{"rawProfile":{}}]}]}',
      '{"series":[{"samples":[{"rawProfile":"@@"}]}]}',
      '{"series":[{"samples":[{"rawProfile":"Y"}]}]}',
      '{"series":[{"samples":[{"rawProfile":"YQ","raw_profile":"Yg"}]}]}',
      '{"series":[{"samples":[{"ID":true}]}]}',
      '{"series":[],"series":[]}',
      '{"series":[{"labels":[{"name":"a","name":"b"}]}]}',
      '[]',
      'null',
      '"abc"',
    ])
      expectSameOutcome(json);
  });

  it('fails on broken JSON, naming the byte', () => {
    expect(outcome(() => decode('{"series":[{"labels":'))).toEqual({
      error: 'cannot decode message push.v1.PushRequest from JSON: Unexpected end of JSON input',
    });
    expect(outcome(() => decode('{"series":[]} x'))).toEqual({
      error: 'cannot decode message push.v1.PushRequest from JSON: Unexpected token "x" at byte 14',
    });
  });
});
