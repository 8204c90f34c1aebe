/**
 * The write-ahead log of one logs.write endpoint: accepted entries are appended to segment files
 * (and, with `fsync`, flushed to the device) before the sender upstream is answered, and the
 * endpoint's sender reads them back from there, so what was acknowledged survives a crash and is
 * sent after the next start.
 *
 * Delivery is recorded per tenant: batches hold one tenant's entries in order, so "delivered up to
 * record N" for each tenant says exactly which records are done; with it the cursor keeps the
 * record below which everything is done. After every settled batch (delivered, or given up and
 * counted as dropped) the segments whose records are all done are deleted first, then the cursor
 * is rewritten in `delivered.json`: deleting first frees space before the cursor needs any (on a
 * full disk the cursor could not be written and nothing would ever be freed), and a crash in
 * between leaves an older cursor over records that are gone, which repeats nothing. The cursor is
 * not flushed to the device, since an older cursor only repeats entries, never loses them.
 *
 * On opening, a cursor ahead of the log (a tenant done past the last record, possible only if the
 * file was damaged or copied from elsewhere) is clamped to what is on disk: that tenant's entries
 * are sent again, logged, rather than skipped. Records the log cannot read back (damaged bytes, a
 * segment cut short, a payload that does not decode) are given up one entry each, through `lost`
 * and a log line with the reason.
 *
 * At least once: a batch that reached the endpoint just before a crash, before its cursor was
 * written, is sent again after the restart (one batch, at most `batch_size`, per endpoint).
 *
 * A full disk: an append that fails with ENOSPC or EDQUOT is refused with a `RetryLaterError`
 * (nothing of it is kept), so a push source answers 429; the log goes on by itself once a write
 * succeeds again, as delivered segments are deleted or space is freed.
 *
 * Bound: appends wait while the segment files hold `maxBytes` (a single append larger than that
 * is let in when the log is empty), in arrival order, which pushes back on the senders upstream.
 * `lift()` lets everything waiting in when the component stops, so it is kept rather than refused.
 */
import { open as openFile, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { RetryLaterError } from '../../core/receiver.js';
import type { Log } from '../../lib/log.js';
import { framedBytes } from '../../lib/wal/records.js';
import { SegmentLog, type LossReason, type OpenFile, type SegmentReader } from '../../lib/wal/segment-log.js';
import { entryBytes, type QueuedEntry } from './batch.js';
import { decodeWalEntry, encodeWalEntry } from './wal-record.js';

export interface EndpointWalSettings {
  /** The endpoint's own directory. */
  readonly dir: string;
  readonly maxBytes: number;
  readonly fsync: boolean;
  /** Told of every entry given up because it could not be read back, and why. */
  readonly lost?: (entries: number, reason: WalLossReason) => void;
  /** Opens files for writing; tests give one that runs out of space. */
  readonly openFile?: OpenFile;
}

/** Why entries kept in the log were given up: the log's reasons, or a record that does not decode. */
export type WalLossReason = LossReason | 'undecodable';

/** Errors of a write that only more space can cure. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

const CURSOR_FILE = 'delivered.json';
const MIN_SEGMENT_BYTES = 4 * 1024;
const MAX_SEGMENT_BYTES = 64 * 1024 * 1024;

/** Segments of a sixteenth of the bound (4 KiB to 64 MiB), so the bound frees up in steps. */
export function segmentBytesFor(maxBytes: number): number {
  return Math.min(MAX_SEGMENT_BYTES, Math.max(MIN_SEGMENT_BYTES, Math.floor(maxBytes / 16)));
}

interface Opened {
  readonly segments: SegmentLog;
  readonly reader: SegmentReader;
  /** Per tenant: the highest record number delivered or given up. */
  readonly doneThrough: Map<string, number>;
}

interface Cursor {
  readonly doneThrough: Map<string, number>;
  /** Every record below it is done. */
  readonly below: number;
}

export class EndpointWal {
  private readonly opening: Promise<Opened>;
  private opened: Opened | undefined;
  /** Record numbers handed to the sender, oldest first, from `handedHead` on. */
  private handed: number[] = [];
  private handedHead = 0;
  /** Handed records settled before an older one. */
  private readonly settledEarly = new Set<number>();
  private waiters: Array<{ readonly bytes: number; readonly resolve: () => void }> = [];
  /** Bytes admitted and still being written. */
  private reserved = 0;
  private unbounded = false;
  private cursorWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly settings: EndpointWalSettings,
    private readonly log: Log,
  ) {
    this.opening = this.open();
    this.opening.then(
      (opened) => (this.opened = opened),
      () => {},
    );
  }

  /** Resolves once the log is open and recovered; rejects when it cannot be opened. */
  ready(): Promise<void> {
    return this.opening.then(() => undefined);
  }

  /** Bytes of the segment files. */
  get bytes(): number {
    return this.opened?.segments.bytes ?? 0;
  }

  /** Whether records are left that the sender has not read yet. */
  hasUnread(): boolean {
    return this.opened?.reader.hasMore ?? false;
  }

  /** Writes the entries to the log; resolves once they are there (flushed, with fsync). */
  async append(items: readonly QueuedEntry[]): Promise<void> {
    const { segments } = await this.opening;
    const payloads = items.map((item) => encodeWalEntry(item));
    const bytes = framedBytes(payloads);
    if (this.waiters.length === 0 && this.fits(bytes)) this.reserved += bytes;
    else await new Promise<void>((resolve) => this.waiters.push({ bytes, resolve }));
    try {
      await segments.append(payloads);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== undefined && NO_SPACE.has(code)) {
        this.log('warn', 'the write-ahead log’s disk is full, refusing entries until a write succeeds', {
          dir: this.settings.dir,
          error: (err as Error).message,
        });
        throw new RetryLaterError(`the write-ahead log’s disk is full (${code})`);
      }
      throw err;
    } finally {
      this.reserved -= bytes;
    }
  }

  /** The next entries not yet done, about `maxBytes` of them (at least one when any is left). */
  async read(maxBytes: number): Promise<QueuedEntry[]> {
    const { reader, doneThrough } = await this.opening;
    const out: QueuedEntry[] = [];
    while (out.length === 0 && reader.hasMore) {
      for (const record of await reader.read(maxBytes)) {
        let decoded;
        try {
          decoded = decodeWalEntry(record.payload);
        } catch (err) {
          this.log('error', 'giving up write-ahead records that cannot be read', {
            dir: this.settings.dir,
            reason: 'undecodable',
            first: record.seq,
            records: 1,
            error: (err as Error).message,
          });
          this.settings.lost?.(1, 'undecodable');
          continue;
        }
        if (record.seq <= (doneThrough.get(decoded.tenant) ?? -1)) continue;
        this.handed.push(record.seq);
        out.push({ entry: decoded.entry, tenant: decoded.tenant, bytes: entryBytes(decoded.entry), seq: record.seq });
      }
      // Replayed records that were already done may free whole segments.
      await this.collect();
    }
    return out;
  }

  /** Records a batch of one tenant's entries as delivered or given up. */
  async done(batch: readonly QueuedEntry[]): Promise<void> {
    const { doneThrough } = await this.opening;
    if (batch.length === 0) return;
    const tenant = batch[0]!.tenant;
    let last = doneThrough.get(tenant) ?? -1;
    for (const item of batch) {
      this.settledEarly.add(item.seq!);
      if (item.seq! > last) last = item.seq!;
    }
    doneThrough.set(tenant, last);
    while (this.handedHead < this.handed.length && this.settledEarly.delete(this.handed[this.handedHead]!)) this.handedHead++;
    if (this.handedHead > 4096 && this.handedHead * 2 > this.handed.length) {
      this.handed = this.handed.slice(this.handedHead);
      this.handedHead = 0;
    }
    // Segments first: see the module comment.
    try {
      await this.collect();
    } finally {
      await this.saveCursor();
    }
  }

  /**
   * Forgets what was handed out and not settled, so the next read starts again at the oldest
   * record not done: a new sender takes over from one that stopped mid-way.
   */
  rewind(): void {
    const opened = this.opened;
    if (!opened) return;
    const from = this.lowWater(opened);
    this.handed = [];
    this.handedHead = 0;
    this.settledEarly.clear();
    opened.reader.seek(from);
  }

  /** Lets every waiting append in, beyond the bound: the component is stopping. */
  lift(): void {
    this.unbounded = true;
    this.admitWaiters();
  }

  /** Records that may not be done yet: from the oldest one not done to the newest. */
  undone(): number {
    const opened = this.opened;
    return opened ? opened.segments.endSeq - this.lowWater(opened) : 0;
  }

  async close(): Promise<void> {
    let opened: Opened;
    try {
      opened = await this.opening;
    } catch {
      return;
    }
    await this.cursorWrite;
    await opened.reader.close();
    await opened.segments.close();
  }

  private async open(): Promise<Opened> {
    const cursor = await this.readCursor();
    const segments = await SegmentLog.open({
      dir: this.settings.dir,
      segmentBytes: segmentBytesFor(this.settings.maxBytes),
      fsync: this.settings.fsync,
      log: this.log,
      ...(this.settings.lost ? { lost: this.settings.lost } : {}),
      ...(this.settings.openFile ? { openFile: this.settings.openFile } : {}),
    });
    const { doneThrough } = cursor;
    const end = segments.endSeq;
    // Only a damaged or foreign cursor can be ahead; trusting it would skip entries never sent.
    const stored = segments.segmentCount > 0;
    for (const [tenant, seq] of doneThrough) {
      if (seq < end) continue;
      doneThrough.delete(tenant);
      if (stored)
        this.log('warn', 'the delivery cursor is ahead of the write-ahead log, sending the tenant’s entries in it again', {
          dir: this.settings.dir,
          tenant,
          cursor: seq,
          end,
        });
    }
    let below = cursor.below;
    if (below > end) {
      if (stored)
        this.log('warn', 'the delivery cursor is ahead of the write-ahead log, sending everything in it again', {
          dir: this.settings.dir,
          cursor: below,
          end,
        });
      below = 0;
    }
    const reader = segments.reader(Math.max(segments.firstSeq, below));
    if (stored)
      this.log('info', 'replaying the write-ahead log', { dir: this.settings.dir, bytes: segments.bytes, segments: segments.segmentCount });
    return { segments, reader, doneThrough };
  }

  private async readCursor(): Promise<Cursor> {
    const file = join(this.settings.dir, CURSOR_FILE);
    const doneThrough = new Map<string, number>();
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { doneThrough, below: 0 };
      throw err;
    }
    const recordNumber = (value: unknown, what: string): number => {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error(`bad record number for ${what}`);
      return value;
    };
    try {
      const doc = JSON.parse(text) as { version?: unknown; delivered?: Record<string, unknown>; below?: unknown };
      if (doc.version !== 1 || typeof doc.delivered !== 'object' || doc.delivered === null) throw new Error('unknown format');
      for (const [tenant, seq] of Object.entries(doc.delivered)) doneThrough.set(tenant, recordNumber(seq, `tenant ${tenant}`));
      return { doneThrough, below: doc.below === undefined ? 0 : recordNumber(doc.below, 'below') };
    } catch (err) {
      // Without a cursor everything kept is sent again: repeats, never losses.
      this.log('warn', 'ignoring an unreadable delivery cursor, sending everything in the write-ahead log again', {
        file,
        error: (err as Error).message,
      });
      doneThrough.clear();
      return { doneThrough, below: 0 };
    }
  }

  /** Writes the cursor; writes never overlap, and each waits for the one before. */
  private saveCursor(): Promise<void> {
    const opened = this.opened!;
    const { segments, doneThrough } = opened;
    // Tenants done below the oldest record kept say nothing about what is still on disk.
    for (const [tenant, seq] of doneThrough) if (seq < segments.firstSeq) doneThrough.delete(tenant);
    const doc = { version: 1, delivered: Object.fromEntries(doneThrough), below: this.lowWater(opened) };
    const text = JSON.stringify(doc) + '\n';
    const file = join(this.settings.dir, CURSOR_FILE);
    const open = this.settings.openFile ?? openFile;
    this.cursorWrite = this.cursorWrite
      .catch(() => {})
      .then(async () => {
        const handle = await open(`${file}.tmp`, 'w');
        try {
          await handle.writeFile(text);
        } finally {
          await handle.close();
        }
        await rename(`${file}.tmp`, file);
      });
    return this.cursorWrite;
  }

  /** The oldest record that may not be done: the oldest handed out and unsettled, else the next to read. */
  private lowWater(opened: Opened): number {
    return this.handedHead < this.handed.length ? this.handed[this.handedHead]! : opened.reader.position;
  }

  /** Deletes segments whose records are all done, then lets waiting appends in. */
  private async collect(): Promise<void> {
    const opened = this.opened!;
    await opened.segments.removeBefore(this.lowWater(opened));
    this.admitWaiters();
  }

  private fits(bytes: number): boolean {
    const used = (this.opened?.segments.bytes ?? 0) + this.reserved;
    return this.unbounded || used === 0 || used + bytes <= this.settings.maxBytes;
  }

  private admitWaiters(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0]!.bytes)) {
      const waiter = this.waiters.shift()!;
      this.reserved += waiter.bytes;
      waiter.resolve();
    }
  }
}
