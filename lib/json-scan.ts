/**
 * A JSON scanner over bytes for decoders that build only what they need: the token-level steps
 * of JSON's grammar (strings decoded as `JSON.parse` decodes them), and a skip over any value
 * that checks it without building it. Scanning slices by items (as the decoder counts them in
 * its `ItemSlices`) and by bytes scanned, so a body of few but large or skipped values yields too.
 */
import type { ItemSlices } from './slices.js';

/** A body that is not valid JSON, or not of the shape its decoder wants; the message says what and where. */
export class JsonDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonDecodeError';
  }
}

/** Deepest nesting accepted. */
export const MAX_JSON_DEPTH = 1000;

/** Bytes scanned between two yields, for bodies of few but large or skipped values. */
const SLICE_BYTES = 1 << 20;

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;

/**
 * Checks and steps over one value of any kind without building it. Iterative (a stack of
 * container kinds, not recursion), so nesting costs no call stack; `depth` is where it starts;
 * `progress` is what it yields after each slice.
 */
export function* skipValue<Y>(sc: JsonScanner, depth: number, progress: Y): Generator<Y, void, void> {
  const inObject: boolean[] = [];
  for (;;) {
    const c = sc.space();
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth + inObject.length >= MAX_JSON_DEPTH) throw new JsonDecodeError(`nesting is deeper than ${MAX_JSON_DEPTH} levels`);
      const isObject = c === OPEN_OBJECT;
      if (sc.open(c, isObject ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        inObject.push(isObject);
        if (isObject) sc.skipKey();
        continue;
      }
    } else sc.scalar();
    // After a value: close containers until one has a next member.
    for (;;) {
      if (inObject.length === 0) return;
      if (sc.sliceFull()) yield progress;
      const isObject = inObject[inObject.length - 1]!;
      if (sc.more(isObject ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        if (isObject) sc.skipKey();
        break;
      }
      inObject.pop();
    }
  }
}

/** The bytes and the position in them, with the token-level steps of JSON's grammar. */
export class JsonScanner<B extends ItemSlices = ItemSlices> {
  pos = 0;
  private yieldAt = SLICE_BYTES;

  constructor(
    readonly buf: Buffer,
    readonly budget: B,
  ) {}

  /** True once per full slice, counted in items decoded or bytes scanned. */
  sliceFull(): boolean {
    if (this.budget.sliceFull() || this.pos >= this.yieldAt) {
      this.budget.restartSlice();
      this.yieldAt = this.pos + SLICE_BYTES;
      return true;
    }
    return false;
  }

  /**
   * Skips whitespace to the next value; its first byte. Fails unless a value can start there, so
   * a broken body is named as broken rather than as the wrong shape.
   */
  valueStart(): number {
    const c = this.space();
    if (
      c === OPEN_OBJECT ||
      c === OPEN_ARRAY ||
      c === QUOTE ||
      c === 0x2d ||
      (c >= 0x30 && c <= 0x39) ||
      c === 0x74 ||
      c === 0x66 ||
      c === 0x6e
    )
      return c;
    return this.fail();
  }

  /** Skips whitespace; the next byte, or -1 at the end. */
  space(): number {
    const buf = this.buf;
    let pos = this.pos;
    while (pos < buf.length) {
      const c = buf[pos]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
    return pos < buf.length ? buf[pos]! : -1;
  }

  fail(): never {
    if (this.pos >= this.buf.length) throw new JsonDecodeError('Unexpected end of JSON input');
    const token = String.fromCodePoint(this.buf.toString('utf8', this.pos, Math.min(this.pos + 4, this.buf.length)).codePointAt(0)!);
    throw new JsonDecodeError(`Unexpected token ${JSON.stringify(token)} at byte ${this.pos}`);
  }

  /** Consumes `open`; false (and the close consumed too) when the container is empty. */
  open(open: number, close: number): boolean {
    if (this.space() !== open) this.fail();
    this.pos++;
    if (this.space() !== close) return true;
    this.pos++;
    return false;
  }

  /** After a member: true past a comma (another member follows), false past `close`. */
  more(close: number): boolean {
    const c = this.space();
    this.pos++;
    if (c === COMMA) return true;
    if (c === close) return false;
    this.pos--;
    return this.fail();
  }

  /** An object key and its colon. */
  key(): string {
    if (this.space() !== QUOTE) this.fail();
    const key = this.string();
    if (this.space() !== COLON) this.fail();
    this.pos++;
    return key;
  }

  skipKey(): void {
    if (this.space() !== QUOTE) this.fail();
    this.stringEnd();
    this.pos++;
    if (this.space() !== COLON) this.fail();
    this.pos++;
  }

  /** Consumes a `null`, if that is what comes next. */
  null(): boolean {
    if (this.space() !== 0x6e) return false;
    this.literal('null');
    return true;
  }

  /** A string, number, true, false or null. */
  scalar(): void {
    const c = this.space();
    if (c === QUOTE) {
      this.stringEnd();
      this.pos++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.number();
    else if (c === 0x74) this.literal('true');
    else if (c === 0x66) this.literal('false');
    else if (c === 0x6e) this.literal('null');
    else this.fail();
  }

  private literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      if (this.buf[this.pos] !== word.charCodeAt(i)) this.fail();
      this.pos++;
    }
  }

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` */
  private number(): void {
    const buf = this.buf;
    if (buf[this.pos] === 0x2d) this.pos++;
    if (buf[this.pos] === 0x30) this.pos++;
    else if (!this.digits()) this.fail();
    if (buf[this.pos] === 0x2e) {
      this.pos++;
      if (!this.digits()) this.fail();
    }
    if (buf[this.pos] === 0x65 || buf[this.pos] === 0x45) {
      this.pos++;
      if (buf[this.pos] === 0x2b || buf[this.pos] === 0x2d) this.pos++;
      if (!this.digits()) this.fail();
    }
  }

  private digits(): boolean {
    const start = this.pos;
    while (this.pos < this.buf.length && this.buf[this.pos]! >= 0x30 && this.buf[this.pos]! <= 0x39) this.pos++;
    return this.pos > start;
  }

  /** The string starting at the current quote, decoded as JSON.parse decodes it. */
  string(): string {
    const start = this.pos;
    const escaped = this.stringEnd();
    const end = this.pos;
    this.pos++;
    // Escapes are rare in log pushes; JSON.parse of the one literal decodes them exactly.
    if (escaped) return JSON.parse(this.buf.toString('utf8', start, end + 1)) as string;
    return this.buf.toString('utf8', start + 1, end);
  }

  /**
   * Moves to the closing quote of the string starting here, checking its escapes and that it
   * holds no raw control character; true when it has escapes.
   */
  private stringEnd(): boolean {
    const buf = this.buf;
    let pos = this.pos + 1;
    let escaped = false;
    for (;;) {
      if (pos >= buf.length) {
        this.pos = pos;
        this.fail();
      }
      const c = buf[pos]!;
      if (c === QUOTE) break;
      if (c < 0x20) {
        this.pos = pos;
        this.fail();
      }
      if (c === BACKSLASH) {
        escaped = true;
        const next = buf[++pos];
        if (next === 0x75) {
          for (let i = 1; i <= 4; i++) {
            const h = buf[pos + i];
            const hex = h !== undefined && ((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66));
            if (!hex) {
              this.pos = Math.min(pos + i, buf.length);
              this.fail();
            }
          }
          pos += 4;
        } else if (next === undefined || !ESCAPABLE.has(next)) {
          this.pos = pos;
          this.fail();
        }
      }
      pos++;
    }
    this.pos = pos;
    return escaped;
  }

  /** Only whitespace may follow the body's value. */
  finish(): void {
    if (this.space() !== -1) this.fail();
  }
}

/** The characters that may follow a backslash (besides `u`): `"` `\` `/` b f n r t. */
const ESCAPABLE = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
