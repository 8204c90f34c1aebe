/**
 * Cuts the bytes read from a file into lines, in time linear in the bytes: each chunk is scanned
 * once, and a line that spans chunks is kept as the list of its chunks' text and joined once, when
 * its newline arrives. (Decoding each chunk as it comes, instead of joining bytes and decoding them
 * at the end, keeps two copies of a long line at most, not three.) A line ends at `\n`; a `\r`
 * before it is dropped.
 *
 * With a `maxLineSize` (bytes, the `\n` and a `\r` before it not counted; 0 for none) a longer
 * line is dropped or, with `truncate`, cut to its first `maxLineSize` bytes (back to the start of
 * a character cut in two), as the reference's `max_line_size` and `max_line_size_truncate` do.
 * Either way no more than `maxLineSize + 1` bytes of it are ever held: the rest is only counted.
 */

import { StringDecoder } from 'node:string_decoder';

/** A line taken from the file. */
export interface FileLine {
  /** The line's text; undefined when it was dropped for being longer than `maxLineSize`. */
  readonly text: string | undefined;
  /** Bytes it took in the file, its newline included: how far the read offset moves past it. */
  readonly bytes: number;
  /** Bytes dropped or cut off for `maxLineSize`; 0 when the line fit. */
  readonly overflow: number;
}

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

export class FileLines {
  /** Without a limit: the unfinished line's text, chunk by chunk. */
  private pieces: string[] = [];
  private readonly decoder = new StringDecoder('utf8');
  /** With a limit: the unfinished line's bytes that are kept, in the chunks they came in (copies). */
  private parts: Buffer[] = [];
  private kept = 0;
  /** Bytes of the unfinished line read so far, kept or not. */
  private length = 0;
  private lastByte = -1;

  constructor(
    private readonly maxLineSize = 0,
    private readonly truncate = false,
  ) {}

  /** Bytes read of a line whose newline has not arrived yet. */
  get pending(): number {
    return this.length;
  }

  /** Forgets the unfinished line (the file is read again from an earlier offset). */
  reset(): void {
    this.pieces = [];
    this.decoder.end();
    this.parts = [];
    this.kept = 0;
    this.length = 0;
    this.lastByte = -1;
  }

  /**
   * The first line completed in `data[from..]` and the offset just past its newline; undefined
   * when `data[from..]` holds no newline, in which case it is taken in (copied: the caller may
   * reuse `data`) as part of the unfinished line.
   */
  next(data: Buffer, from: number): { line: FileLine; next: number } | undefined {
    const newline = data.indexOf(NEWLINE, from);
    if (newline === -1) {
      this.hold(data, from, data.length);
      return undefined;
    }
    if (this.length === 0) {
      const end = newline > from && data[newline - 1] === CARRIAGE_RETURN ? newline - 1 : newline;
      return { line: this.line(data, from, end, newline + 1 - from), next: newline + 1 };
    }
    this.hold(data, from, newline);
    return { line: this.finishHeld(1), next: newline + 1 };
  }

  /** The unfinished line as a last line (its file can no longer complete it); undefined if none. */
  end(): FileLine | undefined {
    return this.length === 0 ? undefined : this.finishHeld(0);
  }

  private hold(data: Buffer, from: number, to: number): void {
    if (to === from) return;
    const max = this.maxLineSize;
    this.length += to - from;
    this.lastByte = data[to - 1]!;
    if (max === 0) {
      this.pieces.push(this.decoder.write(data.subarray(from, to)));
      return;
    }
    // One byte past the limit is kept: it may be the `\r` of a line that fits.
    if (max > 0 && !this.truncate && this.length > max + 1) {
      // Over the limit and to be dropped: only its length matters now.
      this.parts = [];
      this.kept = max + 1;
      return;
    }
    const take = Math.min(max > 0 ? max + 1 - this.kept : to - from, to - from);
    if (take <= 0) return;
    this.parts.push(Buffer.from(data.subarray(from, from + take)));
    this.kept += take;
  }

  /** The held line, ended by a newline (`newlineBytes` 1) or by its file going away (0). */
  private finishHeld(newlineBytes: number): FileLine {
    const length = this.length;
    const carriageReturn = this.lastByte === CARRIAGE_RETURN;
    const contentLength = carriageReturn ? length - 1 : length;
    if (this.maxLineSize === 0) {
      const text = this.takeText();
      return { text: carriageReturn ? text.slice(0, -1) : text, bytes: length + newlineBytes, overflow: 0 };
    }
    const joined = this.takeHeld();
    return this.line(joined, 0, Math.min(contentLength, joined.length), length + newlineBytes, contentLength);
  }

  /** The line's text joined once, its pieces let go. */
  private takeText(): string {
    this.pieces.push(this.decoder.end());
    const pieces = this.pieces;
    this.reset();
    return pieces.join('');
  }

  /** The kept bytes joined once, the parts let go before the text is decoded (so at most two copies live). */
  private takeHeld(): Buffer {
    const parts = this.parts;
    this.reset();
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** The line `data[start, end)`, checked against `maxLineSize`; `fullLength` is its whole length when only its head is in `data`. */
  private line(data: Buffer, start: number, end: number, bytes: number, fullLength = end - start): FileLine {
    const max = this.maxLineSize;
    if (max === 0 || fullLength <= max) return { text: data.toString('utf8', start, end), bytes, overflow: 0 };
    if (!this.truncate) return { text: undefined, bytes, overflow: fullLength };
    const cut = characterStart(data, start, start + max);
    return { text: data.toString('utf8', start, cut), bytes, overflow: fullLength - (cut - start) };
  }
}

/**
 * `end`, or the start of the UTF-8 character that `end` cuts in two, so a truncated line does not
 * end in half a character (which would decode to a replacement character, longer than the limit).
 */
function characterStart(data: Buffer, start: number, end: number): number {
  if (end >= data.length) return end;
  let lead = end;
  // Continuation bytes are 10xxxxxx; a character has at most three of them.
  while (lead > start && end - lead < 4 && (data[lead]! & 0xc0) === 0x80) lead--;
  return lead;
}
