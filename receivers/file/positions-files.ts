/**
 * The positions files of one logs.source.file under a sharded run. Each shard tails the files
 * whose path it owns (FNV-1a of the path, modulo the shard count) and writes their positions to
 * `<positions_file>.shard-<i>`; with one shard, or in place, the configured file holds them all.
 *
 * Loading merges the configured file and every `<positions_file>.shard-<i>` beside it, taking for
 * each path the record of the most recently written file: the run that read a file last is the
 * one that wrote its position last, so a change of shard count (or back to none) neither skips
 * nor repeats lines, whichever shard owned the file before.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fnv1a32 } from '../../lib/fnv1a.js';

/** This shard of a run with several, as positions see it. */
export interface PositionsShard {
  readonly index: number;
  readonly count: number;
}

/** Whether the shard tails `path`; without a shard (in place), every path. */
export function ownsFile(path: string, shard: PositionsShard | undefined): boolean {
  return shard === undefined || fnv1a32(path) % shard.count === shard.index;
}

/** The file a shard writes its positions to, beside the configured one. */
export function shardPositionsFile(file: string, index: number): string {
  return `${file}.shard-${index}`;
}

/** A positions file as found on disk: its path and when it was last written (nanoseconds). */
export interface FoundPositionsFile {
  readonly file: string;
  readonly modifiedNs: bigint;
}

/**
 * The configured file, if it exists, then the shard files beside it by shard index. Temporary
 * files of an unfinished save (`.tmp`) are not among them.
 */
export async function positionsFilesBeside(file: string): Promise<FoundPositionsFile[]> {
  const prefix = `${basename(file)}.shard-`;
  let names: string[];
  try {
    names = await readdir(dirname(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const shardFiles = names
    .filter((name) => name.startsWith(prefix) && /^[0-9]+$/.test(name.slice(prefix.length)))
    .map((name) => ({ name, index: Number(name.slice(prefix.length)) }))
    .sort((a, b) => a.index - b.index)
    .map(({ name }) => join(dirname(file), name));
  const found: FoundPositionsFile[] = [];
  for (const path of [file, ...shardFiles]) {
    try {
      found.push({ file: path, modifiedNs: (await stat(path, { bigint: true })).mtimeNs });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return found;
}

/**
 * Each path's record from the most recently written of `files` holding it; between files written
 * at the same time, the one listed first. Pure: `files` are the records as each file held them.
 */
export function newestRecords<T>(
  files: ReadonlyArray<{ readonly modifiedNs: bigint; readonly records: ReadonlyMap<string, T> }>,
): Map<string, T> {
  const newest = new Map<string, { record: T; modifiedNs: bigint }>();
  for (const { modifiedNs, records } of files) {
    for (const [path, record] of records) {
      const held = newest.get(path);
      if (!held || modifiedNs > held.modifiedNs) newest.set(path, { record, modifiedNs });
    }
  }
  return new Map([...newest].map(([path, { record }]) => [path, record]));
}
