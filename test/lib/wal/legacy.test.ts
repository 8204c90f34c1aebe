import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SegmentLog } from '../../../lib/wal/segment-log.js';

/** Records as the first format wrote them: length and CRC-32, then the payload. */
function legacyRecords(texts: readonly string[]): Buffer {
  return Buffer.concat(
    texts.map((text) => {
      const payload = Buffer.from(text);
      const header = Buffer.alloc(8);
      header.writeUInt32LE(payload.length, 0);
      header.writeUInt32LE(crc32(payload), 4);
      return Buffer.concat([header, payload]);
    }),
  );
}

async function openLog(dir: string) {
  const logs: string[] = [];
  const lost: Array<[number, string]> = [];
  const log = await SegmentLog.open({
    dir,
    segmentBytes: 1 << 20,
    fsync: false,
    log: (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`),
    lost: (records, reason) => lost.push([records, reason]),
  });
  const reader = log.reader(0);
  const read: string[] = [];
  while (reader.hasMore) for (const r of await reader.read(1 << 20)) read.push(`${r.seq}:${r.payload}`);
  await reader.close();
  return { log, logs, lost, read };
}

describe('segments of the first format', () => {
  it('are rewritten in the current format under the same numbers, a torn last record cut off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-legacy-'));
    writeFileSync(join(dir, '00000000000000000010.seg'), legacyRecords(['a', 'b', 'c']));
    writeFileSync(
      join(dir, '00000000000000000013.seg'),
      Buffer.concat([legacyRecords(['d', 'e']), legacyRecords(['torn']).subarray(0, 9)]),
    );
    const { log, logs, lost, read } = await openLog(dir);
    expect(read).toEqual(['10:a', '11:b', '12:c', '13:d', '14:e']);
    expect(lost).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['00000000000000000010.v2.seg', '00000000000000000013.v2.seg']);
    expect(logs).toEqual([
      `info rewrote a write-ahead segment of the first format {"path":${JSON.stringify(join(dir, '00000000000000000010.seg'))},"records":3}`,
      `warn cut off an unfinished record at the end of a write-ahead segment {"path":${JSON.stringify(join(dir, '00000000000000000013.seg'))},"bytes":9}`,
      `info rewrote a write-ahead segment of the first format {"path":${JSON.stringify(join(dir, '00000000000000000013.seg'))},"records":2}`,
    ]);
    expect(await log.append([Buffer.from('f')])).toBe(15);
    await log.close();
  });

  it('keep what precedes damage; the records after it are given up, counted from the next segment’s number', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-legacy-'));
    const first = legacyRecords(['a', 'b', 'c']);
    first[9 + 8]! ^= 0xff;
    writeFileSync(join(dir, '00000000000000000000.seg'), first);
    writeFileSync(join(dir, '00000000000000000003.seg'), legacyRecords(['d']));
    const { log, logs, lost, read } = await openLog(dir);
    expect(read).toEqual(['0:a', '3:d']);
    expect(lost).toEqual([[2, 'truncated']]);
    expect(logs[0]).toBe(
      `error a write-ahead segment of the first format is damaged, its records after the damage cannot be read {"path":${JSON.stringify(join(dir, '00000000000000000000.seg'))},"bytes":18}`,
    );
    await log.close();
  });

  it('are left alone when a segment of the current format has their number', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-legacy-'));
    const current = await SegmentLog.open({ dir, segmentBytes: 1 << 20, fsync: false });
    await current.append([Buffer.from('kept')]);
    await current.close();
    writeFileSync(join(dir, '00000000000000000000.seg'), legacyRecords(['old']));
    const { log, logs, read } = await openLog(dir);
    expect(read).toEqual(['0:kept']);
    expect(existsSync(join(dir, '00000000000000000000.seg'))).toBe(true);
    expect(logs).toEqual([
      `warn ignoring a file in the write-ahead log directory that is not one of its segments {"file":${JSON.stringify(join(dir, '00000000000000000000.seg'))},"reason":"not named <20 digits>.v2.seg"}`,
    ]);
    await log.close();
  });
});
