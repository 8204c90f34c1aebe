/**
 * One long line read whole by logs.source.file's tailer, beside a plain reader of the same file
 * (256 KiB chunks, one search for the break per chunk, one join): the least a reader that hands the
 * line on as text can do. Each side runs in a process of its own, so its peak RSS is the line's.
 * `BENCH_LONG_LINE_MIB` sets the line's size (default 100).
 *
 * `rivulet process` is measured from the outside: `/usr/bin/time -v rivulet process … < FILE`.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../core/clock.js';
import { Positions } from '../receivers/file/positions.js';
import { FileIdentities, FileTailer } from '../receivers/file/tailer.js';
import { compared, measured, peakRssMiB } from './harness.js';
import type { BenchRow } from './types.js';

/** Set in the child processes: which reader to run, on which file. */
const CHILD = 'RIVULET_BENCH_LONG_LINE';

interface ChildFigures {
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
  readonly peakRssMiB: number;
  readonly lineLength: number;
}

export async function benchLongLines(): Promise<BenchRow[]> {
  const mib = Number(process.env.BENCH_LONG_LINE_MIB ?? 100);
  const dir = mkdtempSync(join(tmpdir(), 'rivulet-long-line-'));
  const path = join(dir, 'long.log');
  try {
    // Written a MiB at a time: this process's memory is not what is measured, but it stays small.
    writeFileSync(path, '');
    const mibOfX = Buffer.alloc(1 << 20, 'x');
    for (let i = 0; i < mib; i++) appendFileSync(path, mibOfX);
    appendFileSync(path, '\nend\n');
    const tailer = runChild('tailer', path);
    const plain = runChild('plain', path);
    if (tailer.lineLength !== mib << 20 || plain.lineLength !== mib << 20) throw new Error('a reader did not read the whole line');
    const name = `logs.source.file tailer, one ${mib} MiB line`;
    const baseline = 'plain chunked read and one join';
    return [
      compared(name, { cpu: tailer.cpuSeconds, wall: tailer.wallSeconds }, 's', baseline, {
        cpu: plain.cpuSeconds,
        wall: plain.wallSeconds,
      }),
      compared(`${name}: peak RSS`, tailer.peakRssMiB, 'MiB', baseline, plain.peakRssMiB),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runChild(reader: 'tailer' | 'plain', path: string): ChildFigures {
  const run = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, [CHILD]: `${reader}:${path}` },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (run.status !== 0) throw new Error(`the ${reader} reader exited with ${run.status}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ChildFigures;
}

async function readWithTailer(path: string): Promise<number> {
  let longest = 0;
  const tailer = new FileTailer({
    path,
    labels: { filename: path },
    positions: new Positions(''),
    identities: new FileIdentities(),
    clock: systemClock(),
    send: async (entries) => {
      for (const e of entries) longest = Math.max(longest, e.line.length);
    },
    tailFromEnd: false,
    log: () => {},
    signal: new AbortController().signal,
    maxLineSize: 0,
    maxLineSizeTruncate: false,
  });
  await tailer.poll();
  await tailer.close();
  return longest;
}

async function readPlainly(path: string): Promise<number> {
  let longest = 0;
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, from)) {
      pending.push(chunk.subarray(from, at));
      longest = Math.max(longest, Buffer.concat(pending).toString('utf8').length);
      pending = [];
      from = at + 1;
    }
    if (from < chunk.length) pending.push(chunk.subarray(from));
  }
  return longest;
}

const task = process.env[CHILD];
if (task !== undefined) {
  const split = task.indexOf(':');
  const reader = task.slice(0, split);
  const path = task.slice(split + 1);
  let lineLength = 0;
  const { cpuSeconds, wallSeconds } = await measured(async () => {
    lineLength = reader === 'tailer' ? await readWithTailer(path) : await readPlainly(path);
  });
  const figures: ChildFigures = { cpuSeconds, wallSeconds, peakRssMiB: Math.round(peakRssMiB()), lineLength };
  console.log(JSON.stringify(figures));
}
