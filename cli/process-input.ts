import { createReadStream, fstatSync } from 'node:fs';
import type { Clock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { parseInputEntry } from '../core/entry-json.js';
import { lineBatches } from './lines.js';

/** `--input`: JSON lines of entries, or plain log lines (no labels, read at the clock's now). */
export type InputFormat = 'jsonl' | 'text';

/** A chunk's worth of entries and the input line each came from. */
export interface InputBatch {
  readonly entries: Entry[];
  readonly lineNumbers: number[];
}

/**
 * The entries of `rivulet process`'s input, a chunk at a time, or at most `batchLimit` entries at a
 * time. A malformed line is reported (`stdin:LINE: reason`) and skipped; blank lines of JSON-lines
 * input are skipped silently.
 */
export async function* inputEntries(
  stdin: NodeJS.ReadableStream,
  input: InputFormat,
  clock: Clock,
  malformed: (lineNumber: number, reason: string) => void,
  batchLimit = Number.POSITIVE_INFINITY,
): AsyncGenerator<InputBatch> {
  let lineNumber = 0;
  for await (const lines of lineBatches(readable(stdin))) {
    let entries: Entry[] = [];
    let lineNumbers: number[] = [];
    for (const line of lines) {
      if (entries.length >= batchLimit) {
        yield { entries, lineNumbers };
        entries = [];
        lineNumbers = [];
      }
      lineNumber++;
      if (input === 'jsonl' && line.trim() === '') continue;
      try {
        entries.push(
          input === 'text'
            ? { labels: {}, line, timestamp: clock.nowNs(), structuredMetadata: [], extracted: {} }
            : parseInputEntry(line, clock),
        );
        lineNumbers.push(lineNumber);
      } catch (err) {
        malformed(lineNumber, (err as Error).message);
      }
    }
    if (entries.length > 0) yield { entries, lineNumbers };
  }
}

/**
 * The process's own standard input, when it is a file, is read straight from its descriptor in
 * 1 MiB chunks (Node's stdin stream reads 64 KiB at a time); other streams (pipes, terminals,
 * tests) as they are. Not a pipe: Node's stdin stream has made the descriptor non-blocking, and a
 * read of it that finds the pipe empty fails with EAGAIN instead of waiting.
 */
function readable(stdin: NodeJS.ReadableStream): NodeJS.ReadableStream {
  if (stdin !== process.stdin || !isRegularFile(0)) return stdin;
  return createReadStream('', { fd: 0, highWaterMark: 1 << 20, autoClose: false });
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}
