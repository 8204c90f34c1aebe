import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { frameRecords, parseRecords } from '../../../lib/wal/records.js';
import { SegmentLog } from '../../../lib/wal/segment_log.js';

const freshDir = () => mkdtempSync(join(tmpdir(), 'rivulet-wal-'));
const payload = (n: number, size = 10) => Buffer.from(`r${n}`.padEnd(size, '.'));
const texts = (records: Array<{ seq: number; payload: Buffer }>) =>
  records.map((r) => `${r.seq}:${r.payload.toString().replace(/\.+$/, '')}`);

async function readAll(log: SegmentLog, from = 0): Promise<string[]> {
  const reader = log.reader(from);
  const out: string[] = [];
  while (reader.hasMore) out.push(...texts(await reader.read(1 << 20)));
  await reader.close();
  return out;
}

describe('write-ahead records', () => {
  it('frames payloads with length and checksum and parses them back', () => {
    const framed = frameRecords([Buffer.from('one'), Buffer.alloc(0), Buffer.from('three')]);
    expect(framed.length).toBe(8 * 3 + 8);
    const parsed = parseRecords(framed);
    expect(parsed.payloads.map(String)).toEqual(['one', '', 'three']);
    expect(parsed).toMatchObject({ consumed: framed.length, damaged: false });
  });

  it('stops before an incomplete record and flags a damaged one', () => {
    const framed = frameRecords([Buffer.from('one'), Buffer.from('two')]);
    expect(parseRecords(framed.subarray(0, framed.length - 1))).toEqual({
      payloads: [Buffer.from('one')],
      consumed: 11,
      damaged: false,
      nextRecordBytes: 11,
    });
    const damaged = Buffer.from(framed);
    damaged[framed.length - 1] ^= 0xff;
    expect(parseRecords(damaged)).toEqual({ payloads: [Buffer.from('one')], consumed: 11, damaged: true });
  });
});

describe('segment log', () => {
  it('numbers records in order, rotates segments by size and reads across them', async () => {
    const dir = freshDir();
    const log = await SegmentLog.open({ dir, segmentBytes: 50, fsync: true });
    expect(await log.append([payload(0), payload(1)])).toBe(0);
    expect(await log.append([payload(2), payload(3)])).toBe(2);
    expect(await log.append([payload(4)])).toBe(4);
    // 36 bytes, then 72 ≥ 50: the third append starts a new segment named by its first record.
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000000.seg', '00000000000000000004.seg']);
    expect(log.bytes).toBe(5 * 18);
    expect(await readAll(log)).toEqual(['0:r0', '1:r1', '2:r2', '3:r3', '4:r4']);
    expect(await readAll(log, 3)).toEqual(['3:r3', '4:r4']);
    await log.close();
  });

  it('writes appends that arrive together in one go, in call order', async () => {
    const log = await SegmentLog.open({ dir: freshDir(), segmentBytes: 1 << 20, fsync: true });
    const firsts = await Promise.all(Array.from({ length: 50 }, (_, i) => log.append([payload(2 * i), payload(2 * i + 1)])));
    expect(firsts).toEqual(Array.from({ length: 50 }, (_, i) => 2 * i));
    expect(await readAll(log)).toEqual(Array.from({ length: 100 }, (_, i) => `${i}:r${i}`));
    await log.close();
  });

  it('reads in chunks of about the asked size and never past what is written', async () => {
    const log = await SegmentLog.open({ dir: freshDir(), segmentBytes: 1 << 20, fsync: false });
    await log.append([payload(0), payload(1), payload(2)]);
    const reader = log.reader(0);
    expect(texts(await reader.read(15))).toEqual(['0:r0', '1:r1']);
    expect(texts(await reader.read(15))).toEqual(['2:r2']);
    expect(reader.hasMore).toBe(false);
    await log.append([payload(3)]);
    expect(texts(await reader.read(1))).toEqual(['3:r3']);
    reader.seek(1);
    expect(texts(await reader.read(100))).toEqual(['1:r1', '2:r2', '3:r3']);
    await reader.close();
    await log.close();
  });

  it('deletes segments once every record in them is consumed, the newest one last', async () => {
    const dir = freshDir();
    const log = await SegmentLog.open({ dir, segmentBytes: 30, fsync: false });
    for (let i = 0; i < 6; i++) await log.append([payload(i)]);
    expect(readdirSync(dir).length).toBe(3);
    await log.removeBefore(3);
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000002.seg', '00000000000000000004.seg']);
    expect(log.firstSeq).toBe(2);
    expect(log.bytes).toBe(4 * 18);
    await log.removeBefore(6);
    expect(readdirSync(dir)).toEqual([]);
    expect(log.bytes).toBe(0);
    expect(await log.append([payload(6)])).toBe(6);
    expect(readdirSync(dir)).toEqual(['00000000000000000006.seg']);
    await log.close();
  });

  it('cuts off a record torn by a crash and continues numbering in a new segment', async () => {
    const dir = freshDir();
    const log = await SegmentLog.open({ dir, segmentBytes: 1 << 20, fsync: true });
    await log.append([payload(0), payload(1)]);
    await log.close();
    const segment = join(dir, '00000000000000000000.seg');
    appendFileSync(segment, frameRecords([payload(2)]).subarray(0, 12));
    const logs: string[] = [];
    const reopened = await SegmentLog.open({
      dir,
      segmentBytes: 1 << 20,
      fsync: true,
      log: (level, message) => logs.push(`${level} ${message}`),
    });
    expect(logs).toEqual(['warn cut off an unfinished record at the end of a write-ahead segment']);
    expect(statSync(segment).size).toBe(36);
    expect(reopened.endSeq).toBe(2);
    expect(await reopened.append([payload(2)])).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000000.seg', '00000000000000000002.seg']);
    expect(await readAll(reopened)).toEqual(['0:r0', '1:r1', '2:r2']);
    await reopened.close();
  });

  it('skips the rest of a damaged segment, saying how many records were lost', async () => {
    const dir = freshDir();
    const log = await SegmentLog.open({ dir, segmentBytes: 40, fsync: false });
    for (let i = 0; i < 5; i++) await log.append([payload(i)]);
    await log.close();
    const first = join(dir, '00000000000000000000.seg');
    const bytes = readFileSync(first);
    bytes[18 + 9] ^= 0xff;
    writeFileSync(first, bytes);
    const logs: string[] = [];
    const reopened = await SegmentLog.open({
      dir,
      segmentBytes: 40,
      fsync: false,
      log: (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`),
    });
    expect(await readAll(reopened)).toEqual(['0:r0', '3:r3', '4:r4']);
    expect(logs).toEqual([`error write-ahead segment is damaged, skipping the rest of it {"path":${JSON.stringify(first)},"records":2}`]);
    await reopened.close();
  });

  it('removes an empty newest segment on open and never numbers below firstSeq', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, '00000000000000000007.seg'), '');
    const log = await SegmentLog.open({ dir, segmentBytes: 100, fsync: false, firstSeq: 5 });
    expect(readdirSync(dir)).toEqual([]);
    expect(log.endSeq).toBe(7);
    const fresh = await SegmentLog.open({ dir: freshDir(), segmentBytes: 100, fsync: false, firstSeq: 42 });
    expect(await fresh.append([payload(0)])).toBe(42);
    await log.close();
    await fresh.close();
  });

  it('reads records longer than its read chunk', async () => {
    const log = await SegmentLog.open({ dir: freshDir(), segmentBytes: 1 << 30, fsync: false });
    const big = Buffer.alloc(3 << 20, 7);
    await log.append([payload(0), big, payload(2)]);
    const reader = log.reader(0);
    const records = [];
    while (reader.hasMore) records.push(...(await reader.read(1)));
    expect(records.map((r) => [r.seq, r.payload.length])).toEqual([
      [0, 10],
      [1, 3 << 20],
      [2, 10],
    ]);
    expect(records[1]!.payload.equals(big)).toBe(true);
    await reader.close();
    await log.close();
  });
});
