import { jsonl, type Sample } from './sample.js';

const pod = { namespace: 'shop', pod: 'checkout-7d9f', container: 'app' };

/** CRI lines from a container runtime, with a long line split into partial (P) pieces. */
export const criSample: Sample = {
  id: 'cri',
  title: 'CRI with partial lines',
  description:
    'Container runtime (CRI) lines: stage.cri parses time, stream and flag, and joins the P (partial) pieces of a long line with the F line that ends it.',
  inputFormat: 'jsonl',
  now: '2024-05-01T12:00:10Z',
  config: String.raw`logs.process "default" {
  stage.cri { }

  // Only the joined line reaches this stage: partial pieces are held by stage.cri.
  stage.labels {
    values = { flags = "" }
  }

  forward_to = []
}
`,
  input: jsonl([
    { labels: pod, line: '2024-05-01T12:00:00.100000000Z stdout F starting checkout service v2.3.1' },
    { labels: pod, line: '2024-05-01T12:00:01.000000000Z stdout P {"cart":{"items":[{"sku":"A-100","qty":2},' },
    { labels: pod, line: '2024-05-01T12:00:01.000000001Z stdout P {"sku":"B-220","qty":1}],' },
    { labels: pod, line: '2024-05-01T12:00:01.000000002Z stdout F "total":42.5}}' },
    { labels: pod, line: '2024-05-01T12:00:02.000000000Z stderr F payment provider slow: 950ms' },
  ]),
};
