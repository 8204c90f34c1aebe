/**
 * logs.source.file on the shards of a sharded run: each shard tails the files whose path it owns
 * (FNV-1a of the path modulo the shard count) and keeps their positions in a file of its own, and
 * the run gives every file's entries, their order and the metric values that one thread gives.
 */
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a32 } from '../../../lib/fnv1a.js';
import { positionsOf } from '../../receivers/file/positions-record.js';
import { runConfig, type CommandRun } from './support.js';

const STAGES = {
  multiline: () => 'stage.multiline {\n    firstline     = "^start"\n    max_wait_time = "1h"\n  }',
  metrics: (i: number) =>
    `stage.metrics {\n    metric.counter {\n      name        = "lines_${i}_total"\n      description = "lines"\n      match_all   = true\n      action      = "inc"\n    }\n  }`,
  logfmt: () => 'stage.logfmt {\n    mapping = { level = "" }\n  }',
  labels: () => 'stage.labels {\n    values = { level = "" }\n  }',
} as const;

type StageName = keyof typeof STAGES;

function config(glob: string, positions: string, stages: readonly StageName[]): string {
  return `logs.source.file "files" {
  path           = ${JSON.stringify(glob)}
  positions_file = ${JSON.stringify(positions)}
  file_watch {
    min_poll_frequency = "10ms"
    max_poll_frequency = "10ms"
  }
  forward_to = [logs.process.p.receiver]
}

logs.process "p" {
  ${stages.map((name, i) => STAGES[name](i)).join('\n  ')}
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`;
}

/** `perShard` file paths in `dir` ending in `ext` for each of `count` shards, shard by shard (owned as FNV-1a of the path modulo the count). */
function filesByShard(dir: string, ext: string, count: number, perShard: number): string[][] {
  const shards = Array.from({ length: count }, (): string[] => []);
  for (let k = 0; shards.some((files) => files.length < perShard); k++) {
    const path = join(dir, `app-${k}.${ext}`);
    const owned = shards[fnv1a32(path) % count]!;
    if (owned.length < perShard) owned.push(path);
  }
  return shards;
}

/** Line `n` of file `f`: every third one starts a multiline block. */
const line = (f: number, n: number) => `${n % 3 === 0 ? 'start' : '  cont'} level=${n % 2 ? 'info' : 'warn'} f=${f} n=${n}`;

/** Appends lines `from` … `to − 1` to each file. */
function appendLines(files: readonly string[], from: (f: number) => number, to: (f: number) => number): number {
  let written = 0;
  files.forEach((file, f) => {
    const lines = Array.from({ length: to(f) - from(f) }, (_, i) => `${line(f, from(f) + i)}\n`);
    appendFileSync(file, lines.join(''));
    written += lines.length;
  });
  return written;
}

/** The echoed lines, stream by stream (labels as sorted JSON), each stream's in order. */
function byStream(stdout: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const text of stdout.split('\n')) {
    if (text === '') continue;
    const entry = JSON.parse(text) as { labels: Record<string, string>; line: string };
    const key = JSON.stringify(Object.fromEntries(Object.entries(entry.labels).sort(([a], [b]) => a.localeCompare(b))));
    (out[key] ??= []).push(entry.line);
  }
  return out;
}

/** The series the source, the stages and the sinks count, sorted: not the process's, nor times. */
function counted(metrics: string): string[] {
  return metrics
    .split('\n')
    .filter((text) => text !== '' && !text.startsWith('#') && !/^(process_|nodejs_)|_seconds|tcp_connections|pending_bytes/.test(text))
    .sort();
}

/** The run's /metrics text. */
async function metricsOf(run: CommandRun): Promise<string> {
  return (await fetch(`${run.runUrl}/metrics`)).text();
}

/** Lines the run's file sources took over, summed over its series (and so over its shards). */
async function linesRead(run: CommandRun): Promise<number> {
  let sum = 0;
  for (const match of (await metricsOf(run)).matchAll(/^logs_source_file_read_lines_total\{[^}]*\} (\d+)$/gm)) sum += Number(match[1]);
  return sum;
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs `text` until its sources took `lines` lines over, then stops it; the echoed lines and the counted series before the stop. */
async function runUntilRead(text: string, flags: readonly string[], lines: number) {
  const run = await runConfig(text, flags, []);
  let metrics: string;
  try {
    await waitFor(async () => (await linesRead(run)) === lines, `${lines} lines read`);
    metrics = await metricsOf(run);
  } finally {
    expect(await run.stop()).toBe(0);
  }
  return { run, entries: byStream(run.stdout()), metrics: counted(metrics) };
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as unknown;

/** The multiline blocks of file `f`'s lines `from` … `to − 1` (which start a block), as the stage joins them. */
function blocks(f: number, from: number, to: number): string[] {
  const out: string[] = [];
  for (let n = from; n < to; n++) {
    if (n % 3 === 0) out.push(line(f, n));
    else out[out.length - 1] += `\n${line(f, n)}`;
  }
  return out;
}

describe('logs.source.file on the shards', () => {
  it('tails each file on the shard owning its path, and keeps its positions in that shard’s file', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-shards-files-'));
    const positions = join(dir, 'state', 'positions.json');
    const byShard = filesByShard(dir, 'log', 2, 3);
    const files = byShard.flat();
    const total = appendLines(
      files,
      () => 0,
      (f) => 6 + 3 * f,
    );
    const { entries, metrics } = await runUntilRead(config(join(dir, '*.log'), positions, ['multiline']), ['--shards', '2'], total);
    expect(entries).toEqual(
      Object.fromEntries(
        files
          .map((file, f) => [JSON.stringify({ filename: file }), blocks(f, 0, 6 + 3 * f)] as const)
          .sort(([a], [b]) => a.localeCompare(b)),
      ),
    );
    expect(metrics.filter((series) => series.startsWith('logs_source_file_files_active_total'))).toEqual([
      'logs_source_file_files_active_total{component_id="logs.source.file.files",component_path="/"} 6',
    ]);
    expect(readdirSync(join(dir, 'state')).sort()).toEqual(['positions.json.shard-0', 'positions.json.shard-1']);
    expect(readJson(`${positions}.shard-0`)).toEqual(positionsOf(byShard[0]!));
    expect(readJson(`${positions}.shard-1`)).toEqual(positionsOf(byShard[1]!));
  });

  it('reads on in place after a sharded run, and sharded after that, from the merged positions: no line repeated, none skipped', {
    timeout: 90_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-shards-files-'));
    const positions = join(dir, 'state', 'positions.json');
    const byShard = filesByShard(dir, 'log', 2, 3);
    const files = byShard.flat();
    const text = config(join(dir, '*.log'), positions, ['multiline']);
    const expected = (from: number, to: number) =>
      Object.fromEntries(
        files.map((file, f) => [JSON.stringify({ filename: file }), blocks(f, from, to)] as const).sort(([a], [b]) => a.localeCompare(b)),
      );

    const first = appendLines(
      files,
      () => 0,
      () => 6,
    );
    expect((await runUntilRead(text, ['--shards', '2'], first)).entries).toEqual(expected(0, 6));

    const second = appendLines(
      files,
      () => 6,
      () => 12,
    );
    expect((await runUntilRead(text, [], second)).entries).toEqual(expected(6, 12));
    // In place, the configured file holds every file again and the shard files are gone.
    expect(readdirSync(join(dir, 'state'))).toEqual(['positions.json']);
    expect(readJson(positions)).toEqual(positionsOf(files));

    // Three shards now: each file's new owner reads on from where the run in place left it.
    const third = appendLines(
      files,
      () => 12,
      () => 15,
    );
    expect((await runUntilRead(text, ['--shards', '3'], third)).entries).toEqual(expected(12, 15));
    const owning = [0, 1, 2].filter((index) => files.some((file) => fnv1a32(file) % 3 === index));
    // The configured file stays (shards do not remove it); a shard that owns no file writes none.
    expect(readdirSync(join(dir, 'state')).sort()).toEqual(['positions.json', ...owning.map((index) => `positions.json.shard-${index}`)]);
    for (const index of owning)
      expect(readJson(`${positions}.shard-${index}`)).toEqual(positionsOf(files.filter((file) => fnv1a32(file) % 3 === index)));
  });

  it('follows a reload that changes the path glob on every shard', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-shards-files-'));
    const positions = join(dir, 'state', 'positions.json');
    const logs = filesByShard(dir, 'log', 2, 2).flat();
    const txts = filesByShard(dir, 'txt', 2, 2).flat();
    const read = appendLines(
      logs,
      () => 0,
      () => 3,
    );
    appendLines(
      txts,
      () => 0,
      () => 3,
    );
    const run = await runConfig(config(join(dir, '*.log'), positions, ['metrics']), ['--shards', '2'], []);
    try {
      await waitFor(async () => (await linesRead(run)) === read, 'the .log files read');
      writeFileSync(run.file, config(join(dir, '*.txt'), positions, ['metrics']));
      run.signals.emit('SIGHUP');
      await waitFor(() => run.stderr().includes('msg="config reloaded"'), 'the reload');
      await waitFor(async () => (await linesRead(run)) === 2 * read, 'the .txt files read');
      const metrics = counted(await metricsOf(run));
      expect(metrics.filter((series) => series.startsWith('logs_source_file_files_active_total'))).toEqual([
        'logs_source_file_files_active_total{component_id="logs.source.file.files",component_path="/"} 4',
      ]);
      expect(metrics.filter((series) => series.startsWith('logs_source_file_read_lines_total'))).toEqual(
        [...logs, ...txts]
          .map((file) => `logs_source_file_read_lines_total{component_id="logs.source.file.files",component_path="/",path="${file}"} 3`)
          .sort(),
      );
    } finally {
      expect(await run.stop()).toBe(0);
    }
    const entries = byStream(run.stdout());
    expect(Object.keys(entries).sort()).toEqual([...logs, ...txts].map((file) => JSON.stringify({ filename: file })).sort());
    for (const [f, file] of [...logs.entries(), ...txts.entries()])
      expect(entries[JSON.stringify({ filename: file })]).toEqual([0, 1, 2].map((n) => line(f, n)));
  });
});

describe('logs.source.file on the shards, for random stage lists and files', () => {
  it('gives every file the entries, in the order, and the metric values that one thread gives', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...(Object.keys(STAGES) as StageName[])), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 2, maxLength: 6 }),
        async (stages, counts) => {
          const outcome = async (flags: readonly string[]) => {
            const dir = mkdtempSync(join(tmpdir(), 'rivulet-shards-files-'));
            mkdirSync(join(dir, 'logs'));
            const files = counts.map((_, f) => join(dir, 'logs', `app-${f}.log`));
            const total = appendLines(
              files,
              () => 0,
              (f) => counts[f]!,
            );
            const result = await runUntilRead(config(join(dir, 'logs', '*.log'), join(dir, 'positions.json'), stages), flags, total);
            // The paths differ between the two runs' directories; compare them relative to it.
            const relative = (text: string) => text.replaceAll(dir, '<dir>');
            return {
              entries: JSON.parse(relative(JSON.stringify(result.entries))) as unknown,
              metrics: result.metrics.map(relative),
              shardFiles: readdirSync(dir).filter((name) => name.startsWith('positions.json.shard-')).length,
              positionsFile: existsSync(join(dir, 'positions.json')),
            };
          };
          const inPlace = await outcome([]);
          const sharded = await outcome(['--shards', '2']);
          expect(sharded.entries).toEqual(inPlace.entries);
          expect(sharded.metrics).toEqual(inPlace.metrics);
          expect(
            Object.values(inPlace.entries as Record<string, string[]>)
              .flat()
              .join('\n')
              .split('\n'),
          ).toHaveLength(counts.reduce((a, b) => a + b, 0));
          expect([inPlace.positionsFile, inPlace.shardFiles]).toEqual([true, 0]);
          expect(sharded.positionsFile).toBe(false);
        },
      ),
      { numRuns: 3, endOnFailure: true },
    );
  });
});
