import { isUtf8 } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';

/** The standard streams a command reads and writes; tests pass their own. */
export interface Io {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/**
 * A path a command was given that cannot be read or written, or that holds no text. The message
 * reads as Go's `*fs.PathError`, `open X: no such file or directory`, and every command prints it
 * as one line, `rivulet COMMAND: open X: no such file or directory`, exit 2.
 */
export class PathError extends Error {
  constructor(
    /** What failed: `open`, `read`. */
    readonly op: string,
    /** The path as the user gave it. */
    readonly path: string,
    /** Why, as Go words it: `no such file or directory`, `is a directory`. */
    readonly reason: string,
    /** The system's error code (`ENOENT`), when the system refused. */
    readonly code?: string,
  ) {
    super(`${op} ${path}: ${reason}`);
    this.name = 'PathError';
  }
}

/**
 * A PathError's reason alone, a missing file said as `no such file`: how `rivulet test` has always
 * named a test file, or a test's config, that is not there (the line already names the path).
 */
export function briefReason(err: PathError): string {
  return err.code === 'ENOENT' ? 'no such file' : err.reason;
}

/** The system's texts for the errors a path meets, as Go prints them (libuv words some differently). */
const SYSTEM_ERROR_TEXTS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'not a directory',
  ENAMETOOLONG: 'file name too long',
  EINVAL: 'invalid argument',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EIO: 'input/output error',
};

/**
 * Reads a file named on the command line as bytes. A path that is missing, a directory, a symlink
 * loop or unreadable throws a PathError worded as Go's, `open X: no such file or directory` or
 * `read X: is a directory`.
 */
export function readFileBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw pathErrorOf(err, file);
  }
}

/**
 * Reads a text file named on the command line: {@link readFileBytes}, then UTF-8 text or a
 * PathError. A binary file (a NUL byte, or bytes that are not UTF-8) is refused in one line,
 * `read X: not a text file (a NUL byte at line 1, column 2)`, where reading it as a config would
 * give an error for nearly every byte; the reference's scanner refuses both anywhere in a file.
 */
export function readTextFile(file: string): string {
  const bytes = readFileBytes(file);
  const problem = binaryContent(bytes);
  if (problem !== undefined) throw new PathError('read', file, problem);
  return bytes.toString('utf8');
}

/** Writes a file named on the command line; a path that cannot be written throws a PathError. */
export function writeTextFile(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (err) {
    throw pathErrorOf(err, file);
  }
}

function pathErrorOf(err: unknown, file: string): unknown {
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code !== 'string' || typeof e.syscall !== 'string') return err;
  const text = SYSTEM_ERROR_TEXTS[e.code] ?? /^[A-Z0-9]+: ([^,]*)/.exec(e.message)?.[1] ?? e.code;
  return new PathError(e.syscall, file, text, e.code);
}

/** Why `bytes` are not a text file (the first NUL byte or invalid UTF-8 sequence, and where), or undefined. */
function binaryContent(bytes: Uint8Array): string | undefined {
  const nul = bytes.indexOf(0);
  const before = nul === -1 ? bytes : bytes.subarray(0, nul);
  const invalid = isUtf8(before) ? undefined : firstInvalidUtf8(before);
  if (invalid !== undefined) {
    return `not UTF-8 text (byte 0x${bytes[invalid]!.toString(16).toUpperCase().padStart(2, '0')} at ${whereIn(bytes, invalid)})`;
  }
  if (nul !== -1) return `not a text file (a NUL byte at ${whereIn(bytes, nul)})`;
  return undefined;
}

/** `line L, column C` of a byte offset in valid UTF-8, the column counted in characters as config positions are. */
function whereIn(bytes: Uint8Array, offset: number): string {
  // (lastIndexOf counts a negative start from the end, hence the test for the first byte.)
  const lineStart = offset === 0 ? 0 : bytes.lastIndexOf(0x0a, offset - 1) + 1;
  let line = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < lineStart; i = bytes.indexOf(0x0a, i + 1)) line++;
  let col = 1;
  // A character is one leading byte and its continuation bytes (10xxxxxx).
  for (let i = lineStart; i < offset; i++) if ((bytes[i]! & 0xc0) !== 0x80) col++;
  return `line ${line}, column ${col}`;
}

/**
 * The offset of the first byte that does not start a well-formed UTF-8 sequence (an overlong
 * form, a surrogate or a code point above U+10FFFF included), or undefined when all of it is UTF-8.
 */
function firstInvalidUtf8(bytes: Uint8Array): number | undefined {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    // The sequence's length and the range its second byte must be in (RFC 3629, table 3-7 of Unicode).
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > n) return i;
    const second = bytes[i + 1]!;
    if (second < low || second > high) return i;
    for (let k = 2; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return undefined;
}
