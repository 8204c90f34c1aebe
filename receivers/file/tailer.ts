/**
 * Follows one file path: reads the lines appended to it, sends them in batches and advances the
 * remembered offset only once a batch has been taken over downstream. It follows the path across
 * rotation:
 * - rename (the path now names a new file, or nothing): the old file is read to its end through
 *   the open handle, then the new one is read from its start;
 * - truncation, including copytruncate: the file is shorter than what was read, or the bytes just
 *   before the read offset changed, so reading starts again at 0.
 * A line is sent only once its newline has arrived; an unfinished last line waits (and is sent
 * as it is when its file is rotated away or deleted, since nothing can complete it any more).
 * Lines longer than `maxLineSize` are dropped or truncated without being held whole (see FileLines).
 *
 * A batch the receivers refuse is read again from its start on the next poll.
 *
 * Batches are kept short in time (see BatchSize): when the receivers take lines over slowly (a
 * rate limit, a slow sink), a batch holds only the lines they take over in about `batchAckMs`, so
 * the offset saved at a positions sync lags what was written out downstream by about that long.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { Clock } from '../../core/clock.js';
import type { Entry, Labels } from '../../core/entry.js';
import type { InputBacklog } from '../../core/input-time.js';
import type { SendOptions } from '../../core/receiver.js';
import type { Log } from '../../lib/log.js';
import { BatchSize } from './batch-size.js';
import { FileLines, type FileLine } from './file-lines.js';
import type { Positions } from './positions.js';

const CHUNK_BYTES = 256 * 1024;
const BATCH_LINES = 1000;
/** Lines of a file's first batch: small, so a restart against slow receivers repeats little. */
const FIRST_BATCH_LINES = 64;
const BATCH_BYTES = 1 << 20;
/** Bytes compared before the read offset to notice a file rewritten past its old length. */
const FINGERPRINT_BYTES = 32;

/** Which file identities (device + inode) are being read, and how far rotated-away ones were read. */
export class FileIdentities {
  private readonly owners = new Map<string, string>();
  private readonly finished = new Map<string, number>();

  /** Takes `key` for `path`; false while another path's tailer still reads that file. */
  claim(key: string, path: string): boolean {
    const owner = this.owners.get(key);
    if (owner !== undefined && owner !== path) return false;
    this.owners.set(key, path);
    return true;
  }

  /** Gives `key` up; `readTo` records how far the file was read (it may reappear under a new name). */
  release(key: string, path: string, readTo?: number): void {
    if (this.owners.get(key) === path) this.owners.delete(key);
    if (readTo === undefined) return;
    this.finished.set(key, readTo);
    // Only recent rotations matter; keep the record bounded.
    if (this.finished.size > 4096) this.finished.delete(this.finished.keys().next().value!);
  }

  /** How far a file was read under a name it no longer has. */
  readTo(key: string): number | undefined {
    return this.finished.get(key);
  }
}

export interface TailerOptions {
  readonly path: string;
  /** Labels of every entry (`filename` included). */
  readonly labels: Labels;
  readonly positions: Positions;
  readonly identities: FileIdentities;
  readonly clock: Clock;
  readonly send: (entries: Entry[], options?: SendOptions) => Promise<void>;
  /**
   * Held while the file is read and its end not reached yet: the lines still to come are input
   * waiting, which the pipeline's stages must not take for idle (see core/input-time.ts).
   */
  readonly backlog?: InputBacklog;
  /** For a file seen for the first time: start at its end instead of its start. */
  readonly tailFromEnd: boolean;
  readonly log: Log;
  /** Set when the source stops: reading ends after the batch in flight. */
  readonly signal: AbortSignal;
  /** Told of lines taken over downstream (with the offset reached) and of the file's size. */
  readonly stats?: TailerStats;
  /** Longest line in bytes (0: no limit), and whether a longer one is truncated rather than dropped. */
  readonly maxLineSize?: number;
  readonly maxLineSizeTruncate?: boolean;
  /** How long taking a batch over should take at most: slower receivers get smaller batches. */
  readonly batchAckMs?: number;
}

export interface TailerStats {
  sent(lines: number, bytes: number, offset: number): void;
  size(bytes: number): void;
  /** Lines over `maxLineSize` among lines taken over: dropped, or truncated, and the bytes that went. */
  overLong?(lines: number, bytes: number, truncated: boolean): void;
}

export class FileTailer {
  private handle: FileHandle | undefined;
  private dev = 0n;
  private ino = 0n;
  /** Bytes up to the end of the last line taken over downstream. */
  private offset = 0;
  /** The line being read after `offset`, whose newline has not arrived yet. */
  private readonly lines: FileLines;
  private readonly batchSize: BatchSize;
  private fingerprint: Buffer | undefined;
  private lastMtimeNs = -1n;
  private lastSize = -1n;

  constructor(private readonly options: TailerOptions) {
    this.lines = new FileLines(options.maxLineSize ?? 0, options.maxLineSizeTruncate ?? false);
    this.batchSize = new BatchSize(options.batchAckMs ?? Number.POSITIVE_INFINITY, BATCH_LINES, FIRST_BATCH_LINES);
  }

  get path(): string {
    return this.options.path;
  }

  private get key(): string {
    return `${this.dev}:${this.ino}`;
  }

  /** Reads whatever is new; resolves true when anything changed. */
  async poll(): Promise<boolean> {
    const { path } = this.options;
    let st;
    try {
      st = await stat(path, { bigint: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      st = undefined;
    }
    let changed = false;
    if (this.handle && (!st || st.dev !== this.dev || st.ino !== this.ino)) {
      await this.finishRotated(st === undefined);
      // Stopping mid-way keeps the old file's position, so a restart finds it under its new name.
      if (this.options.signal.aborted) return true;
      changed = true;
    }
    if (!st?.isFile()) return changed;
    if (!this.handle) {
      if (!(await this.openCurrent(st.dev, st.ino, Number(st.size)))) return changed;
      changed = true;
    } else if (st.mtimeNs === this.lastMtimeNs && st.size === this.lastSize) {
      return changed;
    } else if (Number(st.size) < this.readPos() || !(await this.fingerprintHolds())) {
      this.options.log('info', 'file was truncated, reading it again from the start', { path, size: Number(st.size), offset: this.offset });
      this.offset = 0;
      this.lines.reset();
      this.fingerprint = undefined;
      this.savePosition();
    }
    this.lastMtimeNs = st.mtimeNs;
    this.lastSize = st.size;
    this.options.stats?.size(Number(st.size));
    return (await this.readToEnd()) || changed;
  }

  /** Closes the file, keeping its position. */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    if (handle) {
      this.options.identities.release(this.key, this.options.path);
      await handle.close();
    }
  }

  private readPos(): number {
    return this.offset + this.lines.pending;
  }

  private async openCurrent(dev: bigint, ino: bigint, size: number): Promise<boolean> {
    const { path, positions, identities } = this.options;
    const key = `${dev}:${ino}`;
    // The same file under an old name is still being finished; read it here once that is done.
    if (!identities.claim(key, path)) return false;
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      identities.release(key, path);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    const opened = await handle.stat({ bigint: true });
    if (opened.dev !== dev || opened.ino !== ino) {
      // Replaced between stat and open: try again on the next poll.
      identities.release(key, path);
      await handle.close();
      return false;
    }
    this.handle = handle;
    this.dev = dev;
    this.ino = ino;
    this.lines.reset();
    this.fingerprint = undefined;
    const saved = positions.get(path);
    const rotatedTo = identities.readTo(key);
    const moved = positions.findMoved(path, dev, ino);
    if (rotatedTo !== undefined && rotatedTo <= size) this.offset = rotatedTo;
    else if (saved && saved.dev === dev && saved.ino === ino && saved.offset <= size) this.offset = saved.offset;
    // Renamed while the source was stopped: continue where it was left under its old name.
    else if (moved && moved.offset <= size) this.offset = moved.offset;
    else if (saved) this.offset = 0;
    else this.offset = this.options.tailFromEnd ? size : 0;
    this.options.log('debug', 'tailing file', { path, offset: this.offset });
    this.savePosition();
    return true;
  }

  /** The open file no longer is the path's file: read it to its end, then let it go. */
  private async finishRotated(deleted: boolean): Promise<void> {
    const { path, identities, log } = this.options;
    await this.readToEnd();
    if (this.options.signal.aborted) return;
    // Nothing can finish this line any more; send it as it is.
    const last = this.lines.end();
    if (last) await this.sendLines(last.text === undefined ? [] : [this.entry(last.text)], last.bytes, new OverLongLines().add(last));
    const key = this.key;
    const readTo = this.offset;
    const handle = this.handle!;
    this.handle = undefined;
    const linked = await handle.stat().then(
      (st) => st.nlink > 0,
      () => false,
    );
    identities.release(key, path, readTo);
    await handle.close();
    log('info', deleted ? 'file was removed, finished reading it' : 'file was rotated, finished reading the old file', { path });
    // A file renamed away keeps its record under this path until the path's next file replaces it:
    // a stop before the file is tailed under its new name must not lose how far it was read (a
    // restart finds it there, Positions.findMoved). Only a file gone for good loses its record.
    if (!linked) this.options.positions.delete(path);
    this.lastMtimeNs = -1n;
    this.lastSize = -1n;
  }

  private async fingerprintHolds(): Promise<boolean> {
    if (!this.fingerprint || !this.handle) return true;
    const length = this.fingerprint.length;
    const current = Buffer.alloc(length);
    const { bytesRead } = await this.handle.read(current, 0, length, this.readPos() - length);
    return bytesRead === length && current.equals(this.fingerprint);
  }

  /** Reads from the read position to the end of the file, sending complete lines in batches. */
  private async readToEnd(): Promise<boolean> {
    const handle = this.handle;
    if (!handle) return false;
    const { signal } = this.options;
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    // Invariant: offset + (bytes of the lines in `batch`) + lines.pending === pos.
    let pos = this.readPos();
    let batch: Entry[] = [];
    let batchBytes = 0;
    let overLong = new OverLongLines();
    let any = false;
    let queued: (() => void) | undefined;
    const flush = async () => {
      if (batchBytes === 0) return;
      const entries = batch;
      const bytes = batchBytes;
      const skipped = overLong;
      batch = [];
      batchBytes = 0;
      overLong = new OverLongLines();
      await this.sendLines(entries, bytes, skipped);
    };
    try {
      while (!signal.aborted) {
        const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, pos);
        if (bytesRead === 0) break;
        any = true;
        queued ??= this.options.backlog?.hold();
        pos += bytesRead;
        // `chunk` is not read into again until this data has been consumed (FileLines copies what it keeps).
        const data = chunk.subarray(0, bytesRead);
        for (let got = this.lines.next(data, 0); got; got = this.lines.next(data, got.next)) {
          const { line } = got;
          if (line.text !== undefined) batch.push(this.entry(line.text));
          overLong.add(line);
          batchBytes += line.bytes;
          if (batch.length >= this.batchSize.lines || batchBytes >= BATCH_BYTES) {
            await flush();
            if (signal.aborted) break;
          }
        }
      }
      if (signal.aborted && batchBytes > 0) {
        // Unsent lines are read again after a restart, from the saved offset.
        this.lines.reset();
        return any;
      }
      // The end of the file is reached: the last batch is all that still waits.
      const last = batchBytes > 0 ? this.sendLines(batch, batchBytes, overLong) : undefined;
      queued?.();
      queued = undefined;
      await last;
    } finally {
      queued?.();
    }
    await this.takeFingerprint();
    return any;
  }

  /** Sends a batch, then moves the offset past it (with the lines over max_line_size it skipped or cut). */
  private async sendLines(entries: Entry[], bytes: number, overLong: OverLongLines): Promise<void> {
    const { clock, stats } = this.options;
    if (entries.length > 0) {
      const started = clock.scheduler.now();
      try {
        await this.options.send(entries, this.options.backlog ? { backlog: this.options.backlog } : undefined);
      } catch (err) {
        this.readAgainFromOffset();
        throw err;
      }
      this.batchSize.taken(entries.length, clock.scheduler.now() - started);
    }
    this.offset += bytes;
    stats?.sent(entries.length, bytes, this.offset);
    if (overLong.dropped > 0) stats?.overLong?.(overLong.dropped, overLong.droppedBytes, false);
    if (overLong.truncated > 0) stats?.overLong?.(overLong.truncated, overLong.truncatedBytes, true);
    this.savePosition();
  }

  /**
   * A batch was refused: nothing past `offset` was taken over, so the next poll reads from there
   * again, even if the file has not changed since (the lines it holds were never delivered). The
   * fingerprint was taken at an end the offset may not reach; a stale one would look like a
   * truncation and read the whole file again.
   */
  private readAgainFromOffset(): void {
    this.lines.reset();
    this.fingerprint = undefined;
    this.lastMtimeNs = -1n;
    this.lastSize = -1n;
  }

  private async takeFingerprint(): Promise<void> {
    const handle = this.handle;
    const end = this.readPos();
    if (!handle || end === 0) {
      this.fingerprint = undefined;
      return;
    }
    const length = Math.min(FINGERPRINT_BYTES, end);
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, end - length);
    this.fingerprint = bytesRead === length ? buf : undefined;
  }

  private savePosition(): void {
    this.options.positions.set(this.options.path, { offset: this.offset, dev: this.dev, ino: this.ino });
  }

  private entry(line: string): Entry {
    return { labels: { ...this.options.labels }, line, timestamp: this.options.clock.nowNs(), structuredMetadata: [], extracted: {} };
  }
}

/** The lines of a batch that were over max_line_size, and the bytes that went. */
class OverLongLines {
  dropped = 0;
  droppedBytes = 0;
  truncated = 0;
  truncatedBytes = 0;

  add(line: FileLine): this {
    if (line.overflow === 0) return this;
    if (line.text === undefined) {
      this.dropped++;
      this.droppedBytes += line.overflow;
    } else {
      this.truncated++;
      this.truncatedBytes += line.overflow;
    }
    return this;
  }
}
