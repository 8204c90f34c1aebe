import { jsonl, type Sample } from './sample.js';

const api = { app: 'api' };

/** Old entries dropped against the virtual "now", debug entries sampled with a fixed seed. */
export const retentionSample: Sample = {
  id: 'retention',
  title: 'Old entries and sampling',
  description:
    'stage.drop older_than compares timestamps with the virtual clock ("now"); debug lines are kept at a rate of 1 in 3 by stage.sampling, with a fixed seed so every run picks the same ones.',
  inputFormat: 'jsonl',
  now: '2024-05-01T12:00:00Z',
  seed: 7,
  config: String.raw`stage.drop {
  older_than          = "1h"
  drop_counter_reason = "too_old"
}

stage.logfmt {
  mapping = { level = "" }
}

stage.match {
  selector = "{app=\"api\"} |= \"level=debug\""

  stage.sampling {
    rate = 0.33
  }
}
`,
  input: jsonl([
    { labels: api, timestamp: '2024-05-01T09:30:00Z', line: 'level=info msg="replayed from yesterday\'s buffer"' },
    { labels: api, timestamp: '2024-05-01T11:59:50Z', line: 'level=info msg="request served"' },
    { labels: api, timestamp: '2024-05-01T11:59:51Z', line: 'level=debug msg="cache hit" key=user:42' },
    { labels: api, timestamp: '2024-05-01T11:59:52Z', line: 'level=debug msg="cache miss" key=user:7' },
    { labels: api, timestamp: '2024-05-01T11:59:53Z', line: 'level=debug msg="cache hit" key=cart:9' },
    { labels: api, timestamp: '2024-05-01T11:59:54Z', line: 'level=debug msg="cache hit" key=cart:3' },
    { labels: api, timestamp: '2024-05-01T11:59:55Z', line: 'level=warn msg="slow upstream" ms=950' },
  ]),
};
