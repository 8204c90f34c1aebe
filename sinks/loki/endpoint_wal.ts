/**
 * The write-ahead log of one logs.write endpoint: accepted entries are appended to segment files
 * (and, with `fsync`, flushed to the device) before the sender upstream is answered, and the
 * endpoint's sender reads them back from there, so what was acknowledged survives a crash and is
 * sent after the next start.
 *
 * Delivery is recorded per tenant: batches hold one tenant's entries in order, so "delivered up to
 * record N" for each tenant says exactly which records are done. That cursor is rewritten after
 * every settled batch (delivered, or given up and counted as dropped) in `delivered.json`; it is
 * not flushed to the device, since an older cursor only repeats entries, never loses them. A
 * segment is deleted once every record in it is done.
 *
 * At least once: a batch that reached the endpoint just before a crash, before its cursor was
 * written, is sent again after the restart (one batch, at most `batch_size`, per endpoint).
 *
 * Bound: appends wait while the segment files hold `maxBytes` (a single append larger than that
 * is let in when the log is empty), in arrival order, which pushes back on the senders upstream.
 * `lift()` lets everything waiting in when the component stops, so it is kept rather than refused.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Log } from '../../lib/log.js';
import { framedBytes } from '../../lib/wal/records.js';
import { SegmentLog, type SegmentReader } from '../../lib/wal/segment_log.js';
import { entryBytes, type QueuedEntry } from './batch.js';
import { decodeWalEntry, encodeWalEntry } from './wal_record.js';

export interface EndpointWalSettings {
  /** The endpoint's own directory. */
  readonly dir: string;
  readonly maxBytes: number;
  readonly fsync: boolean;
}

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
          this.log('error', 'skipping an unreadable write-ahead record', { dir: this.settings.dir, error: (err as Error).message });
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
    await this.saveCursor();
    await this.collect();
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
    const doneThrough = await this.readCursor();
    let next = 0;
    for (const seq of doneThrough.values()) next = Math.max(next, seq + 1);
    const segments = await SegmentLog.open({
      dir: this.settings.dir,
      segmentBytes: segmentBytesFor(this.settings.maxBytes),
      fsync: this.settings.fsync,
      firstSeq: next,
      log: this.log,
    });
    const reader = segments.reader(segments.firstSeq);
    if (segments.segmentCount > 0)
      this.log('info', 'replaying the write-ahead log', { dir: this.settings.dir, bytes: segments.bytes, segments: segments.segmentCount });
    return { segments, reader, doneThrough };
  }

  private async readCursor(): Promise<Map<string, number>> {
    const file = join(this.settings.dir, CURSOR_FILE);
    const cursor = new Map<string, number>();
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return cursor;
      throw err;
    }
    try {
      const doc = JSON.parse(text) as { version?: unknown; delivered?: Record<string, unknown> };
      if (doc.version !== 1 || typeof doc.delivered !== 'object' || doc.delivered === null) throw new Error('unknown format');
      for (const [tenant, seq] of Object.entries(doc.delivered)) {
        if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw new Error(`bad record number for tenant ${tenant}`);
        cursor.set(tenant, seq);
      }
    } catch (err) {
      // Without a cursor everything kept is sent again: repeats, never losses.
      this.log('warn', 'ignoring an unreadable delivery cursor, sending everything in the write-ahead log again', {
        file,
        error: (err as Error).message,
      });
      cursor.clear();
    }
    return cursor;
  }

  /** Writes the cursor; writes never overlap, and each waits for the one before. */
  private saveCursor(): Promise<void> {
    const { segments, doneThrough } = this.opened!;
    // Tenants done below the oldest record kept say nothing about what is still on disk.
    for (const [tenant, seq] of doneThrough) if (seq < segments.firstSeq) doneThrough.delete(tenant);
    const text = JSON.stringify({ version: 1, delivered: Object.fromEntries(doneThrough) }) + '\n';
    const file = join(this.settings.dir, CURSOR_FILE);
    this.cursorWrite = this.cursorWrite
      .catch(() => {})
      .then(async () => {
        await writeFile(`${file}.tmp`, text);
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
