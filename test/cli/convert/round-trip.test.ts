import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.js';

/**
 * A converted Promtail pipeline does what the Rivulet config one would write by hand does: both
 * run the same golden input through `rivulet process` on the same virtual clock, and print the
 * same entries and the same metrics.
 */
const dir = mkdtempSync(join(tmpdir(), 'rivulet-convert-round-trip-'));

/** Runs the input through a stage list file: the entries printed and the metrics at the end. */
async function processWith(config: string, input: string): Promise<{ entries: string; metrics: string }> {
  const metrics = `${config}.prom`;
  const result = await runCli(['process', '--config', config, '--now', '2024-05-01T10:00:00Z', '--quiet', '--metrics', metrics], input);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return { entries: result.stdout, metrics: readFileSync(metrics, 'utf8') };
}

interface RoundTrip {
  readonly name: string;
  readonly promtail: string;
  readonly byHand: string;
  readonly input: readonly object[];
  /** A line the metrics must hold, so a metric's name and value are checked, not only their agreement. */
  readonly metric?: string;
}

const CASES: readonly RoundTrip[] = [
  {
    name: 'docker lines parsed as JSON, labelled, timestamped and rewritten',
    promtail: `pipeline_stages:
  - docker: {}
  - json:
      expressions:
        level: level
        msg: msg
        ts: time
  - labels:
      level:
  - timestamp:
      source: ts
      format: RFC3339
  - output:
      source: msg
`,
    byHand: `stage.docker { }
stage.json {
  expressions = { level = "level", msg = "msg", ts = "time" }
}
stage.labels {
  values = { level = "" }
}
stage.timestamp {
  source = "ts"
  format = "RFC3339"
}
stage.output {
  source = "msg"
}
`,
    input: [
      {
        labels: { job: 'containers' },
        line: '{"log":"{\\"level\\":\\"info\\",\\"msg\\":\\"started\\",\\"time\\":\\"2024-05-01T09:00:00Z\\"}\\n","stream":"stdout","time":"2024-05-01T09:00:00.5Z"}',
      },
      {
        labels: { job: 'containers' },
        line: '{"log":"{\\"level\\":\\"error\\",\\"msg\\":\\"failed\\",\\"time\\":\\"2024-05-01T09:00:01Z\\"}\\n","stream":"stderr","time":"2024-05-01T09:00:01.5Z"}',
      },
    ],
  },
  {
    name: 'an access log parsed by regex, counted by metrics with the Promtail prefix kept',
    promtail: `pipeline_stages:
  - regex:
      expression: '^(?P<ip>\\S+) "(?P<method>\\S+) (?P<path>\\S+)" (?P<status>\\d{3}) (?P<bytes>\\d+)$'
  - labels:
      method:
      status:
  - metrics:
      response_bytes_total:
        type: Counter
        description: bytes sent
        source: bytes
        config:
          action: add
      requests_total:
        type: Counter
        description: requests
        config:
          match_all: true
          action: inc
`,
    byHand: `stage.regex {
  expression = "^(?P<ip>\\\\S+) \\"(?P<method>\\\\S+) (?P<path>\\\\S+)\\" (?P<status>\\\\d{3}) (?P<bytes>\\\\d+)$"
}
stage.labels {
  values = { method = "", status = "" }
}
stage.metrics {
  metric.counter {
    name        = "requests_total"
    description = "requests"
    prefix      = "promtail_custom_"
    match_all   = true
    action      = "inc"
  }
  metric.counter {
    name        = "response_bytes_total"
    description = "bytes sent"
    prefix      = "promtail_custom_"
    source      = "bytes"
    action      = "add"
  }
}
`,
    input: [
      { labels: { job: 'nginx' }, line: '10.0.0.1 "GET /index.html" 200 512' },
      { labels: { job: 'nginx' }, line: '10.0.0.2 "POST /api" 500 17' },
      { labels: { job: 'nginx' }, line: '10.0.0.1 "GET /index.html" 200 512' },
    ],
    metric: 'promtail_custom_response_bytes_total{job="nginx",method="GET",status="200"} 1024\n',
  },
  {
    name: 'multiline blocks filtered by match and drop, then templated and relabelled',
    promtail: `pipeline_stages:
  - multiline:
      firstline: '^\\d{4}-\\d{2}-\\d{2}'
      max_wait_time: 3s
  - regex:
      expression: '^\\S+ (?P<level>[A-Z]+) (?P<user>\\S+)'
  - labels:
      level:
  - match:
      selector: '{level="DEBUG"}'
      action: drop
      drop_counter_reason: debug
  - match:
      selector: '{app="api"}'
      stages:
        - template:
            source: user
            template: '{{ ToUpper .Value }}'
        - static_labels:
            tier: backend
        - labels:
            user:
  - drop:
      expression: 'healthz'
  - replace:
      expression: 'password=(\\S+)'
      replace: '***'
`,
    byHand: `stage.multiline {
  firstline     = "^\\\\d{4}-\\\\d{2}-\\\\d{2}"
  max_wait_time = "3s"
}
stage.regex {
  expression = "^\\\\S+ (?P<level>[A-Z]+) (?P<user>\\\\S+)"
}
stage.labels {
  values = { level = "" }
}
stage.match {
  selector            = "{level=\\"DEBUG\\"}"
  action              = "drop"
  drop_counter_reason = "debug"
}
stage.match {
  selector = "{app=\\"api\\"}"
  stage.template {
    source   = "user"
    template = "{{ ToUpper .Value }}"
  }
  stage.static_labels {
    values = { tier = "backend" }
  }
  stage.labels {
    values = { user = "" }
  }
}
stage.drop {
  expression = "healthz"
}
stage.replace {
  expression = "password=(\\\\S+)"
  replace    = "***"
}
`,
    input: [
      { labels: { app: 'api' }, line: '2024-05-01 INFO alice login password=hunter2' },
      { labels: { app: 'api' }, line: '  at com.example.Auth.check(Auth.java:42)' },
      { labels: { app: 'api' }, line: '2024-05-01 DEBUG bob cache miss' },
      { labels: { app: 'worker' }, line: '2024-05-01 WARN carol slow job' },
      { labels: { app: 'api' }, line: '2024-05-01 INFO dave GET /healthz' },
      { labels: { app: 'api' }, line: '2024-05-01 ERROR erin boom' },
    ],
  },
  {
    name: 'CRI lines with a tenant, packed labels and labels dropped',
    promtail: `pipeline_stages:
  - cri: {}
  - logfmt:
      mapping:
        org:
        trace:
  - structured_metadata:
      trace:
  - tenant:
      source: org
  - labeldrop:
      - filename
  - pack:
      labels: [stream]
      ingest_timestamp: false
`,
    byHand: `stage.cri { }
stage.logfmt {
  mapping = { org = "", trace = "" }
}
stage.structured_metadata {
  values = { trace = "" }
}
stage.tenant {
  source = "org"
}
stage.label_drop {
  values = ["filename"]
}
stage.pack {
  labels           = ["stream"]
  ingest_timestamp = false
}
`,
    input: [
      { labels: { filename: '/var/log/pods/a.log' }, line: '2024-05-01T09:00:00.000000001Z stdout F org=acme trace=abc msg=hello' },
      { labels: { filename: '/var/log/pods/a.log' }, line: '2024-05-01T09:00:01.000000001Z stderr P org=beta trace=def part' },
      { labels: { filename: '/var/log/pods/a.log' }, line: '2024-05-01T09:00:02.000000001Z stderr F ial msg=end' },
    ],
  },
];

describe('convert --from promtail: round trip', () => {
  for (const { name, promtail, byHand, input, metric } of CASES) {
    it(`processes ${name} exactly as the hand-written config does`, async () => {
      const slug = name.replace(/\W+/g, '-');
      const source = join(dir, `${slug}.yaml`);
      writeFileSync(source, promtail);
      const converted = await runCli(['convert', '--from', 'promtail', source]);
      expect(converted.stderr).toBe('');
      expect(converted.code).toBe(0);
      const convertedFile = join(dir, `${slug}.converted.alloy`);
      writeFileSync(convertedFile, converted.stdout);
      const handFile = join(dir, `${slug}.hand.alloy`);
      writeFileSync(handFile, byHand);

      const lines = `${input.map((e) => JSON.stringify(e)).join('\n')}\n`;
      const fromConverted = await processWith(convertedFile, lines);
      const fromHand = await processWith(handFile, lines);
      expect(fromConverted.entries).not.toBe('');
      expect(fromConverted).toEqual(fromHand);
      if (metric !== undefined) expect(fromConverted.metrics).toContain(metric);
    });
  }
});
