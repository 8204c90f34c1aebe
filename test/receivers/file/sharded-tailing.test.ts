/**
 * logs.source.file as a shard's instance sees it (a `ctx.shard` of a run with several): it tails
 * only the files whose path its shard owns, counts only those, and keeps their positions in its
 * shard's file. The instances of one run's shards are built here side by side, without threads.
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogsReceiver } from '../../../core/receiver.js';
import { validatedArgs } from '../../../core/runtime/component.js';
import type { ShardPeers } from '../../../core/shard-context.js';
import { fnv1a32 } from '../../../lib/fnv1a.js';
import { LogsSourceFile, logsSourceFileComponent } from '../../../receivers/logs-source-file.js';
import { componentArgs, eventually, recordingReceiver, testContext, type RecordingReceiver } from '../loki/harness.js';
import { positionsOf } from './positions-record.js';

const ID = 'logs.source.file.test';

/** A shard's peers as the file source uses them: only its place among the shards. */
function peers(index: number, count: number): ShardPeers {
  return {
    index,
    count,
    deliver: () => Promise.reject(new Error('the file source delivers to its receivers, not to peers')),
    serveEntries: () => () => {},
    serveBodies: () => () => {},
  };
}

const running: LogsSourceFile[] = [];
afterEach(async () => {
  for (const source of running.splice(0)) await source.stop();
});

/** Starts the source of `body` on shard `index` of `count` (none: in place), into `receiver`, counting into `registry`. */
async function startOn(shard: { index: number; count: number } | undefined, body: string, receiver: RecordingReceiver, registry: Registry) {
  const text = `logs.source.file "test" {\n  ${body}\n  file_watch {\n    min_poll_frequency = "20ms"\n    max_poll_frequency = "20ms"\n  }\n  forward_to = [r0]\n}\n`;
  const args = validatedArgs(logsSourceFileComponent, componentArgs(logsSourceFileComponent, text, [receiver as LogsReceiver]), { id: ID });
  const ctx = { ...testContext(ID, { registry }), ...(shard ? { shard: peers(shard.index, shard.count) } : {}) };
  const source = new LogsSourceFile(args, ctx);
  running.push(source);
  await source.start();
  return source;
}

async function stop(source: LogsSourceFile): Promise<void> {
  running.splice(running.indexOf(source), 1);
  await source.stop();
}

const linesByFile = (receiver: RecordingReceiver) => {
  const out: Record<string, string[]> = {};
  for (const entry of receiver.entries) (out[entry.labels.filename!] ??= []).push(entry.line);
  return out;
};

/** Six files in a fresh directory, three on each of two shards, file f holding lines `f-0` … `f-(f+1)`. */
/** Runs the source of `body` on two shards until they read the six files' 27 lines, then stops both. */
async function readAllOnTwoShards(body: string): Promise<void> {
  const receivers = [0, 1].map(() => recordingReceiver());
  const sources = await Promise.all(receivers.map((receiver, index) => startOn({ index, count: 2 }, body, receiver, new Registry())));
  await eventually(() => receivers.reduce((sum, receiver) => sum + receiver.entries.length, 0) === 27, 5000, 'every line');
  for (const source of sources) await stop(source);
}

function sixFiles(): { dir: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-file-shards-'));
  const perShard: string[][] = [[], []];
  for (let k = 0; perShard.some((owned) => owned.length < 3); k++) {
    const file = join(dir, `app-${k}.log`);
    const owned = perShard[fnv1a32(file) % 2]!;
    if (owned.length < 3) owned.push(file);
  }
  const files = perShard.flat();
  files.forEach((file, f) => appendFileSync(file, Array.from({ length: f + 2 }, (_, n) => `${f}-${n}\n`).join('')));
  return { dir, files };
}

describe('logs.source.file on a shard', () => {
  it('tails only the files its shard owns; the shards together tail each file once', async () => {
    const { dir, files } = sixFiles();
    const owned = (index: number) => files.filter((file) => fnv1a32(file) % 2 === index);
    const positions = join(dir, 'positions.json');
    const body = `path = ${JSON.stringify(join(dir, '*.log'))}\n  positions_file = ${JSON.stringify(positions)}`;
    const shards = [0, 1].map(() => ({ receiver: recordingReceiver(), registry: new Registry() }));
    const sources = await Promise.all(
      shards.map(({ receiver, registry }, index) => startOn({ index, count: 2 }, body, receiver, registry)),
    );
    const total = files.reduce((sum, _, f) => sum + f + 2, 0);
    await eventually(() => shards.reduce((sum, { receiver }) => sum + receiver.entries.length, 0) === total, 5000, 'every line');
    for (const [index, { receiver, registry }] of shards.entries()) {
      expect(linesByFile(receiver)).toEqual(
        Object.fromEntries(
          owned(index).map((file) => [file, Array.from({ length: files.indexOf(file) + 2 }, (_, n) => `${files.indexOf(file)}-${n}`)]),
        ),
      );
      expect((await registry.getSingleMetric('logs_source_file_files_active_total')!.get()).values.map((v) => v.value)).toEqual([
        owned(index).length,
      ]);
    }
    for (const source of sources) await stop(source);
    expect(
      readdirSync(dir)
        .filter((name) => name.startsWith('positions'))
        .sort(),
    ).toEqual(['positions.json.shard-0', 'positions.json.shard-1']);
    for (const index of [0, 1]) expect(JSON.parse(readFileSync(`${positions}.shard-${index}`, 'utf8'))).toEqual(positionsOf(owned(index)));
  });

  it('reads on, on the shard that owns it, a file renamed while the source was down, from where the other shard left it', async () => {
    const { dir, files } = sixFiles();
    const positions = join(dir, 'positions.json');
    const body = `path = ${JSON.stringify(join(dir, '*.log'))}\n  positions_file = ${JSON.stringify(positions)}`;
    await readAllOnTwoShards(body);
    // A file of shard 0 renamed to a name shard 1 owns, and a line appended to it.
    const from = files.find((file) => fnv1a32(file) % 2 === 0)!;
    let to = '';
    for (let k = 0; to === ''; k++) if (fnv1a32(join(dir, `moved-${k}.log`)) % 2 === 1) to = join(dir, `moved-${k}.log`);
    renameSync(from, to);
    appendFileSync(to, 'after the move\n');
    const again = [0, 1].map(() => recordingReceiver());
    await Promise.all(again.map((receiver, index) => startOn({ index, count: 2 }, body, receiver, new Registry())));
    await eventually(() => again[1]!.entries.length === 1, 5000, 'the moved file read on');
    expect(again.map(linesByFile)).toEqual([{}, { [to]: ['after the move'] }]);
  });

  it('is read on in place from both shards’ positions, which the first save then folds into the configured file', async () => {
    const { dir, files } = sixFiles();
    const positions = join(dir, 'positions.json');
    const body = `path = ${JSON.stringify(join(dir, '*.log'))}\n  positions_file = ${JSON.stringify(positions)}`;
    await readAllOnTwoShards(body);
    files.forEach((file, f) => appendFileSync(file, `${f}-new\n`));
    const inPlace = recordingReceiver();
    const source = await startOn(undefined, body, inPlace, new Registry());
    await eventually(() => inPlace.entries.length === 6, 5000, 'the new lines');
    await stop(source);
    expect(linesByFile(inPlace)).toEqual(Object.fromEntries(files.map((file, f) => [file, [`${f}-new`]])));
    expect(readdirSync(dir).filter((name) => name.startsWith('positions'))).toEqual(['positions.json']);
    expect(JSON.parse(readFileSync(positions, 'utf8'))).toEqual(positionsOf(files));
  });
});
