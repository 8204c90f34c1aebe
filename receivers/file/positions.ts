/**
 * Where reading stopped in each file, kept in a small JSON file so a restarted source neither
 * skips nor repeats lines. Each record holds the byte offset just past the last line that was
 * taken over downstream, and the file's device and inode, so a file replaced while the source was
 * down is read from its start instead of from a stale offset.
 *
 * Format: `{"version":1,"files":{"<path>":{"offset":"123","dev":"2049","ino":"5313"}}}` (numbers
 * as strings: offsets and inodes can exceed 2^53). Saved by writing a temporary file, flushing it
 * to the device and renaming it over the old one, so a crash mid-save leaves the previous
 * positions.
 *
 * Loading, as the reference does: a missing or empty file is a start with no positions (an empty
 * one is logged: a crash before the first save can leave it so); a file that is not the format is
 * an error. A record whose offset is not a non-negative whole number, or whose device or inode is
 * not a whole number, is dropped with a log line, so that file is read from its start (or end, with
 * `tail_from_end`) and a bad offset never reaches a read nor is saved back.
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Log } from '../../lib/log.js';

export interface FilePosition {
  readonly offset: number;
  readonly dev: bigint;
  readonly ino: bigint;
}

interface StoredFile {
  readonly offset: string;
  readonly dev: string;
  readonly ino: string;
}

const WHOLE_NUMBER = /^[0-9]+$/;

export class Positions {
  private readonly entries = new Map<string, FilePosition>();
  /** The records as loaded, untouched by later updates. */
  private readonly loaded = new Map<string, FilePosition>();
  private dirty = false;
  private saving: Promise<void> = Promise.resolve();
  /** A save that waits for the one being written; it will write the positions of its own time. */
  private waiting: Promise<void> | undefined;

  /** `file` empty means positions live only in memory. */
  constructor(
    readonly file: string,
    private readonly log: Log = () => {},
  ) {}

  /**
   * Loads the positions file; a missing or empty one is an empty start, one that is not the
   * format an error. Invalid records are dropped.
   */
  async load(): Promise<void> {
    if (this.file === '') return;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (text.trim() === '') {
      this.log('warn', 'positions file is empty, starting without positions', { file: this.file });
      return;
    }
    let doc: { version?: number; files?: Record<string, StoredFile> };
    try {
      doc = JSON.parse(text) as typeof doc;
    } catch (err) {
      throw new Error(`positions file ${this.file} is not valid JSON: ${(err as Error).message}`);
    }
    if (doc.version !== 1 || typeof doc.files !== 'object' || doc.files === null)
      throw new Error(`positions file ${this.file} has an unknown format`);
    for (const [path, stored] of Object.entries(doc.files)) {
      const position = validPosition(stored);
      if (!position) {
        // A malformed record only loses that file's position; the next save leaves it out.
        this.log('warn', 'dropping an invalid position', { file: this.file, path, position: JSON.stringify(stored) });
        this.dirty = true;
        continue;
      }
      this.entries.set(path, position);
      this.loaded.set(path, position);
    }
  }

  get(path: string): FilePosition | undefined {
    return this.entries.get(path);
  }

  /**
   * The position the positions file held, when it was loaded, for the same file (device and
   * inode) under another path: a file renamed while the source was not running. The loaded
   * records are kept apart because the old path may already have been taken by a new file.
   */
  findMoved(path: string, dev: bigint, ino: bigint): FilePosition | undefined {
    for (const [other, position] of this.loaded) {
      if (other !== path && position.dev === dev && position.ino === ino) return position;
    }
    return undefined;
  }

  /** Records where reading `path` reached; the offset must be a non-negative whole number. */
  set(path: string, position: FilePosition): void {
    if (!Number.isSafeInteger(position.offset) || position.offset < 0)
      throw new RangeError(`invalid offset ${position.offset} for ${path}`);
    this.entries.set(path, position);
    this.dirty = true;
  }

  /** Paths with a recorded position. */
  paths(): string[] {
    return [...this.entries.keys()];
  }

  delete(path: string): void {
    if (this.entries.delete(path)) this.dirty = true;
  }

  /**
   * Writes the positions if they changed since the last save. Saves never overlap; a save asked
   * for while one is being written waits for it and then writes the positions as they are by
   * then, so on a slow disk saves do not queue up behind each other with positions growing stale
   * (after a crash, what is read again is what was taken over since the last save finished).
   */
  save(): Promise<void> {
    if (this.file === '') return this.saving;
    if (this.waiting) return this.waiting;
    if (!this.dirty) return this.saving;
    const file = this.file;
    // A failed save must not block the next ones; the caller of the failed one hears of it.
    const saving = this.saving
      .catch(() => {})
      .then(async () => {
        this.waiting = undefined;
        if (!this.dirty) return;
        this.dirty = false;
        try {
          await writeDurably(file, this.text());
        } catch (err) {
          this.dirty = true;
          throw err;
        }
      });
    this.waiting = saving;
    this.saving = saving;
    return saving;
  }

  private text(): string {
    const files: Record<string, StoredFile> = {};
    for (const [path, p] of [...this.entries].sort(([a], [b]) => a.localeCompare(b))) {
      files[path] = { offset: String(p.offset), dev: String(p.dev), ino: String(p.ino) };
    }
    return JSON.stringify({ version: 1, files }, null, 2) + '\n';
  }
}

/** Writes a temporary file, flushes it to the device and renames it over `file`. */
async function writeDurably(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}

/** A stored record as a position; undefined unless offset, device and inode are whole numbers. */
function validPosition(stored: unknown): FilePosition | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const { offset, dev, ino } = stored as Record<string, unknown>;
  const whole = (value: unknown) =>
    (typeof value === 'string' && WHOLE_NUMBER.test(value)) || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0);
  if (!whole(offset) || !whole(dev) || !whole(ino)) return undefined;
  const at = Number(offset);
  if (!Number.isSafeInteger(at)) return undefined;
  return { offset: at, dev: BigInt(dev as string | number), ino: BigInt(ino as string | number) };
}
