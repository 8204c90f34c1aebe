/**
 * An append-only log of records on disk, kept in one directory as segment files: the storage of a
 * write-ahead queue. Records are appended to the newest segment; once it holds `segmentBytes` the
 * next append starts a new one, and segments whose records are all consumed are deleted whole.
 *
 * Files are named `<first sequence number, 20 digits>.seg`. A record's sequence number is its
 * segment's first plus its index in the segment, so records carry no numbers of their own, and a
 * segment holds the records up to the next segment's first number.
 *
 * Durability: with `fsync`, an append resolves only after its bytes (and, for a new segment, the
 * directory entry) are flushed to the device, so an acknowledged record survives a power loss;
 * without it, after the write reached the operating system, which survives the process being
 * killed but not the machine stopping. Appends arriving while a write is in progress are written
 * together and share one flush (group commit).
 *
 * Recovery: opening scans the newest segment and cuts off a record torn by a crash mid-append (it
 * was never acknowledged). Every opening starts a new segment on the first append, so a segment
 * of an earlier run is never written again. A damaged record met while reading loses the rest of
 * its segment, which is logged with the number of records lost.
 */
import { mkdir, open, readdir, stat, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { frameRecords, parseRecords, RECORD_HEADER_BYTES } from './records.js';

type Log = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface SegmentLogOptions {
  readonly dir: string;
  /** A segment holding at least this many bytes is closed, and the next append starts another. */
  readonly segmentBytes: number;
  /** Flush every append to the device before it resolves. */
  readonly fsync: boolean;
  /** Sequence numbers start at least here, so they never go back once every segment is deleted. */
  readonly firstSeq?: number;
  readonly log?: Log;
}

/** A record read back, with its sequence number. */
export interface LogRecord {
  readonly seq: number;
  readonly payload: Buffer;
}

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
  readonly framed: Buffer;
  readonly count: number;
  readonly resolve: (firstSeq: number) => void;
  readonly reject: (err: Error) => void;
}

const SEGMENT_NAME = /^(\d{20})\.seg$/;
const READ_CHUNK_BYTES = 1 << 20;

export class SegmentLog {
  private nextSeq: number;
  private totalBytes: number;
  private active: { readonly segment: Segment; readonly handle: FileHandle } | undefined;
  private writes: PendingWrite[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;

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
    const segments: Segment[] = [];
    for (const name of (await readdir(options.dir)).sort()) {
      const match = SEGMENT_NAME.exec(name);
      if (!match) continue;
      const path = join(options.dir, name);
      segments.push({ firstSeq: Number(match[1]), path, bytes: (await stat(path)).size });
    }
    let nextSeq = options.firstSeq ?? 0;
    const last = segments.at(-1);
    if (last) {
      const { records, bytes } = await scanSegment(last.path);
      if (bytes < last.bytes) {
        options.log?.('warn', 'cut off an unfinished record at the end of a write-ahead segment', {
          path: last.path,
          bytes: last.bytes - bytes,
        });
        await truncate(last.path, bytes);
        last.bytes = bytes;
      }
      if (records === 0) {
        await unlink(last.path);
        segments.pop();
      }
      // The segment before an empty last one ends where the empty one would have started.
      nextSeq = Math.max(nextSeq, last.firstSeq + records);
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
    const framed = frameRecords(payloads);
    return new Promise<number>((resolve, reject) => {
      this.writes.push({ framed, count: payloads.length, resolve, reject });
      this.startFlushing();
    });
  }

  /** A reader of the records from sequence number `seq` on. */
  reader(seq: number): SegmentReader {
    return new SegmentReader(this, seq, this.options.log);
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
      const bytes = group.reduce((sum, w) => sum + w.framed.length, 0);
      let before = 0;
      try {
        if (!this.active || this.active.segment.bytes >= this.options.segmentBytes) await this.startSegment();
        const active = this.active!;
        before = active.segment.bytes;
        const { bytesWritten } = await active.handle.writev(group.map((w) => w.framed));
        if (bytesWritten !== bytes) throw new Error(`short write to ${active.segment.path}: ${bytesWritten} of ${bytes} bytes`);
        if (this.options.fsync) await active.handle.datasync();
        active.segment.bytes += bytes;
        this.totalBytes += bytes;
      } catch (err) {
        await this.abandonActive(before);
        for (const w of group) w.reject(err as Error);
        continue;
      }
      let seq = this.nextSeq;
      for (const w of group) {
        w.resolve(seq);
        seq += w.count;
      }
      this.nextSeq = seq;
    }
  }

  private async startSegment(): Promise<void> {
    const previous = this.active;
    this.active = undefined;
    await previous?.handle.close();
    const path = join(this.options.dir, `${String(this.nextSeq).padStart(20, '0')}.seg`);
    const handle = await open(path, 'a');
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
 * meanwhile are skipped.
 */
export class SegmentReader {
  private next: number;
  private file: { readonly path: string; readonly handle: FileHandle; seq: number; offset: number } | undefined;
  private chunkBytes = READ_CHUNK_BYTES;

  constructor(
    private readonly log: SegmentLog,
    seq: number,
    private readonly report?: Log,
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
      const want = Math.min(this.chunkBytes, Math.max(RECORD_HEADER_BYTES, segment.bytes - file.offset));
      const buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await file.handle.read(buf, 0, want, file.offset);
      const parsed = parseRecords(buf.subarray(0, bytesRead), segment.endSeq - file.seq);
      for (const payload of parsed.payloads) {
        const seq = file.seq++;
        file.offset += RECORD_HEADER_BYTES + payload.length;
        if (seq < this.next) continue;
        out.push({ seq, payload });
        this.next = seq + 1;
        bytes += payload.length;
        if (bytes >= maxBytes) break;
      }
      if (parsed.payloads.length > 0) {
        this.chunkBytes = READ_CHUNK_BYTES;
        continue;
      }
      const longRecord = parsed.nextRecordBytes !== undefined && bytesRead === want && want === this.chunkBytes;
      if (!parsed.damaged && longRecord) {
        this.chunkBytes = parsed.nextRecordBytes!;
        continue;
      }
      // Damaged, or the file ends before its last record: the rest of the segment is unreadable.
      this.report?.('error', 'write-ahead segment is damaged, skipping the rest of it', {
        path: segment.path,
        records: segment.endSeq - this.next,
      });
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
    this.file = { path: segment.path, handle, seq: segment.firstSeq, offset: 0 };
    return this.file;
  }
}

/** The number of intact records at the start of a segment file and the bytes they take. */
async function scanSegment(path: string): Promise<{ records: number; bytes: number }> {
  const handle = await open(path, 'r');
  try {
    let offset = 0;
    let records = 0;
    let chunkBytes = READ_CHUNK_BYTES;
    for (;;) {
      const buf = Buffer.allocUnsafe(chunkBytes);
      const { bytesRead } = await handle.read(buf, 0, chunkBytes, offset);
      if (bytesRead === 0) break;
      const parsed = parseRecords(buf.subarray(0, bytesRead));
      records += parsed.payloads.length;
      offset += parsed.consumed;
      if (parsed.damaged) break;
      if (parsed.payloads.length > 0) {
        chunkBytes = READ_CHUNK_BYTES;
        continue;
      }
      if (parsed.nextRecordBytes !== undefined && bytesRead === chunkBytes) {
        chunkBytes = parsed.nextRecordBytes;
        continue;
      }
      break;
    }
    return { records, bytes: offset };
  } finally {
    await handle.close();
  }
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
