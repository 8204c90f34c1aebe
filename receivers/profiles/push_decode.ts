/**
 * Binary PushRequest decoding for the receiver's hot path. It reads the wire with protobuf-es's
 * own BinaryReader and follows `fromBinary` step for step for these four message types (the same
 * reads in the same order, so the same results and the same errors on any input), without the
 * reflection `fromBinary` does per field. Unknown fields are skipped with the reader's own rules
 * but not kept: nothing downstream reads them. A test checks it against `fromBinary` on random
 * messages and random bytes.
 */
import { BinaryReader } from '@bufbuild/protobuf/wire';
import {
  LabelPairSchema,
  ProfileAnnotationSchema,
  type LabelPair,
  type ProfileAnnotation,
} from '../../lib/pyroscope/gen/types/v1/types_pb.js';
import { RawSampleSchema, type PushRequest, type RawProfileSeries, type RawSample } from '../../lib/pyroscope/gen/push/v1/push_pb.js';

/** `fromBinary`'s default recursion limit; it bounds how deep unknown groups are skipped. */
const RECURSION_LIMIT = 100;

/** Whether each string field is checked for valid UTF-8 (proto3: yes), read from the descriptors once. */
const STRICT = {
  labelName: LabelPairSchema.field.name!.utf8Validation,
  labelValue: LabelPairSchema.field.value!.utf8Validation,
  annotationKey: ProfileAnnotationSchema.field.key!.utf8Validation,
  annotationValue: ProfileAnnotationSchema.field.value!.utf8Validation,
  sampleId: RawSampleSchema.field.ID!.utf8Validation,
};

export function decodePushBinary(bytes: Uint8Array): PushRequest {
  const reader = new BinaryReader(bytes);
  const request: PushRequest = { $typeName: 'push.v1.PushRequest', series: [] };
  const end = bytes.byteLength;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) request.series.push(readSeries(reader, reader.uint32()));
    else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 1);
  }
  return request;
}

function readSeries(reader: BinaryReader, length: number): RawProfileSeries {
  const series: RawProfileSeries = { $typeName: 'push.v1.RawProfileSeries', labels: [], samples: [], annotations: [] };
  const end = reader.pos + length;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) series.labels.push(readLabel(reader, reader.uint32()));
    else if (fieldNo === 2) series.samples.push(readSample(reader, reader.uint32()));
    else if (fieldNo === 3) series.annotations.push(readAnnotation(reader, reader.uint32()));
    else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 2);
  }
  return series;
}

function readLabel(reader: BinaryReader, length: number): LabelPair {
  const [name, value] = readStringPair(reader, length, STRICT.labelName, STRICT.labelValue);
  return { $typeName: 'types.v1.LabelPair', name, value };
}

function readSample(reader: BinaryReader, length: number): RawSample {
  const sample: RawSample = { $typeName: 'push.v1.RawSample', rawProfile: new Uint8Array(0), ID: '' };
  const end = reader.pos + length;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) sample.rawProfile = reader.bytes();
    else if (fieldNo === 2) sample.ID = reader.string(STRICT.sampleId);
    else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 3);
  }
  return sample;
}

function readAnnotation(reader: BinaryReader, length: number): ProfileAnnotation {
  const [key, value] = readStringPair(reader, length, STRICT.annotationKey, STRICT.annotationValue);
  return { $typeName: 'types.v1.ProfileAnnotation', key, value };
}

/** A message of two string fields, 1 and 2, as LabelPair and ProfileAnnotation are. */
function readStringPair(reader: BinaryReader, length: number, strictFirst: boolean, strictSecond: boolean): [string, string] {
  let first = '';
  let second = '';
  const end = reader.pos + length;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) first = reader.string(strictFirst);
    else if (fieldNo === 2) second = reader.string(strictSecond);
    else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 3);
  }
  return [first, second];
}
