import { Registry } from 'prom-client';
import { ManualClock, systemClock, type Clock } from '../core/clock.js';
import type { EntryOutputFormat } from '../core/entry-json.js';
import { componentRegistry, exposeMetrics } from '../core/metrics.js';
import { planPartitions } from '../core/threads/partitioning.js';
import { configErrorsOf } from '../lib/config/errors.js';
import { loadProcessConfig, startProcessRun } from '../core/process.js';
import { parseRFC3339 } from '../lib/time/rfc3339.js';
import { stageList, type StageList } from '../core/stage-list.js';
import { TraceRecorder } from '../core/inspect/trace-recorder.js';
import { describeTraces } from './inspect.js';
import { parseArgs, UsageError } from './args.js';
import { convertHint } from './convert/reference-names.js';
import { type Io, writeTextFile } from './io.js';
import { workerCount } from './pipeline-workers.js';
import { inputEntries } from './process-input.js';
import { ProcessReport } from './process-report.js';
import { processOnWorkers } from './process-workers.js';
import { loadFlagStageModules, readConfigWithStageModules, STAGES_FLAG } from './stage-modules.js';

/**
 * `rivulet process --config FILE [--input jsonl|text] [--output json|entry|line] [--inspect]
 * [--metrics OUT] [--now TIME] [--stages PATH]...`: runs stdin through a stage list and prints every
 * forwarded entry, one per line: the full JSON form (`json`, the default), the JSON form without
 * extracted values (`entry`) or the line alone (`line`). `--metrics OUT` writes the run's series; those of a logs.process block carry its component_id and component_path, as `rivulet run` serves them. Exit 2 with `FILE:LINE:COL: message` lines for an invalid config (or a stage module that
 * does not load); 1 when every input line was malformed; 0 otherwise.
 */
const OUTPUT_FORMATS: readonly EntryOutputFormat[] = ['json', 'entry', 'line'];

/** Entries read ahead of the one being sent, at most (on one thread). */
const ENTRIES_PER_BATCH = 256;

export async function processCommand(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, ['inspect', 'quiet'], ['config', 'input', 'output', 'metrics', 'now', 'workers'], [STAGES_FLAG]);
  const file = args.flags.get('config');
  if (typeof file !== 'string') throw new UsageError('process needs --config FILE');
  const input = (args.flags.get('input') as string | undefined) ?? 'jsonl';
  if (input !== 'jsonl' && input !== 'text') throw new UsageError(`--input must be jsonl or text, got ${JSON.stringify(input)}`);
  const output = (args.flags.get('output') as string | undefined) ?? 'json';
  if (!OUTPUT_FORMATS.includes(output as EntryOutputFormat))
    throw new UsageError(`--output must be json, entry or line, got ${JSON.stringify(output)}`);
  const format = output as EntryOutputFormat;
  const now = args.flags.get('now') as string | undefined;
  const workers = workerCount(args.flags.get('workers'), 1);
  if (workers > 1 && args.flags.has('inspect')) throw new UsageError('--inspect follows every entry on one thread; leave out --workers');

  if (!(await loadFlagStageModules(args, io))) return 2;
  const text = await readConfigWithStageModules(file, io);
  if (text === undefined) return 2;
  let specs;
  let componentId: string | undefined;
  try {
    ({ stages: specs, componentId } = loadProcessConfig(text, file));
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    io.stderr.write(convertHint(text, file) ?? '');
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
  // The stages of a logs.process block count as that component does in `rivulet run`, labelled
  // with its component_id and component_path; a bare stage list's series keep no such labels.
  const runRegistry =
    componentId === undefined ? registry : componentRegistry(registry, { component_id: componentId, component_path: '/' }).registry;
  const report = new ProcessReport(io, args.flags.has('quiet'));
  const metricsOut = args.flags.get('metrics') as string | undefined;
  if (workers > 1) {
    const plan = planPartitions(specs);
    if (plan.kind !== 'single')
      return processOnWorkers({ io, text, file, plan, workers, format, input, clock, manual, registry, runRegistry, report, metricsOut });
    io.stderr.write(`rivulet process: running on one thread: ${plan.reason}\n`);
  }

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
      registry: runRegistry,
      trace: inspect?.recorder,
      onEntry: (entry) => {
        inspect?.recorder.forwarded(entry, report.forwarded);
        report.outputEntry(entry, format);
      },
      onComplete: () => finished(),
    });
  } catch (err) {
    for (const e of configErrorsOf(err)) io.stderr.write(e.message + '\n');
    return 2;
  }
  // Small batches: the entries of a batch are made before the first is sent, and every garbage
  // collection until the batch is done copies the ones still held.
  for await (const { entries, lineNumbers } of inputEntries(io.stdin, input, clock, report.malformedLine, ENTRIES_PER_BATCH)) {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const index = report.read++;
      inspect?.recorder.startTick({ kind: 'input', input: index });
      inspect?.recorder.beginInput(entry, index, lineNumbers[i]!);
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
  report.flush();
  if (metricsOut !== undefined) writeTextFile(metricsOut, await exposeMetrics(registry));
  run.dispose();
  if (inspect) {
    const colour = (io.stderr as Partial<NodeJS.WriteStream>).isTTY === true && !process.env.NO_COLOR;
    const { traces } = inspect.recorder.finish();
    io.stderr.write(`${report.terminal ? '\r\x1b[K' : ''}${describeTraces(traces, inspect.stages, { colour })}`);
  }
  return report.finish([await runRegistry.getMetricsAsJSON()], input);
}
