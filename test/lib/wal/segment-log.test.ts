import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { frameRecords, parseRecords } from '../../../lib/wal/records.js';
import { SegmentLog } from '../../../lib/wal/segment-log.js';

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

const parsedTexts = (buf: Buffer) => parseRecords(buf).records.map((r) => `${r.seq}:${r.payload}`);

describe('write-ahead records', () => {
  it('frames payloads with their numbers, length and checksums, and parses them back', () => {
    const framed = frameRecords([Buffer.from('one'), Buffer.alloc(0), Buffer.from('three')], 2 ** 40);
    expect(framed.length).toBe(24 * 3 + 8);
    expect(framed.subarray(0, 4).toString('latin1')).toBe('RvW2');
    const parsed = parseRecords(framed);
    expect(parsed.records.map((r) => [r.seq, String(r.payload), r.end])).toEqual([
      [2 ** 40, 'one', 27],
      [2 ** 40 + 1, '', 51],
      [2 ** 40 + 2, 'three', 80],
    ]);
    expect(parsed).toMatchObject({ consumed: 80, skipped: 0, highestSeq: 2 ** 40 + 2 });
  });

  it('stops before a record the buffer cuts off, leaving it to be read in full', () => {
    const framed = frameRecords([Buffer.from('one'), Buffer.from('two')], 0);
    expect(parseRecords(framed.subarray(0, framed.length - 1))).toMatchObject({ consumed: 27, skipped: 0, nextRecordBytes: 27 });
    // Fewer bytes than a header: nothing to say yet.
    expect(parseRecords(framed.subarray(0, 27 + 23))).toMatchObject({ consumed: 27, skipped: 0 });
  });

  it('skips exactly the record whose payload is damaged, and scans past a damaged header to the next one', () => {
    const framed = frameRecords(
      ['a', 'b', 'c', 'd'].map((t) => Buffer.from(t)),
      10,
    );
    const payloadHit = Buffer.from(framed);
    payloadHit[25 + 24]! ^= 0x01;
    expect(parsedTexts(payloadHit)).toEqual(['10:a', '12:c', '13:d']);
    expect(parseRecords(payloadHit)).toMatchObject({ consumed: 100, skipped: 25, highestSeq: 13 });
    // A length of 2^31 - 1 in the second header: only its checksum tells it is wrong.
    const lengthHit = Buffer.from(framed);
    lengthHit.writeUInt32LE(0x7fff_ffff, 25 + 12);
    expect(parsedTexts(lengthHit)).toEqual(['10:a', '12:c', '13:d']);
    expect(parseRecords(lengthHit)).toMatchObject({ consumed: 100, skipped: 25 });
    const markerHit = Buffer.from(framed);
    markerHit[50] = 0;
    expect(parsedTexts(markerHit)).toEqual(['10:a', '11:b', '13:d']);
    // Damage up to the end: what could still start a header stays for the next read.
    const tail = Buffer.concat([framed.subarray(0, 25), Buffer.alloc(100, 0xee)]);
    expect(parseRecords(tail)).toMatchObject({ consumed: 125 - 23, skipped: 100 - 23 });
  });

  it('refuses a record number that is not a safe integer', () => {
    expect(() => frameRecords([Buffer.from('x')], 2 ** 53)).toThrow('record number 9007199254740992 is out of range');
  });
});

describe('segment log', () => {
  it('numbers records in order, rotates segments by size and reads across them', async () => {
    const dir = freshDir();
    const log = await SegmentLog.open({ dir, segmentBytes: 100, fsync: true });
    expect(await log.append([payload(0), payload(1)])).toBe(0);
    expect(await log.append([payload(2), payload(3)])).toBe(2);
    expect(await log.append([payload(4)])).toBe(4);
    // 68 bytes, then 136 ≥ 100: the third append starts a new segment named by its first record.
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000000.v2.seg', '00000000000000000004.v2.seg']);
    expect(log.bytes).toBe(5 * 34);
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
    const log = await SegmentLog.open({ dir, segmentBytes: 60, fsync: false });
    for (let i = 0; i < 6; i++) await log.append([payload(i)]);
    expect(readdirSync(dir).length).toBe(3);
    await log.removeBefore(3);
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000002.v2.seg', '00000000000000000004.v2.seg']);
    expect(log.firstSeq).toBe(2);
    expect(log.bytes).toBe(4 * 34);
    await log.removeBefore(6);
    expect(readdirSync(dir)).toEqual([]);
    expect(log.bytes).toBe(0);
    expect(await log.append([payload(6)])).toBe(6);
    expect(readdirSync(dir)).toEqual(['00000000000000000006.v2.seg']);
    await log.close();
  });

  it('cuts off a record torn by a crash and continues numbering in a new segment', async () => {
    const dir = freshDir();
    const log = await SegmentLog.open({ dir, segmentBytes: 1 << 20, fsync: true });
    await log.append([payload(0), payload(1)]);
    await log.close();
    const segment = join(dir, '00000000000000000000.v2.seg');
    appendFileSync(segment, frameRecords([payload(2)], 2).subarray(0, 30));
    const logs: string[] = [];
    const reopened = await SegmentLog.open({
      dir,
      segmentBytes: 1 << 20,
      fsync: true,
      log: (level, message) => logs.push(`${level} ${message}`),
    });
    expect(logs).toEqual(['warn cut off an unfinished record at the end of a write-ahead segment']);
    expect(statSync(segment).size).toBe(68);
    expect(reopened.endSeq).toBe(2);
    expect(await reopened.append([payload(2)])).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000000.v2.seg', '00000000000000000002.v2.seg']);
    expect(await readAll(reopened)).toEqual(['0:r0', '1:r1', '2:r2']);
    await reopened.close();
  });

  it('removes an empty newest segment on open and never numbers below firstSeq', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, '00000000000000000007.v2.seg'), '');
    const log = await SegmentLog.open({ dir, segmentBytes: 100, fsync: false, firstSeq: 5 });
    expect(readdirSync(dir)).toEqual([]);
    expect(log.endSeq).toBe(5);
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

describe('segment log faults: each record lost is counted, none more', () => {
  /** `count` records of 100 bytes (124 on disk) from 0, `perSegment` to a segment, then reopened. */
  async function damagedLog(count: number, perSegment: number, damage: (dir: string) => void) {
    const dir = freshDir();
    const first = await SegmentLog.open({ dir, segmentBytes: perSegment * 124, fsync: false });
    for (let i = 0; i < count; i += perSegment) {
      await first.append(Array.from({ length: Math.min(perSegment, count - i) }, (_, k) => payload(i + k, 100)));
    }
    await first.close();
    damage(dir);
    const logs: string[] = [];
    const lost: Array<[number, string]> = [];
    const log = await SegmentLog.open({
      dir,
      segmentBytes: perSegment * 124,
      fsync: false,
      log: (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`),
      lost: (records, reason) => lost.push([records, reason]),
    });
    return { dir, log, logs, lost };
  }
  const segmentPath = (dir: string, first: number) => join(dir, `${String(first).padStart(20, '0')}.v2.seg`);
  const edit = (path: string, change: (bytes: Buffer) => void) => {
    const bytes = readFileSync(path);
    change(bytes);
    writeFileSync(path, bytes);
  };
  const numbers = (records: string[]) => records.map((r) => Number(r.split(':')[0]));
  const allBut = (count: number, ...gone: number[]) => Array.from({ length: count }, (_, i) => i).filter((i) => !gone.includes(i));

  it('a flipped byte in a payload loses that record alone, counted once even when read again', async () => {
    const { dir, log, logs, lost } = await damagedLog(400, 200, (d) =>
      edit(segmentPath(d, 0), (bytes) => {
        bytes[57 * 124 + 24 + 50]! ^= 0x10;
      }),
    );
    expect(numbers(await readAll(log))).toEqual(allBut(400, 57));
    expect(numbers(await readAll(log))).toEqual(allBut(400, 57));
    expect(lost).toEqual([[1, 'damaged']]);
    expect(logs).toEqual([
      `error giving up write-ahead records that cannot be read {"path":${JSON.stringify(segmentPath(dir, 0))},"reason":"damaged","first":57,"records":1}`,
    ]);
    await log.close();
  });

  it('a bad length field loses that record alone, in a closed segment and in the newest', async () => {
    // 3,000 records of about 1 KB: a segment of 3 MB, longer than a read chunk.
    const big = (n: number) => Buffer.from(`r${n}`.padEnd(1000, '.'));
    for (const segments of [1, 2]) {
      const dir = freshDir();
      const first = await SegmentLog.open({ dir, segmentBytes: 3000 * 1024, fsync: false });
      await first.append(Array.from({ length: 3000 }, (_, i) => big(i)));
      if (segments === 2) await first.append([big(3000)]);
      await first.close();
      edit(segmentPath(dir, 0), (bytes) => {
        bytes.writeUInt32LE(0x00ff_ffff, 1234 * 1024 + 12);
      });
      const logs: string[] = [];
      const lost: Array<[number, string]> = [];
      const log = await SegmentLog.open({
        dir,
        segmentBytes: 3000 * 1024,
        fsync: false,
        log: (level, message) => logs.push(`${level} ${message}`),
        lost: (records, reason) => lost.push([records, reason]),
      });
      const read = numbers(await readAll(log));
      expect(read.length).toBe(2999 + segments - 1);
      expect(read).toEqual(allBut(2999 + segments, 1234));
      expect(lost).toEqual([[1, 'damaged']]);
      expect(logs).toEqual(['error giving up write-ahead records that cannot be read']);
      expect(log.endSeq).toBe(2999 + segments);
      await log.close();
    }
  });

  it('a closed segment cut short loses exactly the records past the cut; a torn newest record loses none', async () => {
    const { log, lost } = await damagedLog(400, 200, (d) => truncateSync(segmentPath(d, 0), 150 * 124 + 60));
    expect(numbers(await readAll(log))).toEqual(allBut(400, ...Array.from({ length: 50 }, (_, i) => 150 + i)));
    expect(lost).toEqual([[50, 'truncated']]);
    await log.close();
    // Cut inside the newest segment's last record: an append torn by a crash, never acknowledged.
    const torn = await damagedLog(400, 200, (d) => truncateSync(segmentPath(d, 200), 200 * 124 - 30));
    expect(numbers(await readAll(torn.log))).toEqual(allBut(399));
    expect(torn.lost).toEqual([]);
    expect(torn.logs.map((l) => l.split(' {')[0])).toEqual(['warn cut off an unfinished record at the end of a write-ahead segment']);
    expect(await torn.log.append([payload(399)])).toBe(399);
    await torn.log.close();
  });

  it('ignores stray files, logging them, without hiding a real segment or shifting the numbering', async () => {
    const { dir, log, logs, lost } = await damagedLog(400, 200, (d) => {
      const copy = readFileSync(segmentPath(d, 0));
      writeFileSync(join(d, '99999999999999999999.v2.seg'), copy);
      writeFileSync(segmentPath(d, 150), copy);
      writeFileSync(segmentPath(d, 300), 'not a segment at all, but long enough to be read as one');
      writeFileSync(join(d, '00000000000000000000.seg'), copy);
      writeFileSync(join(d, 'notes.txt'), 'ignored quietly');
    });
    expect(numbers(await readAll(log))).toEqual(allBut(400));
    expect(lost).toEqual([]);
    expect(log.endSeq).toBe(400);
    expect(await log.append([payload(400)])).toBe(400);
    const stray = (name: string, reason: string) =>
      `warn ignoring a file in the write-ahead log directory that is not one of its segments ${JSON.stringify({ file: join(dir, name), reason })}`;
    expect(logs).toEqual([
      stray('00000000000000000000.seg', 'not named <20 digits>.v2.seg'),
      stray('00000000000000000150.v2.seg', 'its first record is number 0'),
      stray('00000000000000000300.v2.seg', 'it holds no readable record'),
      stray('99999999999999999999.v2.seg', 'its number is out of range'),
    ]);
    await log.close();
  });
});
