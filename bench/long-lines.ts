/**
 * One long line through logs.source.file's tailer, in a process of its own: prints the CPU seconds
 * (user + sys), the wall seconds and the peak RSS it took to read it. `rivulet process` is measured
 * from the outside (see the docs): `/usr/bin/time -v rivulet process ... < FILE`.
 *
 *   tsx bench/long-lines.ts MiB [max_line_size bytes [truncate]]
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../core/clock.js';
import { Positions } from '../receivers/file/positions.js';
import { FileIdentities, FileTailer } from '../receivers/file/tailer.js';

const mib = Number(process.argv[2] ?? 100);
const maxLineSize = Number(process.argv[3] ?? 0);
const truncate = process.argv[4] === 'truncate';
const dir = mkdtempSync(join(tmpdir(), 'rivulet-long-line-'));
const path = join(dir, 'long.log');
// Written a MiB at a time, so the writing does not raise the peak RSS measured.
writeFileSync(path, '');
const mibOfX = Buffer.alloc(1 << 20, 'x');
for (let i = 0; i < mib; i++) appendFileSync(path, mibOfX);
appendFileSync(path, '\nend\n');

let lengths: number[] = [];
const tailer = new FileTailer({
  path,
  labels: { filename: path },
  positions: new Positions(''),
  identities: new FileIdentities(),
  clock: systemClock(),
  send: async (entries) => {
    lengths = lengths.concat(entries.map((e) => e.line.length));
  },
  tailFromEnd: false,
  log: () => {},
  signal: new AbortController().signal,
  maxLineSize,
  maxLineSizeTruncate: truncate,
});

const rssBeforeMib = Math.round(process.memoryUsage().rss / (1 << 20));
const before = process.resourceUsage();
const started = performance.now();
await tailer.poll();
const wallS = (performance.now() - started) / 1000;
const after = process.resourceUsage();
await tailer.close();
rmSync(dir, { recursive: true, force: true });
const cpuS = (after.userCPUTime - before.userCPUTime + after.systemCPUTime - before.systemCPUTime) / 1e6;
console.log(
  JSON.stringify({
    line_mib: mib,
    lines: lengths,
    cpu_s: +cpuS.toFixed(2),
    wall_s: +wallS.toFixed(2),
    rss_before_mib: rssBeforeMib,
    peak_rss_mib: Math.round(after.maxRSS / 1024),
  }),
);
