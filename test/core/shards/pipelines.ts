/**
 * Random pipelines and pushes for the properties that hold a sharded run to what one thread does:
 * stage lists whose outputs do not depend on the wall clock, eight streams numbering their lines,
 * and the outputs read back stream by stream.
 */
import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { WireStream } from '../../../lib/loki/wire.js';
import { push, runConfig, type CommandRun } from './support.js';

export const API = 'logs.source.api.in';
const BASE_NS = 1_700_000_000_000_000_000n;

/** How many runs each property makes: `FC_NUM_RUNS` for deeper runs. */
export const numRuns = Number(process.env.FC_NUM_RUNS ?? 3);

/** Stages whose outputs do not depend on the wall clock, each as config text (`i`: its place, for unique names). */
const STAGES = {
  logfmt: () => 'stage.logfmt {\n    mapping = { level = "", user = "" }\n  }',
  labels: () => 'stage.labels {\n    values = { level = "" }\n  }',
  multiline: () => 'stage.multiline {\n    firstline     = "^start"\n    max_wait_time = "1h"\n  }',
  metrics: (i: number) =>
    `stage.metrics {\n    metric.counter {\n      name        = "lines_${i}_total"\n      description = "lines"\n      match_all   = true\n      action      = "inc"\n    }\n  }`,
  // A rate so low that no token comes back during the run: the first entries of each app pass.
  limit: () =>
    'stage.limit {\n    rate          = 0.000001\n    burst         = 4\n    by_label_name = "app"\n    drop          = true\n  }',
  drop: () => 'stage.drop {\n    expression = "user=u2"\n  }',
  static_labels: () => 'stage.static_labels {\n    values = { tier = "web" }\n  }',
  label_drop: () => 'stage.label_drop {\n    values = ["env"]\n  }',
  label_keep: () => 'stage.label_keep {\n    values = ["app", "level"]\n  }',
  // Lines share their second three by three: each stream's duplicates are fudged 1 ns apart.
  timestamp: () =>
    'stage.regex {\n    expression = "t=(?P<t>\\\\d+)"\n  }\n  stage.timestamp {\n    source = "t"\n    format = "Unix"\n  }',
  // Blocks in one env only: the others pass by the nested stage.
  match_multiline: () =>
    'stage.match {\n    selector = "{env=\\"e0\\"}"\n    stage.multiline {\n      firstline     = "^start"\n      max_wait_time = "1h"\n    }\n  }',
} as const;

export type StageName = keyof typeof STAGES;
export const STAGE_NAMES = Object.keys(STAGES) as StageName[];

/** A stage list of one to five stages, any of them. */
export const stageList = fc.array(fc.constantFrom(...STAGE_NAMES), { minLength: 1, maxLength: 5 });

/**
 * A stage list that holds a multiline stage two times in three, at a random place: with its long
 * max_wait_time, only a later first line or the stop closes a block.
 */
export const stageListOftenMultiline = fc
  .tuple(stageList, fc.nat(), fc.nat({ max: 2 }))
  .map(([stages, at, without]) =>
    without === 0 || stages.includes('multiline') ? stages : withStage(stages, at % (stages.length + 1), 'multiline'),
  );

/** `stages` with `stage` put in at `at`, or, without one, the stage at `at` taken out. */
export function withStage(stages: readonly StageName[], at: number, stage?: StageName): StageName[] {
  return [...stages.slice(0, at), ...(stage ? [stage] : []), ...stages.slice(stage ? at : at + 1)];
}

/**
 * Whether stopping must flush a block that reaches the echo: a multiline stage with nothing after
 * it that may drop the block (every push's first entries reach it, and its last block stays open).
 */
export function flushesAtStop(stages: readonly StageName[]): boolean {
  const at = stages.indexOf('multiline');
  return at >= 0 && !stages.slice(at).some((name) => name === 'drop' || name === 'limit');
}

export function config(stages: readonly StageName[]): string {
  return pushProcessEcho(stages.map((name, i) => STAGES[name](i)));
}

/** logs.source.api `in` → logs.process `p` with these stage blocks (config text) → logs.echo `out`. */
export function pushProcessEcho(stageBlocks: readonly string[]): string {
  return `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  forward_to = [logs.process.p.receiver]
}

logs.process "p" {
  ${stageBlocks.join('\n  ')}
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`;
}

export const STREAMS = 8;
export const APPS = 4;
/** Eight streams: four apps, each with two envs. */
const streamLabels = (s: number) => `{app="a${s % APPS}", env="e${Math.floor(s / APPS)}"}`;
export const appOf = (stream: number) => stream % APPS;

/** A slice of a push: `count` lines of one stream. */
export interface Slice {
  readonly stream: number;
  readonly count: number;
}

export const slice = fc.record({ stream: fc.integer({ min: 0, max: STREAMS - 1 }), count: fc.integer({ min: 1, max: 6 }) });

/**
 * Pushes as bodies, each a list of slices: every stream numbers its lines on (`n=`), and each
 * line names its stream (`s=`), so an output can be traced to the stream it came from.
 */
export function bodies(pushes: ReadonlyArray<readonly Slice[]>): WireStream[][] {
  const next = new Array<number>(STREAMS).fill(0);
  let at = 0;
  return pushes.map((slices) =>
    slices.map(({ stream, count }) => ({
      labels: streamLabels(stream),
      entries: Array.from({ length: count }, () => {
        const k = next[stream]!++;
        const line = `${k % 3 === 0 ? 'start' : '  cont'} level=${k % 2 ? 'info' : 'warn'} user=u${k % 4} s=${stream} n=${k} t=${1_700_000_000 + Math.floor(k / 3)}`;
        return { timestampNs: BASE_NS + BigInt(at++), line, structuredMetadata: [] };
      }),
    })),
  );
}

/**
 * Groups of pushes sent at once, the groups one after the other. Within a group each app is in
 * one push at most: entries of different apps share no state in any stage above (a limit keys on
 * the app, every other stateful stage on the stream), so what each stream gets is defined
 * whichever push of a group arrives first.
 */
export const pushGroups = fc.array(
  fc
    .record({
      slices: fc.array(slice, { minLength: 1, maxLength: 6 }),
      pushOfApp: fc.array(fc.nat({ max: 2 }), { minLength: APPS, maxLength: APPS }),
    })
    .map(({ slices, pushOfApp }) =>
      [0, 1, 2].map((p) => slices.filter((s) => pushOfApp[appOf(s.stream)] === p)).filter((pushed) => pushed.length > 0),
    ),
  { minLength: 1, maxLength: 4 },
);

/** The bodies of push groups, the streams numbering their lines on across groups. */
export function groupBodies(groups: ReadonlyArray<ReadonlyArray<readonly Slice[]>>): WireStream[][][] {
  const flat = bodies(groups.flat());
  let at = 0;
  return groups.map((group) => group.map(() => flat[at++]!));
}

/**
 * The echoed entries by their labels (sorted JSON) and the stream their (first) line came from,
 * each in order. Two streams whose labels a stage made equal are kept apart: each one's order is
 * defined, the order between them (on two shards, or in two pushes sent at once) is not.
 */
export function byStream(stdout: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const text of stdout.split('\n')) {
    if (text === '') continue;
    const entry = JSON.parse(text) as { labels: Record<string, string>; line: string; timestamp: string };
    const labels = JSON.stringify(Object.fromEntries(Object.entries(entry.labels).sort(([a], [b]) => a.localeCompare(b))));
    const from = / s=(\d+) /.exec(entry.line)?.[1];
    (out[`${labels} s=${from}`] ??= []).push(`${entry.timestamp} ${entry.line}`);
  }
  return out;
}

/** The series the stages and the sinks count, sorted: not the process's, nor times, nor live gauges. */
export function counted(metrics: string): string[] {
  return metrics
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#') && !/^(process_|nodejs_)|_seconds|tcp_connections|pending_bytes/.test(line))
    .sort();
}

/** Sends each group's pushes at once, the groups one after the other; every push must be taken. */
export async function sendGroups(run: CommandRun, groups: readonly WireStream[][][]): Promise<void> {
  const url = run.apiUrls.get(API)!;
  for (const group of groups) {
    const answers = await Promise.all(group.map((streams) => push(url, streams)));
    expect(answers.map((a) => a.status)).toEqual(group.map(() => 204));
  }
}

/** What a run gave: the echoed entries by stream, those echoed only once stopping, and the counted series. */
export interface Outcome {
  readonly entries: Record<string, string[]>;
  /** The entries echoed after the last push was answered: what stopping flushed. */
  readonly flushed: Record<string, string[]>;
  readonly metrics: string[];
}

/** Starts `stages` with `flags`, lets `work` push (and reload), reads /metrics, then stops the run. */
export async function outcome(
  stages: readonly StageName[],
  flags: readonly string[],
  work: (run: CommandRun) => Promise<void>,
): Promise<Outcome> {
  const run = await runConfig(config(stages), flags, [API]);
  let metrics: string;
  let beforeStop: string;
  try {
    await work(run);
    metrics = await (await fetch(`${run.runUrl}/metrics`)).text();
    beforeStop = run.stdout();
  } finally {
    expect(await run.stop()).toBe(0);
  }
  const all = run.stdout();
  return { entries: byStream(all), flushed: byStream(all.slice(beforeStop.length)), metrics: counted(metrics) };
}

/**
 * Asserts that a sharded run gave what the run in place gave: every stream's entries in order, the
 * counted series and what stopping flushed; where `stages` hold a block open until the stop,
 * that the run in place did flush one (so the comparison of flushes is not of nothing).
 */
export function expectSameAsInPlace(sharded: Outcome, inPlace: Outcome, stages?: readonly StageName[]): void {
  expect(sharded.entries).toEqual(inPlace.entries);
  expect(sharded.metrics).toEqual(inPlace.metrics);
  if (stages && flushesAtStop(stages)) expect(Object.keys(inPlace.flushed)).not.toEqual([]);
  expect(sharded.flushed).toEqual(inPlace.flushed);
}

/** Rewrites the run's config file with `stages` and reloads it by SIGHUP, resolved once reloaded. */
export async function reload(run: CommandRun, stages: readonly StageName[]): Promise<void> {
  const done = (run.stderr().match(/msg="config reload/g) ?? []).length;
  writeFileSync(run.file, config(stages));
  run.signals.emit('SIGHUP');
  const until = Date.now() + 20_000;
  while ((run.stderr().match(/msg="config reload/g) ?? []).length === done) {
    if (Date.now() > until) throw new Error('timed out waiting for the reload');
    await new Promise((r) => setTimeout(r, 10));
  }
  expect(run.stderr()).not.toContain('msg="config reload failed"');
}
