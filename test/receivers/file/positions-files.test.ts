import { existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a32 } from '../../../lib/fnv1a.js';
import { Positions } from '../../../receivers/file/positions.js';
import { newestRecords, ownsFile, positionsFilesBeside, shardPositionsFile } from '../../../receivers/file/positions-files.js';

/** A positions file's text holding `offsets` (device 1, inode the offset's path letter code). */
function positionsText(offsets: Record<string, number>): string {
  const files = Object.fromEntries(
    Object.entries(offsets).map(([path, offset]) => [path, { offset: String(offset), dev: '1', ino: String(path.charCodeAt(1)) }]),
  );
  return JSON.stringify({ version: 1, files });
}

/** Writes a positions file last modified at `seconds` (since the epoch). */
function writePositions(file: string, offsets: Record<string, number>, seconds: number): void {
  writeFileSync(file, positionsText(offsets));
  utimesSync(file, seconds, seconds);
}

const saved = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as unknown;
const stored = (path: string, offset: number) => ({ offset: String(offset), dev: '1', ino: String(path.charCodeAt(1)) });

/**
 * Paths as shards of two own them: /b.log, /d.log, /f.log on shard 0; /a.log, /c.log, /e.log on
 * shard 1 (checked in the first test).
 */
describe('positions under shards', () => {
  it('gives every path to exactly one shard, by FNV-1a of the path modulo the count', () => {
    expect(['/a.log', '/b.log', '/c.log', '/d.log', '/e.log', '/f.log'].map((path) => ownsFile(path, { index: 0, count: 2 }))).toEqual([
      false,
      true,
      false,
      true,
      false,
      true,
    ]);
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 2, max: 16 }), (path, count) => {
        const owners = Array.from({ length: count }, (_, index) => index).filter((index) => ownsFile(path, { index, count }));
        expect(owners).toEqual([fnv1a32(path) % count]);
        expect(ownsFile(path, undefined)).toBe(true);
      }),
    );
  });

  it('takes each path from the newest file holding it; equal times keep the file listed first', () => {
    const records = (entries: Record<string, number>) => new Map(Object.entries(entries));
    expect(
      newestRecords([
        { modifiedNs: 10n, records: records({ '/a.log': 1, '/b.log': 1, '/c.log': 1 }) },
        { modifiedNs: 30n, records: records({ '/a.log': 3 }) },
        { modifiedNs: 20n, records: records({ '/a.log': 2, '/b.log': 2 }) },
        { modifiedNs: 20n, records: records({ '/b.log': 4, '/d.log': 4 }) },
      ]),
    ).toEqual(records({ '/a.log': 3, '/b.log': 2, '/c.log': 1, '/d.log': 4 }));
  });

  it('finds the configured file and the shard files beside it, not unfinished saves nor other names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-pos-shards-'));
    const file = join(dir, 'positions.json');
    for (const name of [
      'positions.json.shard-10',
      'positions.json.shard-2',
      'positions.json.shard-0.tmp',
      'positions.json.shard-x',
      'other.json.shard-1',
    ])
      writePositions(join(dir, name), {}, 1000);
    expect((await positionsFilesBeside(file)).map((found) => found.file)).toEqual([
      join(dir, 'positions.json.shard-2'),
      join(dir, 'positions.json.shard-10'),
    ]);
    writePositions(file, {}, 2000);
    expect(await positionsFilesBeside(file)).toEqual([
      { file, modifiedNs: 2_000_000_000_000n },
      { file: join(dir, 'positions.json.shard-2'), modifiedNs: 1_000_000_000_000n },
      { file: join(dir, 'positions.json.shard-10'), modifiedNs: 1_000_000_000_000n },
    ]);
    expect(await positionsFilesBeside(join(dir, 'missing', 'positions.json'))).toEqual([]);
  });

  it('loads in place the newest record of every path, writes them all to the configured file and removes the shard files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-pos-shards-'));
    const file = join(dir, 'positions.json');
    // An in-place run, then two shards that read on, shard 1 saving last.
    writePositions(file, { '/a.log': 10, '/b.log': 10, '/c.log': 10, '/gone.log': 10 }, 1000);
    writePositions(shardPositionsFile(file, 0), { '/b.log': 20, '/d.log': 20 }, 2000);
    writePositions(shardPositionsFile(file, 1), { '/a.log': 30, '/e.log': 30 }, 3000);
    const positions = new Positions(file);
    await positions.load();
    expect(positions.paths().sort()).toEqual(['/a.log', '/b.log', '/c.log', '/d.log', '/e.log', '/gone.log']);
    positions.delete('/gone.log');
    positions.set('/c.log', { offset: 15, dev: 1n, ino: BigInt('c'.charCodeAt(0)) });
    await positions.save();
    expect(saved(file)).toEqual({
      version: 1,
      files: {
        '/a.log': stored('/a.log', 30),
        '/b.log': stored('/b.log', 20),
        '/c.log': stored('/c.log', 15),
        '/d.log': stored('/d.log', 20),
        '/e.log': stored('/e.log', 30),
      },
    });
    expect(readdirSync(dir)).toEqual(['positions.json']);
  });

  it('writes the configured file at the first save after merging shard files, even with nothing read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-pos-shards-'));
    const file = join(dir, 'positions.json');
    writePositions(shardPositionsFile(file, 0), { '/b.log': 20 }, 2000);
    writePositions(shardPositionsFile(file, 1), { '/a.log': 30 }, 3000);
    const positions = new Positions(file);
    await positions.load();
    await positions.save();
    expect(saved(file)).toEqual({ version: 1, files: { '/a.log': stored('/a.log', 30), '/b.log': stored('/b.log', 20) } });
    expect(readdirSync(dir)).toEqual(['positions.json']);
  });

  it('loads on a shard only the paths it owns, from the newest file, and saves them to its own file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-pos-shards-'));
    const file = join(dir, 'positions.json');
    // Three shards ran before (shard 2 saved last), after an in-place run.
    writePositions(file, { '/a.log': 10, '/b.log': 10, '/d.log': 10, '/f.log': 10 }, 1000);
    writePositions(shardPositionsFile(file, 0), { '/b.log': 20, '/d.log': 20, '/f.log': 20 }, 2000);
    writePositions(shardPositionsFile(file, 2), { '/c.log': 40, '/e.log': 40 }, 4000);
    writePositions(shardPositionsFile(file, 1), { '/a.log': 30 }, 3000);
    const shard0 = new Positions(file, undefined, { index: 0, count: 2 });
    const shard1 = new Positions(file, undefined, { index: 1, count: 2 });
    await shard0.load();
    await shard1.load();
    expect(shard0.paths().sort()).toEqual(['/b.log', '/d.log', '/f.log']);
    expect(shard1.paths().sort()).toEqual(['/a.log', '/c.log', '/e.log']);
    expect(shard1.get('/a.log')?.offset).toBe(30);
    expect(shard1.get('/c.log')?.offset).toBe(40);
    shard0.set('/d.log', { offset: 25, dev: 1n, ino: BigInt('d'.charCodeAt(0)) });
    await shard0.save();
    await shard1.save();
    expect(saved(shardPositionsFile(file, 0))).toEqual({
      version: 1,
      files: { '/b.log': stored('/b.log', 20), '/d.log': stored('/d.log', 25), '/f.log': stored('/f.log', 20) },
    });
    // Nothing changed on shard 1: nothing written; no file is removed on a shard.
    expect(saved(shardPositionsFile(file, 1))).toEqual({ version: 1, files: { '/a.log': stored('/a.log', 30) } });
    expect(existsSync(file) && existsSync(shardPositionsFile(file, 2))).toBe(true);
    // Back in place: every path as the shards left it.
    const inPlace = new Positions(file);
    await inPlace.load();
    expect(
      Object.fromEntries(
        inPlace
          .paths()
          .sort()
          .map((path) => [path, inPlace.get(path)?.offset]),
      ),
    ).toEqual({
      '/a.log': 30,
      '/b.log': 20,
      '/c.log': 40,
      '/d.log': 25,
      '/e.log': 40,
      '/f.log': 20,
    });
  });

  it('refuses a shard file that is not the format, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-pos-shards-'));
    const file = join(dir, 'positions.json');
    writeFileSync(shardPositionsFile(file, 1), '{"version":2}');
    await expect(new Positions(file).load()).rejects.toThrow(`positions file ${shardPositionsFile(file, 1)} has an unknown format`);
  });
});
