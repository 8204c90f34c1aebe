import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RetryLaterError } from '../../../core/receiver.js';
import { SegmentLog, type OpenFile } from '../../../lib/wal/segment-log.js';
import type { QueuedEntry } from '../../../sinks/loki/batch.js';
import { EndpointWal, segmentBytesFor } from '../../../sinks/loki/endpoint-wal.js';
import { decodeWalEntry, encodeWalEntry } from '../../../sinks/loki/wal-record.js';
import { entryOf } from '../../receivers/loki/harness.js';
import { fullDisk } from './full-disk.js';

const open: EndpointWal[] = [];
afterEach(async () => {
  for (const wal of open.splice(0)) await wal.close();
});

function openWal(dir: string, maxBytes = 1 << 20, logs: string[] = []): EndpointWal {
  const wal = new EndpointWal({ dir, maxBytes, fsync: true }, (level, message) => logs.push(`${level} ${message}`));
  open.push(wal);
  return wal;
}

const item = (line: string, tenant = ''): QueuedEntry => ({ entry: entryOf(line, { app: 'a' }), tenant, bytes: line.length });
const lines = (items: readonly QueuedEntry[]) => items.map((i) => `${i.tenant}/${i.entry.line}@${i.seq}`);

async function readAll(wal: EndpointWal): Promise<QueuedEntry[]> {
  const out: QueuedEntry[] = [];
  while (wal.hasUnread()) out.push(...(await wal.read(1 << 20)));
  return out;
}

describe('write-ahead record', () => {
  it('keeps tenant, timestamp, labels, line and metadata, not the extracted map', () => {
    const entry = {
      labels: { app: 'wäb', __tenant_id__: 't' },
      line: 'ünïcode line 🚀',
      timestamp: -5n,
      structuredMetadata: [{ name: 'trace_id', value: 'x' }],
      extracted: { gone: 1 },
    };
    expect(decodeWalEntry(encodeWalEntry({ entry, tenant: 'team-a' }))).toEqual({ tenant: 'team-a', entry: { ...entry, extracted: {} } });
    const payload = encodeWalEntry({ entry, tenant: '' });
    expect(() => decodeWalEntry(payload.subarray(0, payload.length - 1))).toThrow('write-ahead record is truncated');
  });
});

describe('endpoint write-ahead log', () => {
  it('sizes segments at a sixteenth of the bound, within 4 KiB and 64 MiB', () => {
    expect([segmentBytesFor(2 ** 30), segmentBytesFor(16 * 2 ** 30), segmentBytesFor(2 ** 20), segmentBytesFor(1000)]).toEqual([
      64 << 20,
      64 << 20,
      64 << 10,
      4096,
    ]);
  });

  it('hands entries out in order and, after a restart, only those not delivered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-ewal-'));
    const wal = openWal(dir);
    await wal.append([item('a1', 'A'), item('b1', 'B'), item('a2', 'A')]);
    await wal.append([item('b2', 'B')]);
    const handed = await readAll(wal);
    expect(lines(handed)).toEqual(['A/a1@0', 'B/b1@1', 'A/a2@2', 'B/b2@3']);
    // Tenant A is delivered; B's batch was in flight when the process died.
    await wal.done([handed[0]!, handed[2]!]);
    expect(JSON.parse(readFileSync(join(dir, 'delivered.json'), 'utf8'))).toEqual({ version: 1, delivered: { A: 2 }, below: 1 });
    await wal.close();
    open.pop();
    const again = openWal(dir);
    await again.ready();
    expect(lines(await readAll(again))).toEqual(['B/b1@1', 'B/b2@3']);
    await again.append([item('a3', 'A')]);
    expect(lines(await readAll(again))).toEqual(['A/a3@4']);
  });

  it('deletes segments once all their entries are done', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-ewal-'));
    const wal = openWal(dir, 64 * 1024);
    const line = 'x'.repeat(1000);
    for (let i = 0; i < 20; i++) await wal.append([item(line)]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.seg')).length).toBe(5);
    const handed = await readAll(wal);
    await wal.done(handed.slice(0, 10));
    expect(readdirSync(dir).filter((f) => f.endsWith('.seg')).length).toBe(3);
    await wal.done(handed.slice(10));
    expect(readdirSync(dir).filter((f) => f.endsWith('.seg'))).toEqual([]);
    expect(wal.bytes).toBe(0);
  });

  it('makes appends wait while the log is full, in order, until delivered segments go', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-ewal-'));
    const wal = openWal(dir, 8 * 1024);
    // Records of about 935 bytes: eight fit in 8 KiB, in segments of 4 KiB (five, then three).
    const line = 'y'.repeat(900);
    for (let i = 0; i < 8; i++) await wal.append([item(`${i}${line}`)]);
    const order: number[] = [];
    const waiting = [8, 9].map((i) => wal.append([item(`${i}${line}`)]).then(() => order.push(i)));
    await new Promise((r) => setTimeout(r, 50));
    expect(order).toEqual([]);
    const handed = await readAll(wal);
    await wal.done(handed.slice(0, 4));
    await new Promise((r) => setTimeout(r, 50));
    expect(order).toEqual([]);
    await wal.done(handed.slice(4, 5));
    await Promise.all(waiting);
    expect(order).toEqual([8, 9]);
    expect(wal.bytes).toBeLessThanOrEqual(8 * 1024);
  });

  it('lets waiting appends in beyond the bound once lifted', async () => {
    const wal = openWal(mkdtempSync(join(tmpdir(), 'rivulet-ewal-')), 2048);
    await wal.append([item('z'.repeat(2000))]);
    const waiting = wal.append([item('late')]);
    wal.lift();
    await waiting;
    expect(lines(await readAll(wal)).map((l) => l.slice(-7))).toEqual(['zzzzz@0', '/late@1']);
  });

  it('sends everything again when the delivery cursor cannot be read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-ewal-'));
    const wal = openWal(dir);
    await wal.append([item('one'), item('two')]);
    await wal.done((await readAll(wal)).slice(0, 1));
    await wal.close();
    open.pop();
    for (const damaged of ['', '{"version":1,"delivered":{"":0.5}}']) {
      writeFileSync(join(dir, 'delivered.json'), damaged);
      const logs: string[] = [];
      const again = openWal(dir, 1 << 20, logs);
      await again.ready();
      expect(lines(await readAll(again))).toEqual(['/one@0', '/two@1']);
      expect(logs).toEqual([
        'warn ignoring an unreadable delivery cursor, sending everything in the write-ahead log again',
        'info replaying the write-ahead log',
      ]);
      await again.close();
      open.pop();
    }
  });

  it('starts a new sender at the oldest entry not done', async () => {
    const wal = openWal(mkdtempSync(join(tmpdir(), 'rivulet-ewal-')));
    await wal.append([item('1'), item('2'), item('3')]);
    const handed = await readAll(wal);
    await wal.done(handed.slice(0, 1));
    wal.rewind();
    expect(lines(await readAll(wal))).toEqual(['/2@1', '/3@2']);
    expect(wal.undone()).toBe(2);
  });
});

describe('endpoint write-ahead log faults', () => {
  const freshDir = () => mkdtempSync(join(tmpdir(), 'rivulet-ewal-'));
  const segmentFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.seg'));

  function openFaultWal(dir: string, options: { openFile?: OpenFile; maxBytes?: number } = {}) {
    const logs: string[] = [];
    const lost: Array<[number, string]> = [];
    const wal = new EndpointWal(
      {
        dir,
        maxBytes: options.maxBytes ?? 1 << 20,
        fsync: false,
        lost: (entries, reason) => lost.push([entries, reason]),
        ...(options.openFile ? { openFile: options.openFile } : {}),
      },
      (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`),
    );
    open.push(wal);
    return { wal, logs, lost };
  }

  it('refuses appends with RetryLaterError on a full disk, frees space by deleting before the cursor, and goes on by itself', async () => {
    const dir = freshDir();
    const disk = fullDisk(dir, 6000);
    const { wal, logs } = openFaultWal(dir, { openFile: disk.openFile });
    const line = (i: number) => `${i}`.padEnd(500, '.');
    let acknowledged = 0;
    let refusal: unknown;
    for (let i = 0; i < 20 && refusal === undefined; i++) {
      await wal.append([item(line(i))]).then(
        () => acknowledged++,
        (err: unknown) => (refusal = err),
      );
    }
    // Records of 561 bytes on disk: ten fit in 6,000 bytes, the eleventh does not.
    expect(acknowledged).toBe(10);
    expect(refusal).toBeInstanceOf(RetryLaterError);
    expect((refusal as Error).message).toBe('the write-ahead log’s disk is full (ENOSPC)');
    expect(logs.at(-1)).toBe(
      `warn the write-ahead log’s disk is full, refusing entries until a write succeeds {"dir":${JSON.stringify(dir)},"error":"ENOSPC: no space left on device, write"}`,
    );
    // The refused append left nothing behind.
    expect(wal.bytes).toBe(10 * 561);
    expect(disk.used()).toBe(10 * 561);
    const handed = await readAll(wal);
    expect(handed.length).toBe(10);
    // Not a byte left: the cursor can only be written once the delivered segment is gone.
    disk.setCap(disk.used());
    await wal.done(handed);
    expect(segmentFiles(dir)).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, 'delivered.json'), 'utf8'))).toEqual({ version: 1, delivered: {}, below: 10 });
    await wal.append([item(line(10))]);
    expect(lines(await readAll(wal))).toEqual([`/${line(10)}@10`]);
    await wal.close();
    open.pop();
    // After a restart nothing delivered comes again.
    const again = openFaultWal(dir);
    await again.wal.ready();
    expect(lines(await readAll(again.wal))).toEqual([`/${line(10)}@10`]);
  });

  it('clamps a cursor that runs ahead of the log, sending that tenant again instead of losing it', async () => {
    const dir = freshDir();
    const { wal } = openFaultWal(dir);
    await wal.append([item('a0', 'A'), item('b0', 'B'), item('a1', 'A')]);
    await wal.done((await readAll(wal)).filter((i) => i.tenant === 'B'));
    await wal.close();
    open.pop();
    writeFileSync(join(dir, 'delivered.json'), JSON.stringify({ version: 1, delivered: { A: 1e9, B: 1 }, below: 5e9 }));
    const again = openFaultWal(dir);
    await again.wal.ready();
    expect(lines(await readAll(again.wal))).toEqual(['A/a0@0', 'A/a1@2']);
    expect(again.lost).toEqual([]);
    expect(again.logs.filter((l) => l.startsWith('warn'))).toEqual([
      `warn the delivery cursor is ahead of the write-ahead log, sending the tenant’s entries in it again {"dir":${JSON.stringify(dir)},"tenant":"A","cursor":1000000000,"end":3}`,
      `warn the delivery cursor is ahead of the write-ahead log, sending everything in it again {"dir":${JSON.stringify(dir)},"cursor":5000000000,"end":3}`,
    ]);
    // New entries are numbered after what is on disk, not after the bad cursor, and are not skipped.
    await again.wal.append([item('a2', 'A')]);
    expect(lines(await readAll(again.wal))).toEqual(['A/a2@3']);
  });

  it('gives up a record that does not decode as one entry, counted with its reason', async () => {
    const dir = freshDir();
    const raw = await SegmentLog.open({ dir, segmentBytes: 1 << 20, fsync: false });
    await raw.append([encodeWalEntry(item('one')), Buffer.from([1, 2, 3]), encodeWalEntry(item('three'))]);
    await raw.close();
    const { wal, lost, logs } = openFaultWal(dir);
    await wal.ready();
    expect(lines(await readAll(wal))).toEqual(['/one@0', '/three@2']);
    expect(lost).toEqual([[1, 'undecodable']]);
    expect(logs.filter((l) => l.startsWith('error'))).toEqual([
      `error giving up write-ahead records that cannot be read {"dir":${JSON.stringify(dir)},"reason":"undecodable","first":1,"records":1,"error":"write-ahead record is truncated"}`,
    ]);
  });

  it('does not count damage in records already delivered', async () => {
    const dir = freshDir();
    const { wal } = openFaultWal(dir);
    await wal.append([item('one'), item('two'), item('three')]);
    await wal.done((await readAll(wal)).slice(0, 2));
    await wal.close();
    open.pop();
    const [segment] = segmentFiles(dir);
    const bytes = readFileSync(join(dir, segment!));
    bytes[30]! ^= 0xff;
    writeFileSync(join(dir, segment!), bytes);
    const again = openFaultWal(dir);
    await again.wal.ready();
    expect(lines(await readAll(again.wal))).toEqual(['/three@2']);
    expect(again.lost).toEqual([]);
  });
});
