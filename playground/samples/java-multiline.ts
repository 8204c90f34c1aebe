import { jsonl, type Sample } from './sample.js';

const app = { app: 'billing' };

/** Java stack traces joined into one entry per event; the virtual clock shows the idle flush. */
export const javaMultilineSample: Sample = {
  id: 'java-multiline',
  title: 'Java stack traces (multiline)',
  description:
    'A stack trace spans many lines: stage.multiline starts a block at each timestamped line. The input arrives over time (arrival_ms), so the first block is flushed by the 3s idle timer before the next event comes.',
  inputFormat: 'jsonl',
  now: '2024-05-01T12:00:00Z',
  config: String.raw`stage.multiline {
  firstline     = "^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}"
  max_wait_time = "3s"
}

stage.regex {
  expression = "^\\S+ \\S+ (?P<level>[A-Z]+) \\[(?P<thread>[^\\]]+)\\]"
}

stage.labels {
  values = { level = "" }
}
`,
  input: jsonl([
    {
      labels: app,
      timestamp: '2024-05-01T12:00:00.120Z',
      arrival_ms: 0,
      line: '2024-05-01 12:00:00,120 ERROR [http-nio-8080-exec-3] c.e.billing.Charges - charge failed',
    },
    { labels: app, timestamp: '2024-05-01T12:00:00.121Z', arrival_ms: 1, line: 'java.lang.IllegalStateException: card declined' },
    { labels: app, timestamp: '2024-05-01T12:00:00.122Z', arrival_ms: 2, line: '\tat com.example.billing.Charges.charge(Charges.java:42)' },
    { labels: app, timestamp: '2024-05-01T12:00:00.123Z', arrival_ms: 3, line: '\tat com.example.billing.Api.checkout(Api.java:17)' },
    {
      labels: app,
      timestamp: '2024-05-01T12:00:05.000Z',
      arrival_ms: 5000,
      line: '2024-05-01 12:00:05,000 INFO [main] c.e.billing.Charges - retry scheduled',
    },
    {
      labels: app,
      timestamp: '2024-05-01T12:00:05.500Z',
      arrival_ms: 5500,
      line: '2024-05-01 12:00:05,500 WARN [main] c.e.billing.Charges - retry budget low',
    },
  ]),
};
