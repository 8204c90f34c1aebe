import type { Entry } from '../core/entry.js';
import { type EntryOutputFormat, entryJsonPieces, formatEntries, pieceEnd } from '../core/entry-json.js';
import type { MetricFamilies } from '../core/metrics.js';
import type { Io } from './io.js';
import type { InputFormat } from './process-input.js';

/**
 * What `rivulet process` tells its user besides the output: malformed lines as they come, progress
 * on a terminal once a second and a summary at the end (not with `--quiet`), and the exit code. It
 * also buffers the output: entries are formatted a run at a time (see formatEntries), and stdout is
 * written once the event loop turns or in 64 KiB pieces. Each piece is encoded as UTF-8 here (the
 * bytes `stdout.write` of the text would write) into one buffer kept for the purpose: Buffer.from
 * would go over the text once more to count the bytes first.
 */
export class ProcessReport {
  read = 0;
  forwarded = 0;
  malformed = 0;
  readonly terminal: boolean;
  private readonly startedAt = performance.now();
  private readonly progress: NodeJS.Timeout | undefined;
  private out = '';
  private flushScheduled = false;
  /** Entries forwarded and not formatted yet, all to be printed in `unformattedFormat`. */
  private readonly unformatted: Entry[] = [];
  private unformattedFormat: EntryOutputFormat = 'json';
  private readonly formatted: string[] = [];
  /** Room to encode a flush's worth of output and a long line after it: three bytes per UTF-16 code unit at most. */
  private readonly encoded = Buffer.allocUnsafe(3 * 2 * FLUSH_LENGTH);

  constructor(
    private readonly io: Io,
    quiet: boolean,
  ) {
    this.terminal = (io.stderr as Partial<NodeJS.WriteStream>).isTTY === true && !quiet;
    this.progress = this.terminal ? setInterval(() => io.stderr.write(`\r\x1b[K${this.progressLine()}`), 1000).unref() : undefined;
  }

  malformedLine = (lineNumber: number, reason: string): void => {
    this.io.stderr.write(`stdin:${lineNumber}: ${reason}\n`);
    this.malformed++;
  };

  /** One output line (without its newline). */
  output(line: string): void {
    this.forwarded++;
    this.scheduleFlush();
    this.formatUnformatted();
    this.append(line);
  }

  /** One forwarded entry, to be printed in `format`. */
  outputEntry(entry: Entry, format: EntryOutputFormat): void {
    this.forwarded++;
    this.scheduleFlush();
    if (format !== this.unformattedFormat) this.formatUnformatted();
    this.unformattedFormat = format;
    this.unformatted.push(entry);
    if (this.unformatted.length === ENTRIES_PER_FORMAT) this.formatUnformatted();
  }

  flush(): void {
    this.formatUnformatted();
    this.write();
  }

  /**
   * Output is held while the input that made it is being worked through, and written once the
   * event loop turns (when the next chunk of input is awaited, or a timer's output is done), so
   * a slow live stream (`tail -f app.log | rivulet process …`) shows its entries as they come.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.scheduledFlush);
  }

  private readonly scheduledFlush = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  private formatUnformatted(): void {
    const entries = this.unformatted;
    if (entries.length === 0) return;
    const format = this.unformattedFormat;
    // An entry whose line is longer than a flush is written in pieces (see appendLong); the runs
    // around it are formatted together as usual.
    let from = 0;
    for (let i = 0; i < entries.length; i++) {
      if (format === 'line' || entries[i]!.line.length <= FLUSH_LENGTH) continue;
      this.appendRun(entries.slice(from, i), format);
      this.write();
      for (const piece of entryJsonPieces(entries[i]!, format === 'json', FLUSH_LENGTH)) {
        this.out += piece;
        if (this.out.length > FLUSH_LENGTH) this.write();
      }
      this.out += '\n';
      from = i + 1;
    }
    this.appendRun(from === 0 ? entries : entries.slice(from), format);
    entries.length = 0;
  }

  private appendRun(entries: readonly Entry[], format: EntryOutputFormat): void {
    if (entries.length === 0) return;
    formatEntries(entries, format, this.formatted);
    for (let i = 0; i < entries.length; i++) this.append(this.formatted[i]!);
  }

  private append(line: string): void {
    if (line.length > FLUSH_LENGTH) {
      this.appendLong(line);
      return;
    }
    this.out += `${line}\n`;
    if (this.out.length > FLUSH_LENGTH) this.write();
  }

  /**
   * A line longer than a flush goes out a flush's worth at a time: appended whole, it would be
   * copied flat once more and encoded at once, two more copies of a line that can be 100 MiB.
   */
  private appendLong(line: string): void {
    this.write();
    for (let at = 0; at < line.length; ) {
      const end = pieceEnd(line, at, FLUSH_LENGTH);
      this.out = line.slice(at, end);
      this.write();
      at = end;
    }
    this.out = '\n';
  }

  private write(): void {
    const text = this.out;
    if (text.length === 0) return;
    this.out = '';
    if (3 * text.length > this.encoded.length) {
      this.io.stdout.write(text);
      return;
    }
    const length = this.encoded.write(text);
    // A copy: the stream may hold on to what it is given, and `encoded` is used again.
    this.io.stdout.write(Buffer.from(this.encoded.subarray(0, length)));
  }

  /** Ends the report: the summary on a terminal; the exit code (1 when every line was malformed). */
  finish(families: readonly MetricFamilies[], input: InputFormat): number {
    this.flush();
    clearInterval(this.progress);
    if (this.terminal) this.io.stderr.write(`\r\x1b[K${this.summaryLine(families)}\n`);
    if (this.malformed > 0 && this.read === 0) {
      const hint = input === 'jsonl' ? '; plain log lines need --input text' : '';
      this.io.stderr.write(`rivulet process: every input line was malformed (${this.malformed})${hint}\n`);
      return 1;
    }
    return 0;
  }

  private rate(count: number): string {
    const seconds = (performance.now() - this.startedAt) / 1000;
    return `${Math.round(count / Math.max(seconds, 1e-3)).toLocaleString('en-US')} entries/s`;
  }

  private progressLine(): string {
    return `rivulet process: ${this.read.toLocaleString('en-US')} in, ${this.forwarded.toLocaleString('en-US')} out, ${this.rate(this.read)}`;
  }

  /** `N in, M out, D dropped (reason: n, …), K malformed, T s (R entries/s)`. */
  private summaryLine(families: readonly MetricFamilies[]): string {
    const drops = droppedByReason(families);
    const dropped = [...drops.values()].reduce((sum, n) => sum + n, 0);
    const reasons = [...drops].map(([reason, n]) => `${reason}: ${n.toLocaleString('en-US')}`).join(', ');
    const seconds = ((performance.now() - this.startedAt) / 1000).toFixed(2);
    return (
      `rivulet process: ${this.read.toLocaleString('en-US')} in, ${this.forwarded.toLocaleString('en-US')} out, ` +
      `${dropped.toLocaleString('en-US')} dropped${reasons ? ` (${reasons})` : ''}, ${this.malformed.toLocaleString('en-US')} malformed, ` +
      `${seconds} s (${this.rate(this.read)})`
    );
  }
}

/** Output is written once this many UTF-16 code units are pending. */
const FLUSH_LENGTH = 1 << 16;
/** Entries formatted together: enough to share the cost of a run, few enough to stay in cache. */
const ENTRIES_PER_FORMAT = 64;

/** Dropped lines by reason, summed over registries (one per pipeline thread), in first-seen order. */
function droppedByReason(families: readonly MetricFamilies[]): Map<string, number> {
  const drops = new Map<string, number>();
  for (const list of families)
    for (const family of list) {
      if (family.name !== 'logs_process_dropped_lines_total') continue;
      for (const value of family.values)
        if (value.value > 0) drops.set(String(value.labels.reason), (drops.get(String(value.labels.reason)) ?? 0) + value.value);
    }
  return drops;
}
