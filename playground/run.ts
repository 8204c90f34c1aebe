import { Registry } from 'prom-client';
import { parseInputEntry } from '../core/entry-json.js';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { ConfigError, ConfigErrors } from '../lib/config/errors.js';
import { loadStageList, standaloneScope, startProcessRun, type ProcessRun } from '../core/process.js';
import { sandboxScope, type Sandbox } from '../core/sandbox.js';
import type { StageSpec } from '../core/stage.js';
import { formatRFC3339Nano, parseRFC3339 } from '../lib/time/rfc3339.js';
import type { ConfigProblem, EntryJson, InputProblem, RunRequest, RunResult } from './api.js';
import { stageList } from '../core/stage-list.js';
import { toJson, TraceRecorder } from '../core/inspect/trace-recorder.js';

/** The file name config errors are reported against. */
export const CONFIG_FILE = 'playground.alloy';

/**
 * Entries run per request. Every step of every entry is traced with full before/after copies, so
 * the answer grows with entries × stages; a playground sample is tens of lines, not a log file.
 */
export const MAX_ENTRIES = 1000;

/** A request the server answers with 400: the message says which field is wrong. */
export class RunRequestError extends Error {}

/** What a playground config may reach on the host. */
export interface HostAccess {
  /**
   * Lets configs read environment variables and files and resolve host names, as the CLI's do.
   * Off by default: a playground config may come from anyone's share link.
   */
  readonly allowHostAccess?: boolean;
  /** Files configs may read even so: the sample GeoIP database. */
  readonly readableFiles?: readonly string[];
}

/** The sandbox of a run with `access`, or undefined when it may reach the host. */
export function sandboxOf(access: HostAccess): Sandbox | undefined {
  if (access.allowHostAccess) return undefined;
  return { readableFiles: access.readableFiles ?? [], hint: 'start the playground with --allow-host-access to allow it' };
}

/** One entry to push: where it came from and when it arrives on the virtual clock. */
interface PendingInput {
  readonly line: number;
  readonly arrivalMs: number;
  readonly read: (clock: ManualClock) => Entry;
}

/**
 * Runs sample input through a config exactly as `rivulet process --now NOW` does (same loader,
 * same `startProcessRun`, same input parsing, same end-of-input flush), on a virtual clock that
 * also moves to each entry's arrival offset first, so idle flushes and rate limits play out.
 * With no arrival offsets the forwarded entries equal the CLI's output line for line.
 */
export async function runPlayground(request: RunRequest, access: HostAccess = {}): Promise<RunResult> {
  const startNs = startOf(request.now);
  const startedAt = formatRFC3339Nano(startNs);
  const empty = (errors: ConfigProblem[], inputErrors: InputProblem[] = []): RunResult => ({
    entries: [],
    outputs: [],
    traces: [],
    flushes: [],
    metrics: '',
    stages: [],
    errors,
    inputErrors,
    startedAt,
    endMs: 0,
  });

  const sandbox = sandboxOf(access);
  let specs: StageSpec[];
  try {
    specs = loadStageList(request.config, CONFIG_FILE, sandbox ? sandboxScope() : standaloneScope());
  } catch (err) {
    return empty(configProblems(err));
  }
  const { inputs, problems } = readInputs(request);

  const clock = new ManualClock(startNs);
  const registry = new Registry();
  let stages;
  try {
    stages = stageList(specs, sandbox);
  } catch (err) {
    return empty(configProblems(err), problems);
  }
  const recorder = new TraceRecorder(stages, () => clock.now());
  const entries: EntryJson[] = [];
  const outputs: { trace: number; atMs: number }[] = [];
  let completed = false;
  let run: ProcessRun;
  try {
    run = startProcessRun(specs, {
      clock,
      registry,
      trace: recorder,
      random: request.seed === undefined ? undefined : seededRandom(request.seed),
      sandbox,
      onEntry: (entry) => {
        const trace = recorder.forwarded(entry, entries.length);
        entries.push(toJson(entry));
        outputs.push({ trace, atMs: clock.now() });
      },
      onComplete: () => (completed = true),
    });
  } catch (err) {
    return empty(configProblems(err), problems);
  }

  let metrics: string;
  try {
    inputs.forEach((input, index) => {
      recorder.startTick({ kind: 'timer' });
      clock.advanceTo(input.arrivalMs);
      recorder.startTick({ kind: 'input', input: index });
      const entry = input.read(clock);
      recorder.beginInput(entry, index, input.line);
      run.push(entry);
    });
    // As the CLI does at end of input: stages flush, then every timer still pending runs.
    recorder.startTick({ kind: 'end' });
    run.end();
    clock.runAll();
    // Scraped before disposing: disposing a stage.metrics stage removes its series.
    metrics = await registry.metrics();
  } finally {
    run.dispose();
  }
  const { traces, flushes } = recorder.finish();
  return {
    entries,
    outputs,
    traces,
    flushes,
    metrics,
    stages: stages.infos,
    errors: completed ? [] : [{ line: 0, col: 0, message: 'the pipeline did not complete at end of input' }],
    inputErrors: problems,
    startedAt,
    endMs: clock.now(),
  };
}

/** The answer for a run that was stopped before it finished: no output, `message` as its one error. */
export function stoppedRun(request: RunRequest, message: string): RunResult {
  let startNs: bigint;
  try {
    startNs = startOf(request.now);
  } catch {
    startNs = startOf(undefined);
  }
  return {
    entries: [],
    outputs: [],
    traces: [],
    flushes: [],
    metrics: '',
    stages: [],
    errors: [{ line: 0, col: 0, message }],
    inputErrors: [],
    startedAt: formatRFC3339Nano(startNs),
    endMs: 0,
  };
}

function startOf(now: string | undefined): bigint {
  if (now === undefined || now === '') return BigInt(Date.now()) * 1_000_000n;
  try {
    return parseRFC3339(now);
  } catch (err) {
    throw new RunRequestError(`now: ${(err as Error).message}`);
  }
}

/**
 * Splits the input into lines as the CLI's line reader does (`\n`, `\r\n` or `\r`; no empty last
 * line after a final newline). JSONL skips blank lines; text keeps them as empty entries.
 * Entries that cannot be read are reported and skipped, like the CLI's `stdin:N:` warnings.
 */
export function readInputs(request: RunRequest): { inputs: PendingInput[]; problems: InputProblem[] } {
  const lines = request.input.split(/\r\n|\n|\r/);
  if (lines[lines.length - 1] === '') lines.pop();
  const inputs: PendingInput[] = [];
  const problems: InputProblem[] = [];
  let lastArrival = 0;
  lines.forEach((text, i) => {
    const line = i + 1;
    if (request.inputFormat === 'jsonl' && text.trim() === '') return;
    if (inputs.length === MAX_ENTRIES) {
      if (!problems.some((p) => p.message.startsWith('only the first')))
        problems.push({ line, message: `only the first ${MAX_ENTRIES} entries are run; this one and the rest are skipped` });
      return;
    }
    let arrival: unknown = request.arrivals?.[inputs.length];
    if (request.inputFormat === 'jsonl') {
      try {
        parseInputEntry(text, new ManualClock());
      } catch (err) {
        problems.push({ line, message: (err as Error).message });
        return;
      }
      arrival ??= (JSON.parse(text) as Record<string, unknown>).arrival_ms;
    }
    if (arrival !== undefined && arrival !== null && (typeof arrival !== 'number' || !Number.isFinite(arrival) || arrival < 0)) {
      problems.push({ line, message: '"arrival_ms" must be a non-negative number of milliseconds' });
      return;
    }
    // Time never runs backwards: an earlier offset arrives together with the entry before it.
    lastArrival = Math.max(lastArrival, (arrival as number | null | undefined) ?? lastArrival);
    const read =
      request.inputFormat === 'text'
        ? (clock: ManualClock): Entry => ({ labels: {}, line: text, timestamp: clock.nowNs(), structuredMetadata: [], extracted: {} })
        : (clock: ManualClock): Entry => parseInputEntry(text, clock);
    inputs.push({ line, arrivalMs: lastArrival, read });
  });
  return { inputs, problems };
}

/** Config errors as the editor marks them. */
export function configProblems(err: unknown): ConfigProblem[] {
  if (err instanceof ConfigErrors) return err.errors.map(problemOf);
  if (err instanceof ConfigError) return [problemOf(err)];
  return [{ line: 0, col: 0, message: err instanceof Error ? err.message : String(err) }];
}

function problemOf(err: ConfigError): ConfigProblem {
  const path = err.blockPath.length > 0 ? `${err.blockPath.join(' > ')}: ` : '';
  return { line: err.pos?.line ?? 0, col: err.pos?.col ?? 0, message: path + err.reason };
}

/** A small seeded PRNG (mulberry32), so a shared sampling run gives the same picks. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Only the config errors, without running: for the editor's live markers. */
export function checkConfig(config: string, access: HostAccess = {}): ConfigProblem[] {
  const sandbox = sandboxOf(access);
  try {
    const specs = loadStageList(config, CONFIG_FILE, sandbox ? sandboxScope() : standaloneScope());
    const built = startProcessRun(specs, { clock: new ManualClock(), registry: new Registry(), onEntry: () => {}, sandbox });
    built.dispose();
    return [];
  } catch (err) {
    return configProblems(err);
  }
}
