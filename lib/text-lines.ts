/**
 * Splits text that arrives in pieces into lines, in time linear in the text: each piece is
 * scanned once, and a line that spans pieces is kept as the list of its pieces and joined once,
 * when its break arrives. (Appending each piece to the unfinished line and searching the whole of
 * it again costs time quadratic in the line's length: minutes for a line of 100 MiB.)
 *
 * Breaks: `\n` and `\r\n` always; a lone `\r` too when `loneCarriageReturn` is set (as `readline`
 * splits with `crlfDelay: Infinity`), otherwise a `\r` before a `\n` is dropped and any other `\r`
 * is text.
 */
export class TextLineSplitter {
  /** The unfinished line, in the pieces it arrived in. */
  private parts: string[] = [];
  /** The last piece ended in a `\r` that ended a line; a `\n` starting the next piece belongs to it. */
  private skipNewline = false;

  constructor(private readonly loneCarriageReturn: boolean) {}

  /** Appends every line `text` completes to `lines`. */
  push(text: string, lines: string[]): void {
    if (text.length === 0) return;
    let start = 0;
    if (this.skipNewline) {
      this.skipNewline = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    let newline = text.indexOf('\n', start);
    let carriageReturn = this.loneCarriageReturn ? text.indexOf('\r', start) : -1;
    while (newline !== -1 || carriageReturn !== -1) {
      if (carriageReturn !== -1 && (newline === -1 || carriageReturn < newline)) {
        lines.push(this.finish(text, start, carriageReturn));
        start = carriageReturn + 1;
        if (start === text.length) this.skipNewline = true;
        else if (text.charCodeAt(start) === 10) newline = text.indexOf('\n', ++start);
        carriageReturn = text.indexOf('\r', start);
        continue;
      }
      const line = this.finish(text, start, newline);
      lines.push(!this.loneCarriageReturn && line.endsWith('\r') ? line.slice(0, -1) : line);
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    if (start < text.length) this.parts.push(start === 0 ? text : text.slice(start));
  }

  /** The unfinished last line (no trailing `\r` in newline-only mode), or undefined if there is none. */
  end(): string | undefined {
    this.skipNewline = false;
    if (this.parts.length === 0) return undefined;
    const line = this.finish('', 0, 0);
    return !this.loneCarriageReturn && line.endsWith('\r') ? line.slice(0, -1) : line;
  }

  /** The unfinished line completed by `text[start, end)`, joined once; the parts are let go first. */
  private finish(text: string, start: number, end: number): string {
    if (this.parts.length === 0) return text.slice(start, end);
    const parts = this.parts;
    this.parts = [];
    if (end > start) parts.push(text.slice(start, end));
    return parts.length === 1 ? parts[0]! : parts.join('');
  }
}
