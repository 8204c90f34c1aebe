import { jsonl, type Sample } from './sample.js';

const checkout = { namespace: 'shop', app: 'checkout', pod: 'checkout-7d9f' };
const search = { namespace: 'shop', app: 'search', pod: 'search-5c2a' };

/** JSON application logs from Kubernetes pods, routed by stage.match. */
export const kubernetesSample: Sample = {
  id: 'kubernetes',
  title: 'Kubernetes app JSON',
  description:
    'JSON application logs: fields are extracted, the level becomes a label, the trace id structured metadata; debug lines are dropped and payment lines get a team label in a match branch.',
  inputFormat: 'jsonl',
  now: '2024-05-01T12:01:00Z',
  config: String.raw`logs.process "default" {
  stage.json {
    expressions = {
      level    = "",
      msg      = "",
      trace_id = "",
      user_id  = "user.id",
    }
  }

  stage.labels {
    values = { level = "" }
  }

  stage.structured_metadata {
    values = { trace_id = "" }
  }

  stage.match {
    selector            = "{level=\"debug\"}"
    action              = "drop"
    drop_counter_reason = "debug"
  }

  stage.match {
    selector = "{app=\"checkout\"} |= \"payment\""

    stage.static_labels {
      values = { team = "payments" }
    }
  }

  stage.output {
    source = "msg"
  }

  forward_to = []
}
`,
  input: jsonl([
    {
      labels: checkout,
      timestamp: '2024-05-01T12:00:00.000Z',
      line: '{"level":"info","msg":"cart created","trace_id":"4bf92f35","user":{"id":42}}',
    },
    { labels: checkout, timestamp: '2024-05-01T12:00:00.250Z', line: '{"level":"debug","msg":"cache lookup","trace_id":"4bf92f35"}' },
    {
      labels: checkout,
      timestamp: '2024-05-01T12:00:01.000Z',
      line: '{"level":"error","msg":"payment declined","trace_id":"4bf92f35","user":{"id":42}}',
    },
    {
      labels: search,
      timestamp: '2024-05-01T12:00:01.500Z',
      line: '{"level":"info","msg":"query served","trace_id":"00f067aa","user":{"id":7}}',
    },
    { labels: search, timestamp: '2024-05-01T12:00:02.000Z', line: 'plain text line from a sidecar' },
  ]),
};
