/**
 * Binary PushRequest decoding for the receiver's hot path. It reads the wire with protobuf-es's
 * own BinaryReader and follows `fromBinary` step for step for these four message types (the same
 * reads in the same order, so the same results and the same errors on any input), without the
 * reflection `fromBinary` does per field. Unknown fields are skipped with the reader's own rules
 * but not kept: nothing downstream reads them. A test checks it against `fromBinary` on random
 * messages and random bytes.
 *
 * What profilers send is read first without the BinaryReader (see `readWellFormed`), which
 * hands anything out of the ordinary back to the reader.
 *
 * Both readers are generators that count every series, sample, label and annotation they build
 * (and every field they step over) and yield between slices, so that a small body of millions of
 * empty series is refused at the object bound without holding the event loop on the way.
 */
import { BinaryReader, getTextEncoding, WireType } from '@bufbuild/protobuf/wire';
import { finishSteps } from '../../lib/slices.js';
import {
  LabelPairSchema,
  ProfileAnnotationSchema,
  type LabelPair,
  type ProfileAnnotation,
} from '../../lib/pyroscope/gen/types/v1/types_pb.js';
import { RawSampleSchema, type PushRequest, type RawProfileSeries, type RawSample } from '../../lib/pyroscope/gen/push/v1/push_pb.js';
import { ObjectLimitError, PushObjects } from './push-objects.js';

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

/** Decodes a PushRequest at once, with no bound on its objects. */
export function decodePushBinary(bytes: Uint8Array): PushRequest {
  return finishSteps(decodePushBinarySteps(bytes, new PushObjects(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)));
}

/**
 * Decodes a PushRequest in slices: yields after every slice of objects (as `budget` counts them)
 * and of fields skipped. Throws what `fromBinary` throws, or ObjectLimitError at the first object
 * past the budget's bound (whichever comes first in the bytes).
 */
export function* decodePushBinarySteps(bytes: Uint8Array, budget = new PushObjects()): Generator<void, PushRequest, void> {
  if (budget.bounded) {
    // Counted before anything is built, so a body past the bound is refused having built
    // nothing: a flood of empty series then costs a scan, not millions of short-lived messages.
    yield* countObjects(bytes, budget);
    budget.restart();
  }
  const common = yield* readWellFormed(bytes, budget);
  if (common) return common;
  budget.restart();
  return yield* readAny(bytes, budget);
}

/**
 * Counts the series, samples, labels and annotations in the bytes, reading only tags and lengths
 * (the reads `readAny` makes to find them); throws ObjectLimitError past the bound. Where the
 * bytes do not decode it stops quietly: the decode that follows reports that.
 */
function* countObjects(bytes: Uint8Array, budget: PushObjects): Generator<void, void, void> {
  if (yield* countWellFormed(bytes, budget)) return;
  budget.restart();
  const reader = new BinaryReader(bytes);
  try {
    while (reader.pos < bytes.byteLength) {
      const [fieldNo, wireType] = reader.tag();
      budget.count();
      if (fieldNo === 1) {
        const seriesEnd = seriesEndOf(reader);
        budget.object();
        while (reader.pos < seriesEnd) {
          const [seriesFieldNo, seriesWireType] = reader.tag();
          budget.count();
          if (seriesFieldNo >= 1 && seriesFieldNo <= 3) {
            reader.pos += reader.uint32();
            budget.object();
          } else if (seriesWireType === WireType.StartGroup) yield* skipGroup(reader, seriesFieldNo, RECURSION_LIMIT - 2, budget);
          else reader.skip(seriesWireType, seriesFieldNo, RECURSION_LIMIT - 2);
          if (budget.sliceFull()) yield;
        }
      } else if (wireType === WireType.StartGroup) yield* skipGroup(reader, fieldNo, RECURSION_LIMIT - 1, budget);
      else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 1);
      if (budget.sliceFull()) yield;
    }
  } catch (err) {
    if (err instanceof ObjectLimitError) throw err;
  }
}

/** `countObjects` for bytes in the common form, without the BinaryReader; false when they are not in it. */
function* countWellFormed(bytes: Uint8Array, budget: PushObjects): Generator<void, boolean, void> {
  const wire = new WellFormedWire(bytes);
  const end = bytes.length;
  while (wire.pos < end) {
    const seriesEnd = wire.tag() === FIELD_1 ? wire.valueEnd(end) : -1;
    if (seriesEnd < 0) return false;
    budget.object();
    while (wire.pos < seriesEnd) {
      const valueEnd = wire.tag() === 0 ? -1 : wire.valueEnd(seriesEnd);
      if (valueEnd < 0) return false;
      wire.pos = valueEnd;
      budget.object();
      if (budget.sliceFull()) yield;
    }
    if (budget.sliceFull()) yield;
  }
  return true;
}

/**
 * Any bytes, the way `fromBinary` reads them. Series are read in place (not by a helper per
 * series) so that a slice may end between two labels of one series.
 */
function* readAny(bytes: Uint8Array, budget: PushObjects): Generator<void, PushRequest, void> {
  const reader = new BinaryReader(bytes);
  const request: PushRequest = { $typeName: 'push.v1.PushRequest', series: [] };
  const end = bytes.byteLength;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    budget.count();
    if (fieldNo === 1) {
      const seriesEnd = seriesEndOf(reader);
      budget.object();
      const series: RawProfileSeries = { $typeName: 'push.v1.RawProfileSeries', labels: [], samples: [], annotations: [] };
      request.series.push(series);
      while (reader.pos < seriesEnd) {
        const [seriesFieldNo, seriesWireType] = reader.tag();
        budget.count();
        if (seriesFieldNo === 1) series.labels.push(objectOf(budget, yield* readLabel(reader, reader.uint32(), budget)));
        else if (seriesFieldNo === 2) series.samples.push(objectOf(budget, yield* readSample(reader, reader.uint32(), budget)));
        else if (seriesFieldNo === 3) series.annotations.push(objectOf(budget, yield* readAnnotation(reader, reader.uint32(), budget)));
        else if (seriesWireType === WireType.StartGroup) yield* skipGroup(reader, seriesFieldNo, RECURSION_LIMIT - 2, budget);
        else reader.skip(seriesWireType, seriesFieldNo, RECURSION_LIMIT - 2);
        if (budget.sliceFull()) yield;
      }
    } else if (wireType === WireType.StartGroup) yield* skipGroup(reader, fieldNo, RECURSION_LIMIT - 1, budget);
    else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 1);
    if (budget.sliceFull()) yield;
  }
  return request;
}

/** A series' length read the way `fromBinary` reads a nested message's: its end, unchecked. */
function seriesEndOf(reader: BinaryReader): number {
  const length = reader.uint32();
  return reader.pos + length;
}

/** `message`, counted as one more object (after it is read, as `fromBinary` would have read it). */
function objectOf<T>(budget: PushObjects, message: T): T {
  budget.object();
  return message;
}

/**
 * `BinaryReader.skip` of a group, stepped through here a slice at a time with the reader's own
 * checks and errors: a group of millions of fields is a slice like any other.
 */
function* skipGroup(reader: BinaryReader, fieldNo: number, recursionLimit: number, budget: PushObjects): Generator<void, void, void> {
  if (recursionLimit <= 0) throw new Error('maximum recursion depth reached');
  for (;;) {
    const [innerFieldNo, innerWireType] = reader.tag();
    budget.count();
    if (innerWireType === WireType.EndGroup) {
      if (innerFieldNo !== fieldNo) throw new Error('invalid end group tag');
      break;
    }
    if (innerWireType === WireType.StartGroup) yield* skipGroup(reader, innerFieldNo, recursionLimit - 1, budget);
    else reader.skip(innerWireType, innerFieldNo, recursionLimit - 1);
    if (budget.sliceFull()) yield;
  }
  if (reader.pos > reader.len) throw new RangeError('premature EOF');
}

function* readLabel(reader: BinaryReader, length: number, budget: PushObjects): Generator<void, LabelPair, void> {
  const [name, value] = yield* readStringPair(reader, length, STRICT.labelName, STRICT.labelValue, budget);
  return { $typeName: 'types.v1.LabelPair', name, value };
}

function* readSample(reader: BinaryReader, length: number, budget: PushObjects): Generator<void, RawSample, void> {
  const sample: RawSample = { $typeName: 'push.v1.RawSample', rawProfile: new Uint8Array(0), ID: '' };
  const end = reader.pos + length;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    budget.count();
    if (fieldNo === 1) sample.rawProfile = reader.bytes();
    else if (fieldNo === 2) sample.ID = reader.string(STRICT.sampleId);
    else if (wireType === WireType.StartGroup) yield* skipGroup(reader, fieldNo, RECURSION_LIMIT - 3, budget);
    else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 3);
    if (budget.sliceFull()) yield;
  }
  return sample;
}

function* readAnnotation(reader: BinaryReader, length: number, budget: PushObjects): Generator<void, ProfileAnnotation, void> {
  const [key, value] = yield* readStringPair(reader, length, STRICT.annotationKey, STRICT.annotationValue, budget);
  return { $typeName: 'types.v1.ProfileAnnotation', key, value };
}

/** A message of two string fields, 1 and 2, as LabelPair and ProfileAnnotation are. */
function* readStringPair(
  reader: BinaryReader,
  length: number,
  strictFirst: boolean,
  strictSecond: boolean,
  budget: PushObjects,
): Generator<void, [string, string], void> {
  let first = '';
  let second = '';
  const end = reader.pos + length;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    budget.count();
    if (fieldNo === 1) first = reader.string(strictFirst);
    else if (fieldNo === 2) second = reader.string(strictSecond);
    else if (wireType === WireType.StartGroup) yield* skipGroup(reader, fieldNo, RECURSION_LIMIT - 3, budget);
    else reader.skip(wireType, fieldNo, RECURSION_LIMIT - 3);
    if (budget.sliceFull()) yield;
  }
  return [first, second];
}

/** The one-byte tags of fields 1, 2 and 3 as length-delimited: every field of these messages. */
const FIELD_1 = (1 << 3) | 2;
const FIELD_2 = (2 << 3) | 2;
const FIELD_3 = (3 << 3) | 2;
/** Longest length varint read here: 4 bytes (28 bits, 256 MiB), beyond any body accepted. */
const MAX_LENGTH_SHIFT = 28;
/** Longer strings go to the UTF-8 decoder even when ASCII: copying them byte by byte stops paying. */
const MAX_COPIED_TEXT = 64;

/**
 * The common request read straight off its bytes, or undefined when it is not one: every field a
 * known one with its own wire type (a one-byte tag), every length within the enclosing message.
 * For such bytes the BinaryReader path makes exactly these reads, so the message is the same, and
 * so is the error of a string that is not UTF-8 (it goes to the same decoder). Anything else
 * (unknown fields, other wire types, lengths running past their message) is left to that path,
 * which then decides. What this saves per request is the reader's DataView, a Buffer view and a
 * TextDecoder call per string (short ASCII is copied directly) and an array per tag; decoding
 * through the reader was about a third of the receiver's own work per Push, this a third of that.
 */
function* readWellFormed(bytes: Uint8Array, budget: PushObjects): Generator<void, PushRequest | undefined, void> {
  const wire = new WellFormedWire(bytes);
  const request: PushRequest = { $typeName: 'push.v1.PushRequest', series: [] };
  const end = bytes.length;
  while (wire.pos < end) {
    const seriesEnd = wire.tag() === FIELD_1 ? wire.valueEnd(end) : -1;
    if (seriesEnd < 0) return undefined;
    budget.object();
    const series: RawProfileSeries = { $typeName: 'push.v1.RawProfileSeries', labels: [], samples: [], annotations: [] };
    request.series.push(series);
    while (wire.pos < seriesEnd) {
      if (!wire.seriesField(seriesEnd, series)) return undefined;
      budget.object();
      if (budget.sliceFull()) yield;
    }
    if (budget.sliceFull()) yield;
  }
  return request;
}

/** A position in a request's bytes; its reads give -1, undefined or false where the bytes are not in the common form. */
class WellFormedWire {
  pos = 0;
  /** The strings of the last `stringPair`. */
  private first = '';
  private second = '';

  constructor(private readonly bytes: Uint8Array) {}

  /** Reads a tag: one of the FIELD_ tags, or 0 for any other. */
  tag(): number {
    const tag = this.bytes[this.pos++]!;
    return tag === FIELD_1 || tag === FIELD_2 || tag === FIELD_3 ? tag : 0;
  }

  /** Reads a length: the end of the value it announces, or -1 when that passes `end` or the varint is longer than 4 bytes. */
  valueEnd(end: number): number {
    let length = 0;
    for (let shift = 0; shift < MAX_LENGTH_SHIFT; shift += 7) {
      if (this.pos >= end) return -1;
      const byte = this.bytes[this.pos++]!;
      length |= (byte & 0x7f) << shift;
      if (byte < 0x80) return length <= end - this.pos ? this.pos + length : -1;
    }
    return -1;
  }

  /** Reads one label, sample or annotation of `series`; false when not in the common form. */
  seriesField(end: number, series: RawProfileSeries): boolean {
    const tag = this.tag();
    const valueEnd = tag === 0 ? -1 : this.valueEnd(end);
    if (valueEnd < 0) return false;
    if (tag === FIELD_1) {
      if (!this.stringPair(valueEnd, STRICT.labelName, STRICT.labelValue)) return false;
      series.labels.push({ $typeName: 'types.v1.LabelPair', name: this.first, value: this.second });
    } else if (tag === FIELD_2) {
      const sample = this.sample(valueEnd);
      if (!sample) return false;
      series.samples.push(sample);
    } else {
      if (!this.stringPair(valueEnd, STRICT.annotationKey, STRICT.annotationValue)) return false;
      series.annotations.push({ $typeName: 'types.v1.ProfileAnnotation', key: this.first, value: this.second });
    }
    return true;
  }

  private sample(end: number): RawSample | undefined {
    let rawProfile: Uint8Array | undefined;
    let id = '';
    while (this.pos < end) {
      const tag = this.tag();
      const valueEnd = tag === FIELD_1 || tag === FIELD_2 ? this.valueEnd(end) : -1;
      if (valueEnd < 0) return undefined;
      if (tag === FIELD_1) {
        rawProfile = this.bytes.subarray(this.pos, valueEnd);
        this.pos = valueEnd;
      } else id = this.text(valueEnd, STRICT.sampleId);
    }
    return { $typeName: 'push.v1.RawSample', rawProfile: rawProfile ?? new Uint8Array(0), ID: id };
  }

  /** A LabelPair or ProfileAnnotation into `first` and `second`; false when not in the common form. */
  private stringPair(end: number, strictFirst: boolean, strictSecond: boolean): boolean {
    this.first = '';
    this.second = '';
    while (this.pos < end) {
      const tag = this.tag();
      const valueEnd = tag === FIELD_1 || tag === FIELD_2 ? this.valueEnd(end) : -1;
      if (valueEnd < 0) return false;
      if (tag === FIELD_1) this.first = this.text(valueEnd, strictFirst);
      else this.second = this.text(valueEnd, strictSecond);
    }
    return true;
  }

  /** The string up to `end`: short ASCII copied directly, anything else through the reader's own UTF-8 decoder. */
  private text(end: number, strict: boolean): string {
    const bytes = this.bytes;
    const start = this.pos;
    this.pos = end;
    if (end - start > MAX_COPIED_TEXT) return utf8(bytes, start, end, strict);
    let text = '';
    for (let i = start; i < end; i++) {
      const byte = bytes[i]!;
      if (byte >= 0x80) return utf8(bytes, start, end, strict);
      text += String.fromCharCode(byte);
    }
    return text;
  }
}

/** What `BinaryReader.string` does with the same bytes. */
function utf8(bytes: Uint8Array, start: number, end: number, strict: boolean): string {
  return getTextEncoding().decodeUtf8(bytes.subarray(start, end), strict);
}
