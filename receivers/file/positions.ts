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
 *
 * Under a sharded run each shard keeps only the files it owns, in a file of its own beside this
 * one; loading merges them all (positions-files.ts).
 */
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Log } from '../../lib/log.js';
import { newestRecords, ownsFile, positionsFilesBeside, shardPositionsFile, type PositionsShard } from './positions-files.js';

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
  /**
   * The records as loaded, untouched by later updates; on a shard, those of every shard's files,
   * since a file renamed while the source was down may have moved to a path this shard owns.
   */
  private readonly loaded = new Map<string, FilePosition>();
  private dirty = false;
  private saving: Promise<void> = Promise.resolve();
  /** A save that waits for the one being written; it will write the positions of its own time. */
  private waiting: Promise<void> | undefined;
  /** Where saves go: `file`, or on a shard of a run with several, that shard's file beside it. */
  private readonly written: string;
  /** In place: the shard files merged at load, removed once `file` holds their records. */
  private staleShardFiles: string[] = [];

  /**
   * `file` empty means positions live only in memory. `shard` is this shard of a sharded run
   * with several: only the paths it owns are kept, and saved to its own file.
   */
  constructor(
    readonly file: string,
    private readonly log: Log = () => {},
    private readonly shard?: PositionsShard,
  ) {
    this.written = shard ? shardPositionsFile(file, shard.index) : file;
  }

  /**
   * Loads the positions: the configured file and the shard files beside it (see
   * positions-files.ts), each path's record from the newest file; only the paths this shard owns
   * are kept. A missing or empty file is an empty start, one that is not the format an error.
   * Invalid records are dropped.
   */
  async load(): Promise<void> {
    if (this.file === '') return;
    const files: { file: string; modifiedNs: bigint; records: Map<string, FilePosition> }[] = [];
    for (const found of await positionsFilesBeside(this.file)) {
      const records = await this.read(found.file);
      if (records) files.push({ ...found, records });
      if (!this.shard && found.file !== this.file) this.staleShardFiles.push(found.file);
    }
    for (const [path, position] of newestRecords(files)) {
      this.loaded.set(path, position);
      if (ownsFile(path, this.shard)) this.entries.set(path, position);
    }
    // In place, the configured file is to hold every path again: written at the first save,
    // after which the shard files go (see `save`).
    if (this.staleShardFiles.length > 0) this.dirty = true;
  }

  /** One positions file's valid records; undefined when it vanished or is empty. */
  private async read(file: string): Promise<Map<string, FilePosition> | undefined> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    if (text.trim() === '') {
      this.log('warn', 'positions file is empty, starting without positions', { file });
      return undefined;
    }
    let doc: { version?: number; files?: Record<string, StoredFile> };
    try {
      doc = JSON.parse(text) as typeof doc;
    } catch (err) {
      throw new Error(`positions file ${file} is not valid JSON: ${(err as Error).message}`);
    }
    if (doc.version !== 1 || typeof doc.files !== 'object' || doc.files === null)
      throw new Error(`positions file ${file} has an unknown format`);
    const records = new Map<string, FilePosition>();
    for (const [path, stored] of Object.entries(doc.files)) {
      const position = validPosition(stored);
      if (!position) {
        // A malformed record only loses that file's position; the next save leaves it out.
        this.log('warn', 'dropping an invalid position', { file, path, position: JSON.stringify(stored) });
        this.dirty = true;
        continue;
      }
      records.set(path, position);
    }
    return records;
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
    const file = this.written;
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
        await this.removeStaleShardFiles();
      });
    this.waiting = saving;
    this.saving = saving;
    return saving;
  }

  /**
   * In place, once the configured file was written: it holds the newest record of every path the
   * shard files held (those the source still knows), so they hold nothing newer. Left behind, each
   * later load would read them again and bring back positions the source has since forgotten
   * (files gone), which a new file at such a path would then have to be told apart from.
   */
  private async removeStaleShardFiles(): Promise<void> {
    const stale = this.staleShardFiles;
    this.staleShardFiles = [];
    for (const file of stale) {
      try {
        await unlink(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
          this.log('warn', 'removing a shard positions file failed', { file, error: (err as Error).message });
      }
    }
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
