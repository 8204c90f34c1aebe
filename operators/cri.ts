/**
 * stage.cri — parses CRI container log lines (`<time> <stream> <flag> <content>`) and joins
 * partial (`P`) lines with the full (`F`) line that completes them, one buffer per label set.
 *
 * Reference quirks kept:
 * - the header grammar is lenient: the time is whatever precedes the first whitespace (not
 *   validated), exactly one space separates the fields, the flag is optional and a leading
 *   `F`/`P` of the content is taken as the flag (`stdout Failed` → content `ailed`), at most one
 *   space after it is skipped; lines that do not parse pass through untouched;
 * - extracted `flags`, `stream`, `content` (this fragment only), `time` (the raw token);
 *   the label `stream` is set, and a time that is not strict RFC 3339 keeps the old timestamp;
 * - buffers are keyed by the whole label set after `stream` is added, and `max_partial_lines`
 *   counts buffered label sets, not fragments: when it is reached, every buffered entry is
 *   emitted as it is (insertion order; the reference's order is unspecified) and counted in
 *   `logs_process_cri_partial_lines_flushed_total`, and the new fragment starts a fresh buffer;
 * - with `max_partial_line_size_truncate`, stored partials and merged lines are cut to
 *   `max_partial_line_size` bytes (possibly inside a character) and each cut is counted in
 *   `logs_process_cri_lines_truncated_total`; a full line that merged nothing is never cut;
 * - no timer, no flush at end of input: partials still buffered then are lost.
 */
import { Observable } from 'rxjs';
import { FieldError } from '../lib/config/errors.js';
import { labelsKey, type Entry } from '../core/entry.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { names } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';
import { parseRFC3339Strict } from '../lib/time/rfc3339-strict.js';

export interface CriConfig {
  readonly max_partial_lines: number;
  /** In bytes; used only with `max_partial_line_size_truncate`. */
  readonly max_partial_line_size: number;
  readonly max_partial_line_size_truncate: boolean;
}

export const cri = defineStage<CriConfig>({
  name: 'cri',
  doc: 'Parses CRI-format lines (time, stream, flag, content) and joins partial lines.',
  fields: {
    max_partial_lines: { kind: t.int, default: 100, doc: 'How many label sets may hold partial lines before all of them are flushed.' },
    max_partial_line_size: {
      kind: t.int,
      default: 0,
      doc: 'Maximum size in bytes of a joined line; only with `max_partial_line_size_truncate`.',
    },
    max_partial_line_size_truncate: {
      kind: t.bool,
      default: false,
      doc: 'Cuts partial and joined lines to `max_partial_line_size` bytes.',
    },
  },
  validate: validateCri,
  build: buildCri,
  partitioning: () => ({ writes: names(['stream']), state: { by: 'stream' } }),
});

function validateCri(config: CriConfig): void {
  if (!Number.isInteger(config.max_partial_lines) || config.max_partial_lines <= 0) {
    throw new FieldError('max_partial_lines', 'max_partial_lines must be greater than 0');
  }
  if (!Number.isInteger(config.max_partial_line_size) || config.max_partial_line_size < 0) {
    throw new FieldError('max_partial_line_size', 'max_partial_line_size must be a non-negative integer');
  }
}

/** One parsed CRI line. */
export interface CriLine {
  /** The raw time token, possibly empty or not a time at all. */
  readonly time: string;
  readonly stream: 'stdout' | 'stderr';
  readonly partial: boolean;
  readonly content: string;
}

/** Parses a CRI line header, or returns `undefined` when the line is not in CRI format. */
export function parseCriLine(line: string): CriLine | undefined {
  const space = firstWhitespace(line);
  // The time token must end in exactly one ASCII space: a tab or a second space fails below.
  if (space < 0 || line.charCodeAt(space) !== 0x20) return undefined;
  let pos = space + 1;
  let stream: CriLine['stream'];
  if (line.startsWith('stdout', pos)) stream = 'stdout';
  else if (line.startsWith('stderr', pos)) stream = 'stderr';
  else return undefined;
  pos += 6;
  if (line.charCodeAt(pos) !== 0x20) return undefined;
  pos++;
  let partial = false;
  const flag = line.charCodeAt(pos);
  if (flag === 0x50 /* P */) {
    partial = true;
    pos++;
  } else if (flag === 0x46 /* F */) {
    pos++;
  }
  if (line.charCodeAt(pos) === 0x20) pos++;
  return { time: line.slice(0, space), stream, partial, content: line.slice(pos) };
}

/** Index of the first character Go's unicode.IsSpace accepts, or -1. */
function firstWhitespace(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0) return i;
    if (
      c >= 0x1680 &&
      (c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000)
    )
      return i;
  }
  return -1;
}

/**
 * Reads CRI times as `parseRFC3339Strict` does, keeping the second of the last UTC time read:
 * a container writes many lines a second, so most times differ from the last one only in their
 * fraction, which is all that is parsed then. The date and time before the fraction decide
 * alone whether they are valid, so a time starting with the kept second is valid exactly when
 * its fraction and `Z` are.
 */
export class CriTimes {
  /** `YYYY-MM-DDTHH:MM:SS` of the last UTC time read, and that second in nanoseconds. */
  private second = '';
  private secondNs = 0n;

  parse(time: string): bigint | undefined {
    if (this.second !== '' && time.startsWith(this.second)) {
      const nanos = utcFraction(time);
      if (nanos !== undefined) return nanos === 0 ? this.secondNs : this.secondNs + BigInt(nanos);
    }
    const ns = parseRFC3339Strict(time);
    if (ns === undefined) return undefined;
    const nanos = utcFraction(time);
    if (nanos !== undefined) {
      this.second = time.slice(0, SECOND_LENGTH);
      this.secondNs = ns - BigInt(nanos);
    }
    return ns;
  }
}

/** Length of `YYYY-MM-DDTHH:MM:SS`. */
const SECOND_LENGTH = 19;
// Scale factors for 1–9 fraction digits.
const FRACTION_SCALE = [0, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];

/**
 * The nanoseconds of what follows the second when it is `Z` or `.` and one to nine digits then
 * `Z` (the strict grammar's UTC forms); undefined for anything else.
 */
function utcFraction(time: string): number | undefined {
  if (time.length === SECOND_LENGTH + 1) return time.charCodeAt(SECOND_LENGTH) === 0x5a /* Z */ ? 0 : undefined;
  if (time.charCodeAt(SECOND_LENGTH) !== 0x2e /* . */ || time.charCodeAt(time.length - 1) !== 0x5a) return undefined;
  const digits = time.length - SECOND_LENGTH - 2;
  if (digits < 1 || digits > 9) return undefined;
  let nanos = 0;
  for (let i = SECOND_LENGTH + 1; i < time.length - 1; i++) {
    const c = time.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
    nanos = nanos * 10 + (c - 0x30);
  }
  return nanos * FRACTION_SCALE[digits]!;
}

/**
 * A buffered partial entry. With truncation on, the joined line is kept as UTF-8 bytes, because a
 * cut may fall inside a character and later fragments are appended to those exact bytes.
 */
interface HeldPartial {
  readonly entry: Entry;
  bytes?: Uint8Array;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

function buildCri(config: CriConfig, ctx: BuildContext): StageImpl {
  const { partialLinesFlushed, linesTruncated } = ctx.metrics.cri();
  // The counters are part of the stage's surface: visible at 0 as soon as it exists.
  partialLinesFlushed.inc(0);
  linesTruncated.inc(0);
  const maxHeld = config.max_partial_lines;
  const truncate = config.max_partial_line_size_truncate;
  const maxBytes = config.max_partial_line_size;
  const times = new CriTimes();

  /** Applies the size limit to a held line (as bytes), counting each cut. */
  const limit = (bytes: Uint8Array): Uint8Array => {
    if (bytes.length <= maxBytes) return bytes;
    linesTruncated.inc();
    return bytes.subarray(0, maxBytes);
  };
  /** The held line joined with `content`, cut to size when truncation is on. */
  const join = (held: HeldPartial | undefined, entry: Entry, content: string): HeldPartial => {
    if (!truncate) {
      if (held) entry.line = held.entry.line + content;
      return { entry };
    }
    const tail = utf8.encode(content);
    const bytes = held ? concat(held.bytes ?? utf8.encode(held.entry.line), tail) : tail;
    return { entry, bytes: limit(bytes) };
  };
  const release = (held: HeldPartial): Entry => {
    if (held.bytes) held.entry.line = utf8Decoder.decode(held.bytes);
    return held.entry;
  };

  return {
    kind: 'operator',
    operator: (source) =>
      new Observable<Entry>((subscriber) => {
        const partialsByLabels = new Map<string, HeldPartial>();
        const subscription = source.subscribe({
          next(entry) {
            const parsed = parseCriLine(entry.line);
            if (parsed === undefined) {
              subscriber.next(entry);
              return;
            }
            const { extracted } = entry;
            extracted.flags = parsed.partial ? 'P' : 'F';
            extracted.stream = parsed.stream;
            extracted.content = parsed.content;
            extracted.time = parsed.time;
            entry.line = parsed.content;
            const timestamp = times.parse(parsed.time);
            if (timestamp !== undefined) entry.timestamp = timestamp;
            entry.labels.stream = parsed.stream;
            // Nothing can merge into a full line while no partial is held: skip the key.
            if (!parsed.partial && partialsByLabels.size === 0) {
              subscriber.next(entry);
              return;
            }
            const key = labelsKey(entry.labels);

            if (parsed.partial) {
              if (partialsByLabels.size >= maxHeld) {
                const flushed = [...partialsByLabels.values()];
                partialsByLabels.clear();
                partialLinesFlushed.inc(flushed.length);
                ctx.debug('cri: partial lines upper bound reached, flushing them', { threshold: maxHeld, flushed: flushed.length });
                partialsByLabels.set(key, join(undefined, entry, parsed.content));
                for (const held of flushed) subscriber.next(release(held));
                return;
              }
              partialsByLabels.set(key, join(partialsByLabels.get(key), entry, parsed.content));
              return;
            }

            const held = partialsByLabels.get(key);
            if (held === undefined) {
              subscriber.next(entry);
              return;
            }
            partialsByLabels.delete(key);
            subscriber.next(release(join(held, entry, parsed.content)));
          },
          error: (err) => subscriber.error(err),
          complete: () => subscriber.complete(),
        });
        return () => {
          subscription.unsubscribe();
          partialsByLabels.clear();
        };
      }),
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
