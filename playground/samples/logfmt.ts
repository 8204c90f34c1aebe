import { lines, type Sample } from './sample.js';

/** logfmt lines: fields extracted, durations observed in a histogram. */
export const logfmtSample: Sample = {
  id: 'logfmt',
  title: 'logfmt',
  description:
    'logfmt lines: the level becomes a label, debug lines are dropped and query durations go into a histogram (Go durations convert to seconds).',
  inputFormat: 'text',
  now: '2024-05-01T12:00:00Z',
  config: String.raw`stage.logfmt {
  mapping = { level = "", msg = "", duration = "took" }
}

stage.drop {
  source = "level"
  value  = "debug"
}

stage.labels {
  values = { level = "" }
}

stage.metrics {
  metric.histogram {
    name        = "query_duration_seconds"
    description = "Query time"
    source      = "duration"
    buckets     = [0.01, 0.1, 1, 10]
  }
}
`,
  input: lines(
    'level=info msg="query served" took=12ms rows=20',
    'level=debug msg="plan chosen" took=1ms',
    'level=warn msg="slow query" took=1.5s rows=12000',
    'level=info msg="query served" took=80ms rows=3',
    'level=error msg="connection reset" peer=10.0.0.7',
  ),
};
