import { readFileSync } from 'node:fs';

/** The standard streams a command reads and writes; tests pass their own. */
export interface Io {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** A file a command was given that cannot be read; the message reads as Go's `*fs.PathError`. */
export class FileReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FileReadError';
  }
}

/** The system's texts for the errors a config path meets, as Go prints them (libuv words some differently). */
const SYSTEM_ERROR_TEXTS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'not a directory',
  ENAMETOOLONG: 'file name too long',
  EINVAL: 'invalid argument',
};

/**
 * Reads a text file named on the command line. A path that is missing, a directory, a symlink
 * loop or unreadable throws a FileReadError worded as Go's, `open X: no such file or directory`
 * or `read X: is a directory`, which the command prints as one line.
 */
export function readTextFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new FileReadError(fileErrorMessage(err, file));
  }
}

function fileErrorMessage(err: unknown, file: string): string {
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code !== 'string' || typeof e.syscall !== 'string') throw err;
  const text = SYSTEM_ERROR_TEXTS[e.code] ?? /^[A-Z0-9]+: ([^,]*)/.exec(e.message)?.[1] ?? e.code;
  return `${e.syscall} ${file}: ${text}`;
}
