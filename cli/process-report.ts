import type { MetricFamilies } from '../core/metrics.js';
import type { Io } from './io.js';
import type { InputFormat } from './process-input.js';

/**
 * What `rivulet process` tells its user besides the output: malformed lines as they come, progress
 * on a terminal once a second and a summary at the end (not with `--quiet`), and the exit code. It
 * also buffers stdout, writing in 64 KiB pieces.
 */
export class ProcessReport {
  read = 0;
  forwarded = 0;
  malformed = 0;
  readonly terminal: boolean;
  private readonly startedAt = performance.now();
  private readonly progress: NodeJS.Timeout | undefined;
  private out = '';

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
    this.out += `${line}\n`;
    if (this.out.length > 1 << 16) this.flush();
  }

  flush(): void {
    if (this.out.length > 0) this.io.stdout.write(utf8(this.out));
    this.out = '';
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

/** Room to encode a flush's worth of output and a long line after it: three bytes per UTF-16 code unit at most. */
const encoded = Buffer.allocUnsafe(3 * 2 * (1 << 16));

/**
 * The UTF-8 bytes of `text`, as `stdout.write(text)` would write them, without the pass that
 * Buffer.from makes to count them first.
 */
function utf8(text: string): Buffer | string {
  if (3 * text.length > encoded.length) return text;
  const length = encoded.write(text);
  // A copy: the stream may hold on to what it is given, and `encoded` is used again.
  return Buffer.from(encoded.subarray(0, length));
}

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
