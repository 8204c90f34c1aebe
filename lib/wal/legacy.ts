/**
 * Segments of the first format, `<first number, 20 digits>.seg`: records of an 8-byte header (the
 * payload's length and CRC-32, unsigned 32-bit little-endian) and the payload, numbered by their
 * position after the name's number. Opening a log rewrites each of them in the current format
 * under the same number, so what was kept before the format changed is still sent.
 *
 * The first format cannot step over damage: a record that fails its checks ends what can be read
 * of its segment, as it did when that format was current, and the rewrite says so in the log. A
 * file that yields no record, or whose current-format name is taken, is left as it is (opening
 * then logs it as a stray file).
 */
import { open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Log } from '../log.js';
import { frameRecords } from './records.js';

const LEGACY_NAME = /^(\d{20})\.seg$/;
const LEGACY_HEADER_BYTES = 8;
const READ_CHUNK_BYTES = 1 << 20;

/** Rewrites every first-format segment in `dir` in the current format; names out of range are left alone. */
export async function upgradeLegacySegments(dir: string, log?: Log): Promise<void> {
  for (const name of (await readdir(dir)).sort()) {
    const match = LEGACY_NAME.exec(name);
    if (!match || !Number.isSafeInteger(Number(match[1]))) continue;
    const path = join(dir, name);
    const target = join(dir, `${match[1]}.v2.seg`);
    // Never over a segment of the current format: the old file is left, and logged as stray.
    if (await exists(target)) continue;
    const { records, unreadBytes, damaged } = await rewrite(path, `${target}.tmp`, Number(match[1]));
    if (records === 0) {
      await unlink(`${target}.tmp`);
      continue;
    }
    // Durable under its new name before the old one goes, so a crash in between only rewrites it again.
    await rename(`${target}.tmp`, target);
    await unlink(path);
    if (damaged)
      log?.('error', 'a write-ahead segment of the first format is damaged, its records after the damage cannot be read', {
        path,
        bytes: unreadBytes,
      });
    else if (unreadBytes > 0)
      log?.('warn', 'cut off an unfinished record at the end of a write-ahead segment', { path, bytes: unreadBytes });
    log?.('info', 'rewrote a write-ahead segment of the first format', { path, records });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Copies the intact records at the start of `from` to `to` in the current format. */
async function rewrite(from: string, to: string, firstSeq: number): Promise<{ records: number; unreadBytes: number; damaged: boolean }> {
  const input = await open(from, 'r');
  const output = await open(to, 'w');
  try {
    const size = (await input.stat()).size;
    let offset = 0;
    let seq = firstSeq;
    let chunkBytes = READ_CHUNK_BYTES;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(chunkBytes, size - offset));
      const { bytesRead } = await input.read(buf, 0, buf.length, offset);
      const payloads: Buffer[] = [];
      let at = 0;
      let damaged = false;
      let needs = 0;
      while (bytesRead - at >= LEGACY_HEADER_BYTES) {
        const length = buf.readUInt32LE(at);
        const end = at + LEGACY_HEADER_BYTES + length;
        if (length > 0x7fff_ffff) {
          damaged = true;
          break;
        }
        if (end > bytesRead) {
          needs = LEGACY_HEADER_BYTES + length;
          break;
        }
        const payload = buf.subarray(at + LEGACY_HEADER_BYTES, end);
        if (crc32(payload) !== buf.readUInt32LE(at + 4)) {
          damaged = true;
          break;
        }
        payloads.push(payload);
        at = end;
      }
      if (payloads.length > 0) await output.write(frameRecords(payloads, seq));
      seq += payloads.length;
      offset += at;
      const growable = needs > 0 && offset + needs <= size && needs > buf.length;
      if (damaged || (at === 0 && !growable) || offset >= size) {
        await output.sync();
        return { records: seq - firstSeq, unreadBytes: size - offset, damaged };
      }
      chunkBytes = growable ? needs : READ_CHUNK_BYTES;
    }
  } finally {
    await input.close();
    await output.close();
  }
}
