import { createReadStream, writeFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { ManualClock, systemClock, type Clock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { type EntryOutputFormat, formatEntry, parseInputEntry } from '../core/entry-json.js';
import { configErrorsOf } from '../lib/config/errors.js';
import { loadStageList, startProcessRun } from '../core/process.js';
import { parseRFC3339 } from '../lib/time/rfc3339.js';
import { stageList, type StageList } from '../core/stage-list.js';
import { TraceRecorder } from '../core/trace-recorder.js';
import { describeTraces } from './inspect.js';
import { parseArgs, UsageError } from './args.js';
import type { Io } from './io.js';
import { lineBatches } from './lines.js';
import { loadFlagStageModules, readConfigWithStageModules, STAGES_FLAG } from './stage-modules.js';

/**
 * `rivulet process --config FILE [--input jsonl|text] [--output json|entry|line] [--inspect]
 * [--metrics OUT] [--now TIME] [--stages PATH]...`: runs stdin through a stage list and prints every
 * forwarded entry, one per line: the full JSON form (`json`, the default), the JSON form without
 * extracted values (`entry`) or the line alone (`line`). Exit 2 with `FILE:LINE:COL: message` lines for an invalid config (or a stage module that
 * does not load); 1 when every input line was malformed; 0 otherwise.
 */
const OUTPUT_FORMATS: readonly EntryOutputFormat[] = ['json', 'entry', 'line'];

export async function processCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, ['inspect', 'quiet'], ['config', 'input', 'output', 'metrics', 'now'], [STAGES_FLAG]);
  const file = args.flags.get('config');
  if (typeof file !== 'string') throw new UsageError('process needs --config FILE');
  const input = (args.flags.get('input') as string | undefined) ?? 'jsonl';
  if (input !== 'jsonl' && input !== 'text') throw new UsageError(`--input must be jsonl or text, got ${JSON.stringify(input)}`);
  const output = (args.flags.get('output') as string | undefined) ?? 'json';
  if (!OUTPUT_FORMATS.includes(output as EntryOutputFormat))
    throw new UsageError(`--output must be json, entry or line, got ${JSON.stringify(output)}`);
  const format = output as EntryOutputFormat;
  const now = args.flags.get('now') as string | undefined;

  if (!(await loadFlagStageModules(args, io))) return 2;
  const text = await readConfigWithStageModules(file, io);
  if (text === undefined) return 2;
  let specs;
  try {
    specs = loadStageList(text, file);
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return 2;
  }

  // With --now the stages see a virtual clock that starts at TIME and only moves when timers run
  // at end of input, so a replay gives the same output every time.
  let clock: Clock;
  let manual: ManualClock | undefined;
  if (now !== undefined) {
    let startNs: bigint;
    try {
      startNs = parseRFC3339(now);
    } catch (err) {
      throw new UsageError(`--now: ${(err as Error).message}`);
    }
    manual = new ManualClock(startNs);
    clock = manual;
  } else {
    clock = systemClock();
  }

  const registry = new Registry();
  let out = '';
  const flushOut = () => {
    if (out.length > 0) io.stdout.write(out);
    out = '';
  };
  let entryNumber = 0;
  let forwarded = 0;
  let malformed = 0;
  const startedAt = performance.now();
  // On a terminal, progress on stderr once a second and a summary at the end (not with --quiet).
  const terminal = (io.stderr as Partial<NodeJS.WriteStream>).isTTY === true && !args.flags.has('quiet');
  const progress = terminal
    ? setInterval(() => io.stderr.write(`\r\x1b[K${progressLine(entryNumber, forwarded, startedAt)}`), 1000).unref()
    : undefined;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  // --inspect records every entry's story (the playground's traces) and prints them at the end.
  let inspect: { stages: StageList; recorder: TraceRecorder } | undefined;
  let run;
  try {
    if (args.flags.has('inspect')) {
      const stages = stageList(specs);
      const startNs = clock.nowNs();
      inspect = { stages, recorder: new TraceRecorder(stages, () => Number((clock.nowNs() - startNs) / 1_000_000n)) };
    }
    run = startProcessRun(specs, {
      clock,
      registry,
      trace: inspect?.recorder,
      onEntry: (entry) => {
        inspect?.recorder.forwarded(entry, forwarded);
        forwarded++;
        out += `${formatEntry(entry, format)}\n`;
        if (out.length > 1 << 16) flushOut();
      },
      onComplete: () => finished(),
    });
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return 2;
  }
  let lineNumber = 0;
  for await (const lines of lineBatches(readable(io.stdin))) {
    for (const line of lines) {
      lineNumber++;
      if (input === 'jsonl' && line.trim() === '') continue;
      let entry: Entry;
      try {
        entry =
          input === 'text'
            ? { labels: {}, line, timestamp: clock.nowNs(), structuredMetadata: [], extracted: {} }
            : parseInputEntry(line, clock);
      } catch (err) {
        io.stderr.write(`stdin:${lineNumber}: ${(err as Error).message}\n`);
        malformed++;
        continue;
      }
      entryNumber++;
      inspect?.recorder.startTick({ kind: 'input', input: entryNumber - 1 });
      inspect?.recorder.beginInput(entry, entryNumber - 1, lineNumber);
      run.push(entry);
      // Whatever happens before the next entry (on the real clock) is a timer's doing.
      inspect?.recorder.startTick({ kind: 'timer' });
    }
  }
  // End of input: stages flush (multiline blocks, held limit entries). On the virtual clock the
  // remaining timers run at once; on the real clock we wait for them.
  inspect?.recorder.startTick({ kind: 'end' });
  run.end();
  manual?.runAll();
  await done;
  flushOut();
  const metricsOut = args.flags.get('metrics');
  if (typeof metricsOut === 'string') writeFileSync(metricsOut, await registry.metrics());
  run.dispose();
  clearInterval(progress);
  if (inspect) {
    const colour = (io.stderr as Partial<NodeJS.WriteStream>).isTTY === true && !process.env.NO_COLOR;
    const { traces } = inspect.recorder.finish();
    io.stderr.write(`${terminal ? '\r\x1b[K' : ''}${describeTraces(traces, inspect.stages, { colour })}`);
  }
  if (terminal) io.stderr.write(`\r\x1b[K${await summaryLine(entryNumber, forwarded, malformed, startedAt, registry)}\n`);
  if (malformed > 0 && entryNumber === 0) {
    const hint = input === 'jsonl' ? '; plain log lines need --input text' : '';
    io.stderr.write(`rivulet process: every input line was malformed (${malformed})${hint}\n`);
    return 1;
  }
  return 0;
}

/**
 * The process's own standard input is read straight from its descriptor in 1 MiB chunks (Node's
 * stdin stream reads 64 KiB at a time); other streams (tests) as they are.
 */
function readable(stdin: NodeJS.ReadableStream): NodeJS.ReadableStream {
  if (stdin !== process.stdin) return stdin;
  return createReadStream('', { fd: 0, highWaterMark: 1 << 20, autoClose: false });
}

function rate(count: number, startedAt: number): string {
  const seconds = (performance.now() - startedAt) / 1000;
  return `${Math.round(count / Math.max(seconds, 1e-3)).toLocaleString('en-US')} entries/s`;
}

function progressLine(read: number, forwarded: number, startedAt: number): string {
  return `rivulet process: ${read.toLocaleString('en-US')} in, ${forwarded.toLocaleString('en-US')} out, ${rate(read, startedAt)}`;
}

/** `N in, M out, D dropped (reason: n, …), K malformed, T s (R entries/s)`. */
async function summaryLine(read: number, forwarded: number, malformed: number, startedAt: number, registry: Registry): Promise<string> {
  const drops = (await registry.getSingleMetric('logs_process_dropped_lines_total')?.get())?.values.filter((v) => v.value > 0) ?? [];
  const dropped = drops.reduce((sum, v) => sum + v.value, 0);
  const reasons = drops.map((v) => `${v.labels.reason}: ${v.value.toLocaleString('en-US')}`).join(', ');
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(2);
  return (
    `rivulet process: ${read.toLocaleString('en-US')} in, ${forwarded.toLocaleString('en-US')} out, ` +
    `${dropped.toLocaleString('en-US')} dropped${reasons ? ` (${reasons})` : ''}, ${malformed.toLocaleString('en-US')} malformed, ` +
    `${seconds} s (${rate(read, startedAt)})`
  );
}
