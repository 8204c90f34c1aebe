/**
 * An append-only log of records on disk, kept in one directory as segment files: the storage of a
 * write-ahead queue. Records are appended to the newest segment; once it holds `segmentBytes` the
 * next append starts a new one, and segments whose records are all consumed are deleted whole.
 *
 * Files are named `<first sequence number, 20 digits>.v2.seg` (format 2 of `records.ts`: each
 * record carries its sequence number). A segment holds the records from its first number up to
 * the next segment's first number. Segments of the first format are rewritten on opening
 * (`legacy.ts`).
 *
 * Durability: with `fsync`, an append resolves only after its bytes (and, for a new segment, the
 * directory entry) are flushed to the device, so an acknowledged record survives a power loss;
 * without it, after the write reached the operating system, which survives the process being
 * killed but not the machine stopping. Appends arriving while a write is in progress are written
 * together and share one flush (group commit). A failed write (a full disk) is cut back off the
 * segment and only its own appends fail: the next append tries again in a fresh segment.
 *
 * Recovery: opening checks every file against what it holds — a name that is not a segment's, a
 * number out of range, or a first record whose number is not the name's makes the file stray: it
 * is logged and left alone, and never shifts the numbering of the real segments. In the newest
 * segment, bytes after its last intact record (a record torn by a crash mid-append, never
 * acknowledged) are cut off. Every opening starts a new segment on the first append, so a segment
 * of an earlier run is never written again. A reader passes over damage to the next intact record;
 * the records a damaged or cut-short stretch held are known from the numbers around it, and every
 * one given up is logged with the reason and reported once through `lost`.
 */
import { mkdir, open, readdir, stat, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Log } from '../log.js';
import { upgradeLegacySegments } from './legacy.js';
import { findHeader, frameRecords, MAX_RECORD_BYTES, parseRecords, RECORD_HEADER_BYTES, type WalRecord } from './records.js';

export interface SegmentLogOptions {
  readonly dir: string;
  /** A segment holding at least this many bytes is closed, and the next append starts another. */
  readonly segmentBytes: number;
  /** Flush every append to the device before it resolves. */
  readonly fsync: boolean;
  /** Sequence numbers start at least here, so they never go back once every segment is deleted. */
  readonly firstSeq?: number;
  readonly log?: Log;
  /** Told, once per record, of every record given up and why. */
  readonly lost?: (records: number, reason: LossReason) => void;
  /** Opens a file for writing; tests give one that runs out of space. */
  readonly openFile?: OpenFile;
}

/** Why records were given up: bytes damaged on disk, or a segment that ends before its records do. */
export type LossReason = 'damaged' | 'truncated';

/** Opens a file to append to (`a`) or to replace (`w`). */
export type OpenFile = (path: string, flags: 'a' | 'w') => Promise<FileHandle>;

/** A record read back, with its sequence number. */
export type LogRecord = Pick<WalRecord, 'seq' | 'payload'>;

interface Segment {
  readonly firstSeq: number;
  readonly path: string;
  bytes: number;
}

/** A segment, the sequence number its records end before, and the bytes written to it. */
interface SegmentRange {
  readonly firstSeq: number;
  readonly endSeq: number;
  readonly path: string;
  readonly bytes: number;
}

interface PendingWrite {
  readonly payloads: readonly Buffer[];
  readonly resolve: (firstSeq: number) => void;
  readonly reject: (err: Error) => void;
}

const SEGMENT_NAME = /^(\d{20})\.v2\.seg$/;
/** What could be meant as a segment: anything else in the directory is not the log's concern. */
const SEGMENT_LIKE = /\.seg$/;
const READ_CHUNK_BYTES = 1 << 20;

export class SegmentLog {
  private nextSeq: number;
  private totalBytes: number;
  private active: { readonly segment: Segment; readonly handle: FileHandle } | undefined;
  private writes: PendingWrite[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  /** Records below this were already reported lost (a reader going back does not count them twice). */
  private lostBelow = 0;

  private constructor(
    private readonly options: SegmentLogOptions,
    private readonly segments: Segment[],
    nextSeq: number,
  ) {
    this.nextSeq = nextSeq;
    this.totalBytes = segments.reduce((sum, s) => sum + s.bytes, 0);
  }

  /** Opens (creating it when missing) the log in `options.dir`. */
  static async open(options: SegmentLogOptions): Promise<SegmentLog> {
    await mkdir(options.dir, { recursive: true });
    await upgradeLegacySegments(options.dir, options.log);
    const segments: Segment[] = [];
    const stray = (name: string, reason: string) =>
      options.log?.('warn', 'ignoring a file in the write-ahead log directory that is not one of its segments', {
        file: join(options.dir, name),
        reason,
      });
    for (const name of (await readdir(options.dir)).sort()) {
      const match = SEGMENT_NAME.exec(name);
      if (!match) {
        if (SEGMENT_LIKE.test(name)) stray(name, 'not named <20 digits>.v2.seg');
        continue;
      }
      const firstSeq = Number(match[1]);
      if (!Number.isSafeInteger(firstSeq)) {
        stray(name, 'its number is out of range');
        continue;
      }
      const path = join(options.dir, name);
      const bytes = (await stat(path)).size;
      const first = await firstHeader(path);
      if (!first) {
        // A segment created just before a crash, before its first record was written.
        if (bytes === 0) await unlink(path);
        else stray(name, 'it holds no readable record');
        continue;
      }
      // Damage before the first intact record only allows a later number than the name's.
      if (first.at === 0 ? first.seq !== firstSeq : first.seq <= firstSeq) {
        stray(name, `its first record is number ${first.seq}`);
        continue;
      }
      segments.push({ firstSeq, path, bytes });
    }
    let nextSeq = options.firstSeq ?? 0;
    const last = segments.at(-1);
    if (last) {
      const { highestSeq, bytes } = await scanSegment(last.path);
      if (bytes < last.bytes) {
        options.log?.('warn', 'cut off an unfinished record at the end of a write-ahead segment', {
          path: last.path,
          bytes: last.bytes - bytes,
        });
        await truncate(last.path, bytes);
        last.bytes = bytes;
      }
      nextSeq = Math.max(nextSeq, last.firstSeq, highestSeq + 1);
    }
    return new SegmentLog(options, segments, nextSeq);
  }

  /** Bytes of all segment files. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** The sequence number of the oldest record still stored (`endSeq` when there is none). */
  get firstSeq(): number {
    return this.segments[0]?.firstSeq ?? this.nextSeq;
  }

  /** The sequence number the next record gets; every record below it is written. */
  get endSeq(): number {
    return this.nextSeq;
  }

  /** Number of segment files. */
  get segmentCount(): number {
    return this.segments.length;
  }

  /** Appends the payloads as consecutive records; resolves with the first one's sequence number. */
  append(payloads: readonly Buffer[]): Promise<number> {
    if (this.closed) return Promise.reject(new Error('the write-ahead log is closed'));
    const large = payloads.find((p) => p.length > MAX_RECORD_BYTES);
    if (large) return Promise.reject(new RangeError(`record of ${large.length} bytes is too large`));
    return new Promise<number>((resolve, reject) => {
      this.writes.push({ payloads, resolve, reject });
      this.startFlushing();
    });
  }

  /** A reader of the records from sequence number `seq` on. */
  reader(seq: number): SegmentReader {
    return new SegmentReader(this, seq);
  }

  /** Gives up the records from `from` to before `to` (those not given up before), logged and reported. */
  giveUp(from: number, to: number, reason: LossReason, path: string): void {
    const first = Math.max(from, this.lostBelow);
    if (to <= first) return;
    this.lostBelow = to;
    this.options.log?.('error', 'giving up write-ahead records that cannot be read', { path, reason, first, records: to - first });
    this.options.lost?.(to - first, reason);
  }

  /**
   * Deletes the oldest segments whose records all lie below `seq` (the newest one too, once it
   * is complete and nothing is being written to it).
   */
  async removeBefore(seq: number): Promise<void> {
    while (this.segments.length > 0) {
      const oldest = this.segments[0]!;
      const end = this.segments[1]?.firstSeq ?? this.nextSeq;
      if (end > seq) return;
      let handle: FileHandle | undefined;
      if (this.active?.segment === oldest) {
        if (this.flushing) return;
        handle = this.active.handle;
        this.active = undefined;
      }
      // Taken off the list before any await, so a concurrent call never deletes it twice.
      this.segments.shift();
      this.totalBytes -= oldest.bytes;
      await handle?.close();
      await unlink(oldest.path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
  }

  /** Waits for the writes in progress, then closes the newest segment. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
    const active = this.active;
    this.active = undefined;
    await active?.handle.close();
  }

  /** The segment holding `seq`, or the first one after it when the records at `seq` are gone. */
  locate(seq: number): SegmentRange | undefined {
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments[i]!;
      const endSeq = this.segments[i + 1]?.firstSeq ?? this.nextSeq;
      if (endSeq > seq) return { firstSeq: segment.firstSeq, endSeq, path: segment.path, bytes: segment.bytes };
    }
    return undefined;
  }

  private startFlushing(): void {
    if (this.flushing) return;
    this.flushing = this.flushWrites().finally(() => {
      this.flushing = undefined;
      // Appends that came after the loop's last look, before this callback, still need writing.
      if (this.writes.length > 0) this.startFlushing();
    });
  }

  private async flushWrites(): Promise<void> {
    while (this.writes.length > 0) {
      const group = this.writes.splice(0);
      let seq = this.nextSeq;
      const framed = group.map((w) => {
        const buf = frameRecords(w.payloads, seq);
        seq += w.payloads.length;
        return buf;
      });
      const bytes = framed.reduce((sum, buf) => sum + buf.length, 0);
      let before = 0;
      try {
        if (!this.active || this.active.segment.bytes >= this.options.segmentBytes) await this.startSegment();
        const active = this.active!;
        before = active.segment.bytes;
        let written = (await active.handle.writev(framed)).bytesWritten;
        // A disk filling up writes what fits; writing the rest then fails with the reason (ENOSPC).
        for (let rest: Buffer | undefined; written < bytes; ) {
          rest ??= Buffer.concat(framed);
          const { bytesWritten } = await active.handle.write(rest, written);
          if (bytesWritten === 0) throw new Error(`short write to ${active.segment.path}: ${written} of ${bytes} bytes`);
          written += bytesWritten;
        }
        if (this.options.fsync) await active.handle.datasync();
        active.segment.bytes += bytes;
        this.totalBytes += bytes;
      } catch (err) {
        await this.abandonActive(before);
        for (const w of group) w.reject(err as Error);
        continue;
      }
      let first = this.nextSeq;
      for (const w of group) {
        w.resolve(first);
        first += w.payloads.length;
      }
      this.nextSeq = first;
    }
  }

  private async startSegment(): Promise<void> {
    const previous = this.active;
    this.active = undefined;
    await previous?.handle.close();
    const path = join(this.options.dir, `${String(this.nextSeq).padStart(20, '0')}.v2.seg`);
    const handle = await (this.options.openFile ?? open)(path, 'a');
    const segment: Segment = { firstSeq: this.nextSeq, path, bytes: 0 };
    this.segments.push(segment);
    this.active = { segment, handle };
    if (this.options.fsync) await syncDirectory(this.options.dir);
  }

  /**
   * After a failed write: cuts the newest segment back to what was acknowledged and closes it, so
   * the next append starts a clean segment (an empty one is deleted).
   */
  private async abandonActive(bytes: number): Promise<void> {
    const active = this.active;
    if (!active) return;
    this.active = undefined;
    await active.handle.truncate(bytes).catch(() => {});
    await active.handle.close().catch(() => {});
    if (bytes === 0) {
      this.segments.splice(this.segments.indexOf(active.segment), 1);
      await unlink(active.segment.path).catch(() => {});
    }
  }
}

/**
 * Reads records in order from a position, never past what is written. Records of segments deleted
 * meanwhile are skipped; records that cannot be read are given up through the log.
 */
export class SegmentReader {
  private next: number;
  private file:
    | {
        readonly path: string;
        readonly handle: FileHandle;
        /** The lowest number the next record of the file may have. */
        seq: number;
        offset: number;
        damaged: boolean;
      }
    | undefined;
  private chunkBytes = READ_CHUNK_BYTES;

  constructor(
    private readonly log: SegmentLog,
    seq: number,
  ) {
    this.next = seq;
  }

  /** The sequence number of the next record to read. */
  get position(): number {
    return this.next;
  }

  /** Whether written records are left to read. */
  get hasMore(): boolean {
    return this.next < this.log.endSeq;
  }

  /** Continues from `seq` (backwards or forwards). */
  seek(seq: number): void {
    this.next = seq;
  }

  /** Reads the next records, at least one when any is written, up to about `maxBytes` of payload. */
  async read(maxBytes: number): Promise<LogRecord[]> {
    const out: LogRecord[] = [];
    let bytes = 0;
    while (this.next < this.log.endSeq && (out.length === 0 || bytes < maxBytes)) {
      const segment = this.log.locate(this.next);
      if (!segment) {
        this.next = this.log.endSeq;
        break;
      }
      if (segment.firstSeq > this.next) {
        this.next = segment.firstSeq;
        continue;
      }
      const file = await this.fileFor(segment);
      if (!file) {
        this.next = segment.endSeq;
        continue;
      }
      // No more than the segment holds: a sender keeping up reads back a few records at a time.
      const want = Math.min(this.chunkBytes, segment.bytes - file.offset);
      const buf = Buffer.allocUnsafe(Math.max(0, want));
      const { bytesRead } = want > 0 ? await file.handle.read(buf, 0, want, file.offset) : { bytesRead: 0 };
      const parsed = parseRecords(buf.subarray(0, bytesRead));
      const start = file.offset;
      let full = false;
      for (const record of parsed.records) {
        file.offset = start + record.end;
        // A valid header out of order can only be an old record's copy inside damaged bytes.
        if (record.seq < file.seq || record.seq >= segment.endSeq) continue;
        file.seq = record.seq + 1;
        if (record.seq < this.next) continue;
        if (record.seq > this.next) this.log.giveUp(this.next, record.seq, 'damaged', segment.path);
        out.push({ seq: record.seq, payload: record.payload });
        this.next = record.seq + 1;
        bytes += record.payload.length;
        if (bytes >= maxBytes) {
          full = true;
          break;
        }
      }
      if (full) continue;
      file.offset = start + parsed.consumed;
      if (parsed.skipped > 0) file.damaged = true;
      if (parsed.consumed > 0) {
        this.chunkBytes = READ_CHUNK_BYTES;
        continue;
      }
      const fits = parsed.nextRecordBytes !== undefined && file.offset + parsed.nextRecordBytes <= segment.bytes;
      if (fits && bytesRead === want && want < parsed.nextRecordBytes!) {
        this.chunkBytes = parsed.nextRecordBytes;
        continue;
      }
      // What is left of the file holds no record: the segment's last records are gone.
      this.chunkBytes = READ_CHUNK_BYTES;
      this.log.giveUp(this.next, segment.endSeq, file.damaged ? 'damaged' : 'truncated', segment.path);
      this.next = segment.endSeq;
    }
    return out;
  }

  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.handle.close();
  }

  /** The open file of `segment`, positioned at or before the next record; undefined when it is gone. */
  private async fileFor(segment: SegmentRange): Promise<SegmentReader['file']> {
    if (this.file && this.file.path === segment.path && this.file.seq <= this.next) return this.file;
    await this.close();
    let handle: FileHandle;
    try {
      handle = await open(segment.path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    this.file = { path: segment.path, handle, seq: segment.firstSeq, offset: 0, damaged: false };
    return this.file;
  }
}

/** Runs `visit` over a segment file's bytes in chunks; it returns how far it got, or `undefined` to stop. */
async function walkSegment(path: string, visit: (buf: Buffer, eof: boolean) => number | undefined): Promise<void> {
  const handle = await open(path, 'r');
  try {
    let offset = 0;
    let chunkBytes = READ_CHUNK_BYTES;
    for (;;) {
      const buf = Buffer.allocUnsafe(chunkBytes);
      const { bytesRead } = await handle.read(buf, 0, chunkBytes, offset);
      const eof = bytesRead < chunkBytes;
      const moved = visit(buf.subarray(0, bytesRead), eof);
      if (moved === undefined || eof) return;
      // Nothing used up: the chunk starts a record longer than the chunk.
      chunkBytes = moved === 0 ? chunkBytes * 2 : READ_CHUNK_BYTES;
      offset += moved;
    }
  } finally {
    await handle.close();
  }
}

/** The first valid record header in a segment file, with its offset. */
async function firstHeader(path: string): Promise<{ readonly at: number; readonly seq: number } | undefined> {
  let found: { at: number; seq: number } | undefined;
  let base = 0;
  await walkSegment(path, (buf) => {
    const header = findHeader(buf);
    if (header) {
      found = { at: base + header.at, seq: header.seq };
      return undefined;
    }
    // A header may straddle the chunk's end.
    const moved = Math.max(0, buf.length - RECORD_HEADER_BYTES + 1);
    base += moved;
    return moved;
  });
  return found;
}

/**
 * Where the last intact record of a segment file ends, and the highest record number written
 * there in full (intact or damaged; -1 with none).
 */
async function scanSegment(path: string): Promise<{ highestSeq: number; bytes: number }> {
  let highestSeq = -1;
  let bytes = 0;
  let base = 0;
  await walkSegment(path, (buf) => {
    const parsed = parseRecords(buf);
    const last = parsed.records.at(-1);
    if (last) bytes = base + last.end;
    highestSeq = Math.max(highestSeq, parsed.highestSeq);
    base += parsed.consumed;
    return parsed.consumed;
  });
  return { highestSeq, bytes };
}
/** Flushes a directory's entries, so a file just created in it survives a power loss. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
