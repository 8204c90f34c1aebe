import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WireStream } from '../../../lib/loki/wire.js';
import { push, runConfig } from './support.js';

const BASE_NS = 1_700_000_000_000_000_000n;
const API = 'logs.source.api.in';

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
} as const;

type StageName = keyof typeof STAGES;

function config(stages: readonly StageName[]): string {
  return `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  forward_to = [logs.process.p.receiver]
}

logs.process "p" {
  ${stages.map((name, i) => STAGES[name](i)).join('\n  ')}
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" { }
`;
}

/** Six streams, each app with two envs. */
const streamLabels = (s: number) => `{app="a${s % 3}", env="e${s % 2}"}`;

/** The pushes, each a list of (stream, count) slices, as bodies: every stream numbers its lines on. */
function bodies(pushes: ReadonlyArray<ReadonlyArray<{ stream: number; count: number }>>): WireStream[][] {
  const next = new Array<number>(6).fill(0);
  let at = 0;
  return pushes.map((slices) =>
    slices.map(({ stream, count }) => ({
      labels: streamLabels(stream),
      entries: Array.from({ length: count }, () => {
        const k = next[stream]!++;
        const line = `${k % 3 === 0 ? 'start' : '  cont'} level=${k % 2 ? 'info' : 'warn'} user=u${k % 4} n=${k}`;
        return { timestampNs: BASE_NS + BigInt(at++), line, structuredMetadata: [] };
      }),
    })),
  );
}

/** The echoed entries, stream by stream (labels as sorted JSON), each stream's in order. */
function byStream(stdout: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const text of stdout.split('\n')) {
    if (text === '') continue;
    const entry = JSON.parse(text) as { labels: Record<string, string>; line: string; timestamp: string };
    const key = JSON.stringify(Object.fromEntries(Object.entries(entry.labels).sort(([a], [b]) => a.localeCompare(b))));
    (out[key] ??= []).push(`${entry.timestamp} ${entry.line}`);
  }
  return out;
}

/** The series the stages and the sinks count, sorted: not the process's, nor times, nor live gauges. */
function counted(metrics: string): string[] {
  return metrics
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#') && !/^(process_|nodejs_)|_seconds|tcp_connections|pending_bytes/.test(line))
    .sort();
}

async function outcome(stages: readonly StageName[], pushes: WireStream[][], flags: readonly string[]) {
  const run = await runConfig(config(stages), flags, [API]);
  let metrics: string;
  try {
    for (const streams of pushes) expect((await push(run.apiUrls.get(API)!, streams)).status).toBe(204);
    metrics = await (await fetch(`${run.runUrl}/metrics`)).text();
  } finally {
    expect(await run.stop()).toBe(0);
  }
  // Stopped: every block the stages held is flushed and written.
  return { entries: byStream(run.stdout()), metrics: counted(metrics) };
}

describe('a sharded run, for random stage lists and pushes', () => {
  it('gives every stream the entries, in the order, and the metric values that one thread gives', async () => {
    const slice = fc.record({ stream: fc.integer({ min: 0, max: 5 }), count: fc.integer({ min: 1, max: 6 }) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...(Object.keys(STAGES) as StageName[])), { minLength: 1, maxLength: 5 }),
        fc.array(fc.array(slice, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
        async (stages, pushes) => {
          const bodiesOf = bodies(pushes);
          const inPlace = await outcome(stages, bodiesOf, ['--workers', '1']);
          const sharded = await outcome(stages, bodiesOf, ['--shards', '2']);
          expect(sharded.entries).toEqual(inPlace.entries);
          expect(sharded.metrics).toEqual(inPlace.metrics);
        },
      ),
      { numRuns: 3, endOnFailure: true },
    );
  }, 300_000);
});
