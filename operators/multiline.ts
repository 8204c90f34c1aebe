/**
 * stage.multiline — merges the lines of one stream (one label set) into blocks: a line matching
 * `firstline` starts a block and the following lines that do not match join it, separated by
 * `\n`. A block is sent on when the next start line comes, when it reaches `max_lines`, when its
 * stream has been idle for `max_wait_time`, and when the input ends.
 *
 * Reference quirks kept:
 * - `firstline` is an unanchored RE2 search; lines of a stream seen before its first start line
 *   pass through unchanged and at once;
 * - every block — also the ones cut by `max_lines` or by an idle flush while more lines follow —
 *   carries the labels, timestamp, structured metadata and a copy of the extracted map of its
 *   stream's most recent start line;
 * - `trim_newlines` strips every trailing `\r`/`\n` of each line before joining; without it lines
 *   are joined as they are (`"a\n"` + `"b"` gives `"a\n\nb"`);
 * - the separator is added only after non-empty text, and a block whose text is empty is never
 *   sent (its line count is kept), as with the reference's byte buffer; the block is flushed when
 *   its line count equals `max_lines` exactly, and `max_lines = 0` never flushes;
 * - a stream idle for `max_wait_time` is flushed and forgotten, so a following non-start line
 *   passes through on its own; a line arriving for a block already idle that long (a late timer)
 *   flushes it first but keeps the stream, and joins a new block of the same start line;
 * - at end of input every pending block is flushed (least recently active stream first; the
 *   reference's order is unspecified).
 *
 * Idle means no input waiting: `max_wait_time` is measured on the pipeline's input time
 * (core/input-time.ts), which stands still while input is queued upstream — the rest of a batch
 * being pushed, messages a source received and has not sent yet. A stall of the process while a
 * block's next lines wait does not split it; input that is really idle flushes the block after
 * `max_wait_time`, as the reference's wall-clock timer does.
 *
 * Streams are forgotten once idle, so memory follows the streams active within `max_wait_time`,
 * not every stream ever seen. One timer serves the whole stage: streams are kept in order of last
 * activity, so the next to go idle is always the first one.
 */
import { Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { cloneEntry, labelsKey, type Entry, type Labels } from '../core/entry.js';
import { FieldError } from '../lib/config/errors.js';
import type { Regex } from '../lib/regex/index.js';
import { compileFieldRegex } from '../core/field-regex.js';
import type { HandBack } from '../core/hand-back.js';
import { atInputTime, wallInputTime, type InputTime } from '../core/input-time.js';
import { defineStage, type BuildContext, type StageImpl } from '../core/stage.js';
import { NO_NAMES } from '../core/stage-partitioning.js';
import { t } from '../lib/config/schema.js';

export interface MultilineConfig {
  /** RE2 expression that identifies the first line of a block. */
  readonly firstline: string;
  /** Lines per block at most; 0 means no limit. */
  readonly max_lines: number;
  /** Nanoseconds a stream may stay idle before its block is sent on; > 0. */
  readonly max_wait_time: bigint;
  readonly trim_newlines: boolean;
}

export const multiline = defineStage<MultilineConfig>({
  name: 'multiline',
  doc: 'Merges lines into blocks: a line matching `firstline` starts a block, following lines join it.',
  example: String.raw`stage.multiline {
  firstline     = "^\\d{4}-\\d{2}-\\d{2}"
  max_wait_time = "3s"
}`,
  fields: {
    firstline: { kind: t.string, required: true, doc: 'RE2 expression that identifies the first line of a block.' },
    max_lines: {
      kind: t.int,
      default: 128,
      doc: 'Maximum lines per block; a full block is sent on and a new one starts. 0 means no limit.',
    },
    max_wait_time: { kind: t.duration, default: 3_000_000_000n, doc: 'A block whose stream gets no line for this long is sent on.' },
    trim_newlines: { kind: t.bool, default: true, doc: 'Removes trailing `\\r` and `\\n` from each line before joining.' },
  },
  validate: validateMultiline,
  build: buildMultiline,
  partitioning: () => ({ writes: NO_NAMES, state: { by: 'stream' } }),
});

export function validateMultiline(config: MultilineConfig): void {
  compileFirstline(config);
  if (config.max_lines < 0) throw new FieldError('max_lines', 'max_lines must not be negative');
  if (config.max_wait_time <= 0n) throw new FieldError('max_wait_time', 'max_wait_time must be greater than 0');
}

function compileFirstline(config: MultilineConfig): Regex {
  if (config.firstline === '') throw new FieldError('firstline', 'multiline stage config must define `firstline` regular expression');
  return compileFieldRegex('firstline', config.firstline, 'multiline stage first line regex compilation error: ');
}

function buildMultiline(config: MultilineConfig, ctx: BuildContext): StageImpl {
  const firstline = compileFirstline(config);
  const held = new HeldLines();
  return {
    kind: 'operator',
    held: () => held.whenSentOn(),
    operator: multilineBlocks({
      held,
      isFirstLine: (line) => firstline.test(line),
      maxLines: config.max_lines,
      maxWaitMs: Number(config.max_wait_time) / 1e6,
      trimNewlines: config.trim_newlines,
      scheduler: ctx.clock.scheduler,
      input: ctx.input,
      currentHandBack: ctx.currentHandBack,
    }),
  };
}

export interface MultilineOptions {
  readonly isFirstLine: (line: string) => boolean;
  /** 0 means no limit. */
  readonly maxLines: number;
  /** Idle time, in the scheduler's milliseconds, after which a stream's block is sent on. */
  readonly maxWaitMs: number;
  readonly trimNewlines: boolean;
  /** Drives the idle timer. */
  readonly scheduler: SchedulerLike;
  /**
   * The time idleness is measured on: it stands still while input is queued (see
   * core/input-time.ts). The scheduler's own time when not given.
   */
  readonly input?: InputTime;
  /**
   * The hand-back of the batch being pushed (core/hand-back.ts): a block all of whose lines came
   * with one is dropped, not flushed, when its sender requests it.
   */
  readonly currentHandBack?: () => HandBack | undefined;
  /** Told of every line taken into a block and of every block sent on. */
  readonly held?: HeldLines;
}

/**
 * Lets a sender wait until the lines held in blocks so far have been sent on, so it can
 * acknowledge its input only then (`logs.source.jetstream` does). Lines are numbered as blocks
 * take them; a wait for line N ends once no open block holds a line numbered N or below.
 */
export class HeldLines {
  private taken = 0;
  private waiters: Array<{ readonly upTo: number; readonly resolve: () => void }> = [];
  /** The number of the oldest line an open block holds (Infinity for none); set by the running operator. */
  oldestHeld: () => number = () => Number.POSITIVE_INFINITY;

  take(): number {
    return ++this.taken;
  }

  whenSentOn(): Promise<void> {
    const upTo = this.taken;
    if (this.oldestHeld() > upTo) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  /** A block was sent on (or dropped with the operator's state): wake whoever no longer waits. */
  sentOn(): void {
    if (this.waiters.length === 0) return;
    const oldest = this.oldestHeld();
    const still = this.waiters.filter((w) => w.upTo >= oldest);
    for (const waiter of this.waiters) if (waiter.upTo < oldest) waiter.resolve();
    this.waiters = still;
  }
}

/** One stream's block in progress. */
interface StreamBlock {
  /** The stream's most recent start line: every block is sent with its labels, time and data. */
  start: Entry;
  /** The block's text so far. */
  text: string;
  lines: number;
  lastActivityMs: number;
  /** The number (HeldLines) of the block's first line. */
  firstHeld: number;
  /** The hand-back every line of the block came with; undefined when none did or they differ. */
  handBack: HandBack | undefined;
}

/**
 * The multiline operator: blocks per label set, flushed by the next start line, `maxLines`, an
 * idle stream, completion or error (pending blocks go out before the error). Unsubscribing
 * releases the timer and all state.
 */
export function multilineBlocks(options: MultilineOptions): OperatorFunction<Entry, Entry> {
  const { isFirstLine, maxLines, maxWaitMs, trimNewlines, scheduler, held } = options;
  const input = options.input ?? wallInputTime(scheduler);
  const currentHandBack = options.currentHandBack ?? (() => undefined);
  return (source) =>
    new Observable<Entry>((subscriber) => {
      // Insertion order is activity order: a stream is moved to the end on each of its lines.
      const streams = new Map<string, StreamBlock>();
      let timer: Subscription | undefined;
      if (held)
        held.oldestHeld = () => {
          let oldest = Number.POSITIVE_INFINITY;
          for (const stream of streams.values()) if (stream.text.length > 0 && stream.firstHeld < oldest) oldest = stream.firstHeld;
          return oldest;
        };
      // Consecutive lines usually come from the same stream: comparing with the previous label set
      // is much cheaper than rendering the canonical key again.
      let previousLabels: Labels | undefined;
      let previousCount = 0;
      let previousKey = '';
      const streamKey = (labels: Labels): string => {
        if (previousLabels !== undefined && sameLabels(labels, previousLabels, previousCount)) return previousKey;
        previousKey = labelsKey(labels);
        // A copy: the entry's own labels may be changed by later stages once it is sent on.
        previousLabels = { ...labels };
        previousCount = Object.keys(previousLabels).length;
        return previousKey;
      };

      /**
       * Sends the block on. `last` means the stream's start line is no longer needed, so the start
       * entry itself carries the block instead of a copy.
       */
      const flush = (stream: StreamBlock, last: boolean) => {
        if (stream.text.length === 0) return;
        const out = last ? stream.start : cloneEntry(stream.start);
        out.line = stream.text;
        stream.text = '';
        stream.lines = 0;
        subscriber.next(out);
        held?.sentOn();
      };

      const armTimer = () => {
        if (timer !== undefined || streams.size === 0) return;
        const oldest = streams.values().next().value!;
        timer = atInputTime(input, scheduler, oldest.lastActivityMs + maxWaitMs, expireIdle);
      };
      const expireIdle = () => {
        timer = undefined;
        const nowMs = input.now();
        for (const [key, stream] of streams) {
          if (nowMs - stream.lastActivityMs < maxWaitMs) break;
          streams.delete(key);
          flush(stream, true);
          if (subscriber.closed) return;
        }
        armTimer();
      };
      // Blocks whose sender took their lines back are forgotten unsent: the sender gives the lines
      // to a next reader, which sends them again and completes the block. Blocks whose sender ended
      // its session keeping what it sent are sent on at once: no more lines come from it.
      const handBacks = new Map<HandBack, () => void>();
      const blocksOf = (handBack: HandBack): Array<[string, StreamBlock]> =>
        [...streams].filter(([, stream]) => stream.handBack === handBack && stream.text.length > 0);
      const listenForHandBack = (handBack: HandBack) => {
        if (handBacks.has(handBack) || handBack.requested) return;
        const stopListening = () => {
          handBacks.get(handBack)?.();
          handBacks.delete(handBack);
        };
        const takenBack = handBack.onRequest(() => {
          stopListening();
          for (const [key] of blocksOf(handBack)) streams.delete(key);
          held?.sentOn();
        });
        const ended = handBack.onEnd(() => {
          stopListening();
          for (const [key, stream] of blocksOf(handBack)) {
            if (subscriber.closed) return;
            streams.delete(key);
            flush(stream, true);
          }
        });
        handBacks.set(handBack, () => {
          takenBack();
          ended();
        });
      };
      const flushAll = () => {
        timer?.unsubscribe();
        timer = undefined;
        const pending = [...streams.values()];
        streams.clear();
        for (const stream of pending) {
          if (subscriber.closed) return;
          flush(stream, true);
        }
      };

      const subscription = source.subscribe({
        next(entry) {
          const key = streamKey(entry.labels);
          const nowMs = input.now();
          let stream = streams.get(key);
          if (stream !== undefined && stream.text.length > 0 && nowMs - stream.lastActivityMs >= maxWaitMs) {
            flush(stream, false);
            // Downstream may have unsubscribed while taking the block: no state or timer after that.
            if (subscriber.closed) return;
          }
          const starts = isFirstLine(entry.line);
          if (stream === undefined) {
            if (!starts) {
              subscriber.next(entry);
              return;
            }
            stream = { start: entry, text: '', lines: 0, lastActivityMs: nowMs, firstHeld: 0, handBack: undefined };
          } else {
            if (starts) {
              flush(stream, true);
              if (subscriber.closed) return;
              stream.start = entry;
            }
            streams.delete(key);
            stream.lastActivityMs = nowMs;
          }
          streams.set(key, stream);
          const line = trimNewlines ? trimTrailingNewlines(entry.line) : entry.line;
          const number = held?.take() ?? 0;
          const handBack = currentHandBack();
          if (stream.text.length === 0) {
            stream.firstHeld = number;
            stream.handBack = handBack;
            if (handBack) listenForHandBack(handBack);
          } else if (stream.handBack !== handBack) stream.handBack = undefined;
          stream.text = stream.text.length > 0 ? stream.text + '\n' + line : line;
          stream.lines++;
          if (stream.lines === maxLines) {
            flush(stream, false);
            if (subscriber.closed) return;
          }
          armTimer();
        },
        error(err) {
          flushAll();
          subscriber.error(err);
        },
        complete() {
          flushAll();
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        timer?.unsubscribe();
        timer = undefined;
        streams.clear();
        for (const stopListening of handBacks.values()) stopListening();
        handBacks.clear();
        // Nothing is held any more: nobody may wait for it.
        held?.sentOn();
      };
    });
}

/** Whether `labels` has exactly the `count` pairs of `other`. */
function sameLabels(labels: Labels, other: Labels, count: number): boolean {
  let seen = 0;
  for (const name in labels) {
    if (labels[name] !== other[name] || !Object.hasOwn(other, name)) return false;
    seen++;
  }
  return seen === count;
}

/** Go's `strings.TrimRight(line, "\r\n")`. */
function trimTrailingNewlines(line: string): string {
  let end = line.length;
  while (end > 0) {
    const c = line.charCodeAt(end - 1);
    if (c !== 0x0a && c !== 0x0d) break;
    end--;
  }
  return end === line.length ? line : line.slice(0, end);
}
