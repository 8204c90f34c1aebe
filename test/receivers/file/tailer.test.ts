import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import { FileIdentities, FileTailer, type TailerOptions } from '../../../receivers/file/tailer.js';
import { Positions } from '../../../receivers/file/positions.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-tailer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
});

function tailer(path: string, sent: Entry[], options: Partial<TailerOptions> = {}): FileTailer {
  return new FileTailer({
    path,
    labels: { filename: path },
    positions: new Positions(''),
    identities: new FileIdentities(),
    clock: systemClock(),
    send: async (entries) => {
      sent.push(...entries);
    },
    tailFromEnd: false,
    log: () => {},
    signal: new AbortController().signal,
    ...options,
  });
}

describe('FileTailer', () => {
  it('reads a line of many chunks copying and scanning its bytes a bounded number of times', async () => {
    const size = 16 << 20;
    const path = join(dir, 'long.log');
    writeFileSync(path, Buffer.concat([Buffer.from('first\n'), Buffer.alloc(size, 'x'), Buffer.from('\nlast\n')]));
    const concat = vi.spyOn(Buffer, 'concat');
    const indexOf = vi.spyOn(Buffer.prototype, 'indexOf');
    const sent: Entry[] = [];
    const file = tailer(path, sent);
    await file.poll();
    await file.close();
    expect(sent.map((e) => e.line.length)).toEqual([5, size, 4]);
    // Joining the chunks once per line, and scanning each byte once for a newline, is linear; doing
    // either once per chunk read costs time quadratic in the line's length.
    const joined = concat.mock.results.reduce((n, r) => n + (r.value as Buffer).length, 0);
    expect(joined).toBeLessThanOrEqual(size);
    const scanned = indexOf.mock.calls.reduce((n, call, i) => n + ((indexOf.mock.contexts[i] as Buffer).length - Number(call[1] ?? 0)), 0);
    expect(scanned).toBeLessThanOrEqual(size + (1 << 20));
  });

  it('moves the offset past lines over max_line_size and tells how many went and their bytes', async () => {
    const path = join(dir, 'limited.log');
    writeFileSync(path, `short\n${'a'.repeat(300_000)}\nok\n${'b'.repeat(20)}`);
    const overLong: Array<[number, number, boolean]> = [];
    const offsets: number[] = [];
    const sent: Entry[] = [];
    const file = tailer(path, sent, {
      maxLineSize: 10,
      stats: { sent: (_l, _b, offset) => offsets.push(offset), size: () => {}, overLong: (...args) => overLong.push(args) },
    });
    await file.poll();
    expect(sent.map((e) => e.line)).toEqual(['short', 'ok']);
    expect(offsets.at(-1)).toBe(6 + 300_001 + 3);
    expect(overLong).toEqual([[1, 300_000, false]]);
    await file.close();
  });
  it('reads a refused batch again from its start on the next poll, with the file unchanged and after accepted batches', async () => {
    const path = join(dir, 'refused.log');
    // 200 lines: batches of 64, 128 (refused once), then the 8 left.
    writeFileSync(path, Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join(''));
    const sizes: number[] = [];
    const sent: Entry[] = [];
    let refuse = true;
    const file = tailer(path, sent, {
      send: async (entries) => {
        sizes.push(entries.length);
        if (sizes.length === 2 && refuse) {
          refuse = false;
          throw new Error('downstream down');
        }
        sent.push(...entries);
      },
    });
    await expect(file.poll()).rejects.toThrow('downstream down');
    expect(sent).toHaveLength(64);
    expect(await file.poll()).toBe(true);
    await file.close();
    expect(sizes).toEqual([64, 128, 128, 8]);
    expect(sent.map((e) => e.line)).toEqual(Array.from({ length: 200 }, (_, i) => `line ${i}`));
  });
  it('keeps the record of a file renamed away, so a restart before it is tailed under its new name reads none of it again', async () => {
    const sub = join(dir, 'renamed');
    mkdirSync(sub);
    const path = join(sub, 'app.log');
    const positionsFile = join(sub, 'positions.json');
    writeFileSync(path, 'one\ntwo\n');
    const positions = new Positions(positionsFile);
    const sent: Entry[] = [];
    const first = tailer(path, sent, { positions });
    await first.poll();
    renameSync(path, `${path}.1`);
    // Finishes the renamed file; nothing is at the path now, and the source stops here.
    await first.poll();
    await first.close();
    await positions.save();
    const saved = JSON.parse(readFileSync(positionsFile, 'utf8')) as { files: Record<string, { offset: string }> };
    expect(Object.entries(saved.files).map(([p, r]) => [p, r.offset])).toEqual([[path, '8']]);

    const restarted = new Positions(positionsFile);
    await restarted.load();
    appendFileSync(`${path}.1`, 'three\n');
    const again: Entry[] = [];
    const second = tailer(`${path}.1`, again, { positions: restarted });
    await second.poll();
    await second.close();
    expect(sent.map((e) => e.line)).toEqual(['one', 'two']);
    expect(again.map((e) => e.line)).toEqual(['three']);
  });

  it('forgets the record of a file deleted while it was tailed', async () => {
    const path = join(dir, 'deleted.log');
    writeFileSync(path, 'one\n');
    const positions = new Positions('');
    const file = tailer(path, [], { positions });
    await file.poll();
    expect(positions.get(path)?.offset).toBe(4);
    rmSync(path);
    await file.poll();
    await file.close();
    expect(positions.get(path)).toBeUndefined();
  });
});
