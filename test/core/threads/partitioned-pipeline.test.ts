import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import type { Entry } from '../../../core/entry.js';
import { formatEntry } from '../../../core/entry-json.js';
import { addMetricsSource, exposeMetrics } from '../../../core/metrics.js';
import { PartitionedPipeline } from '../../../core/threads/partitioned-pipeline.js';
import { planPartitions } from '../../../core/threads/partitioning.js';
import { loadStageList, startProcessRun } from '../../../core/process.js';
import { builtPipelineWorker } from '../../support/pipeline-worker.js';
import '../../../operators/index.js';

// Each run starts worker threads, so runs are fewer than for pure functions.
const numRuns = Number(process.env.FC_NUM_RUNS_THREADS ?? 10);
const START_NS = 1_700_000_000_000_000_000n;

const COUNTER = `stage.metrics {
  metric.counter {
    name        = "lines_total"
    description = "lines"
    match_all   = true
    action      = "inc"
  }
}
`;

/** Stage lists: stateless ones, and one for every kind of state a stage keeps. */
const PIPELINES: Record<string, string> = {
  stateless: `stage.json {
  expressions = { level = "" }
}
stage.labels {
  values = { level = "" }
}
stage.drop {
  source = "level"
  value  = "debug"
}
stage.template {
  source   = "n"
  template = "{{ .Entry }}"
}
`,
  multiline: `stage.multiline {
  firstline = "^start"
}
${COUNTER}`,
  'cri and multiline': `stage.cri { }
stage.multiline {
  firstline = "^start"
}
`,
  'limit by label': `stage.limit {
  rate          = 1
  burst         = 2
  drop          = true
  by_label_name = "app"
}
${COUNTER}`,
  'timestamp fudge and label_drop': `stage.regex {
  expression = "^(?P<ts>\\\\d+) "
}
stage.timestamp {
  source = "ts"
  format = "Unix"
}
stage.label_drop {
  values = ["pod"]
}
${COUNTER}`,
  'match with nested multiline': `stage.match {
  selector = "{app=\\"a0\\"}"
  stage.multiline {
    firstline = "^start"
  }
}
`,
};

const lineArb = fc.constantFrom(
  'start one',
  'more',
  '{"level":"debug"}',
  '{"level":"info"}',
  '2024-05-01T10:00:00.000000001Z stdout P start part',
  '2024-05-01T10:00:00.000000002Z stdout F tail',
  '2024-05-01T10:00:00.000000003Z stderr F start whole',
  '1700000000 start stamped',
  'nonsense 1',
);

/** Entries over six streams, each carrying its stream and its place in it as metadata. */
const inputArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), lineArb), { minLength: 1, maxLength: 60 }).map((items) => {
  const seen = [0, 0, 0, 0, 0, 0];
  return items.map(
    ([stream, line], i): Entry => ({
      labels: { app: `a${stream % 2}`, pod: `p${stream}` },
      line,
      timestamp: START_NS + BigInt(i),
      structuredMetadata: [{ name: 'src', value: `s${stream}.${seen[stream]!++}` }],
      extracted: {},
    }),
  );
});

async function oneThread(config: string, entries: readonly Entry[]): Promise<{ lines: string[]; metrics: string }> {
  const clock = new ManualClock(START_NS);
  const registry = new Registry();
  const lines: string[] = [];
  const run = startProcessRun(loadStageList(config, 'p.alloy'), { clock, registry, onEntry: (e) => lines.push(formatEntry(e, 'json')) });
  for (const e of entries) run.push(e);
  run.end();
  clock.runAll();
  // Read before dispose, which takes the stages' series away.
  const metrics = await exposeMetrics(registry);
  run.dispose();
  return { lines, metrics };
}

async function onThreads(config: string, entries: readonly Entry[], batchSizes: readonly number[], workers: number) {
  const pool = new PartitionedPipeline({
    worker: builtPipelineWorker(),
    workers,
    plan: planPartitions(loadStageList(config, 'p.alloy')),
    setup: { stagesText: config, file: 'p.alloy', output: 'json', virtualStartNs: String(START_NS) },
    onEmit: () => {
      throw new Error('no timer runs before the end on a virtual clock');
    },
    onFailure: (err) => {
      throw err;
    },
  });
  try {
    await pool.ready();
    const answers: Array<Promise<unknown[]>> = [];
    let at = 0;
    for (let b = 0; at < entries.length; b++) {
      const size = batchSizes[b % batchSizes.length]!;
      answers.push(pool.process(entries.slice(at, at + size)).outputs);
      at += size;
    }
    const lines = (await Promise.all(answers)).flat() as string[];
    lines.push(...((await pool.end()) as string[]));
    const registry = new Registry();
    const families = await pool.metrics();
    addMetricsSource(registry, async () => families);
    return { lines, metrics: await exposeMetrics(registry) };
  } finally {
    await pool.terminate();
  }
}

/** Output lines per source stream, by the `src` metadata each output kept from its first input. */
function byStream(lines: readonly string[]): Map<string, string[]> {
  const streams = new Map<string, string[]>();
  for (const line of lines) {
    const src = (JSON.parse(line) as { structured_metadata: { src: string } }).structured_metadata.src.split('.')[0]!;
    streams.set(src, [...(streams.get(src) ?? []), line]);
  }
  return streams;
}

const sortedLines = (text: string) => text.split('\n').filter(Boolean).sort();

describe('partitioned pipeline', () => {
  for (const [name, config] of Object.entries(PIPELINES)) {
    it(`gives what one thread gives, stream by stream, and the same metrics: ${name}`, async () => {
      await fc.assert(
        fc.asyncProperty(
          inputArb,
          fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 4 }),
          fc.integer({ min: 2, max: 3 }),
          async (entries, batchSizes, workers) => {
            const expected = await oneThread(config, entries);
            const actual = await onThreads(config, entries, batchSizes, workers);
            expect(byStream(actual.lines)).toEqual(byStream(expected.lines));
            expect([...actual.lines].sort()).toEqual([...expected.lines].sort());
            expect(sortedLines(actual.metrics)).toEqual(sortedLines(expected.metrics));
            if (config.includes('lines_total')) expect(actual.metrics).toMatch(/^logs_process_custom_lines_total\{.*\} \d+$/m);
          },
        ),
        { numRuns },
      );
    }, 120_000);
  }

  it('puts the outputs of a stateless list back in exactly the order of one thread', async () => {
    await fc.assert(
      fc.asyncProperty(inputArb, fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 4 }), async (entries, batchSizes) => {
        const expected = await oneThread(PIPELINES.stateless!, entries);
        const actual = await onThreads(PIPELINES.stateless!, entries, batchSizes, 3);
        expect(actual.lines).toEqual(expected.lines);
      }),
      { numRuns },
    );
  }, 120_000);
});
