import { describe, expect, it } from 'vitest';
import '../../../index.js';
import { convertPromtail } from '../../../cli/convert/promtail.js';
import { loadStageList } from '../../../core/process.js';

/** A Promtail file of just `pipeline_stages` converts to the bare stage list `rivulet process` reads. */
function convertStageList(stages: string, keepNames = true) {
  const text = `pipeline_stages:\n${stages
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')}\n`;
  return convertPromtail(text, 'promtail.yaml', { keepNames });
}

/** One golden case per Promtail stage type: its YAML, and the exact config it converts to. */
const GOLDEN: ReadonlyArray<{ promtail: string; yaml: string; rivulet: string }> = [
  {
    promtail: 'json',
    yaml: `- json:\n    expressions:\n      level:\n      user: context.user\n    source: body\n    drop_malformed: true`,
    rivulet: `stage.json {
  expressions    = {
    level = "",
    user  = "context.user",
  }
  source         = "body"
  drop_malformed = true
}
`,
  },
  {
    promtail: 'logfmt',
    yaml: `- logfmt:\n    mapping:\n      level:\n      duration: dur\n    source: msg`,
    rivulet: `stage.logfmt {
  mapping = {
    level    = "",
    duration = "dur",
  }
  source  = "msg"
}
`,
  },
  {
    promtail: 'regex',
    yaml: `- regex:\n    expression: '^(?P<level>\\w+) (?P<msg>.*)$'\n    source: line`,
    rivulet: `stage.regex {
  expression = "^(?P<level>\\\\w+) (?P<msg>.*)$"
  source     = "line"
}
`,
  },
  {
    promtail: 'replace',
    yaml: `- replace:\n    expression: '(\\d{3})-\\d{4}'\n    source: msg\n    replace: '{{ .Value }}-xxxx'`,
    rivulet: `stage.replace {
  expression = "(\\\\d{3})-\\\\d{4}"
  source     = "msg"
  replace    = "{{ .Value }}-xxxx"
}
`,
  },
  {
    promtail: 'template',
    yaml: `- template:\n    source: level\n    template: '{{ ToUpper .Value }}'`,
    rivulet: `stage.template {
  source   = "level"
  template = "{{ ToUpper .Value }}"
}
`,
  },
  {
    promtail: 'tenant',
    yaml: `- tenant:\n    value: team-a`,
    rivulet: `stage.tenant {
  value = "team-a"
}
`,
  },
  {
    promtail: 'timestamp',
    yaml: `- timestamp:\n    source: ts\n    format: Unix\n    fallback_formats: [RFC3339]\n    location: UTC\n    action_on_failure: fudge`,
    rivulet: `stage.timestamp {
  source            = "ts"
  format            = "Unix"
  fallback_formats  = ["RFC3339"]
  location          = "UTC"
  action_on_failure = "fudge"
}
`,
  },
  {
    promtail: 'output',
    yaml: `- output:\n    source: msg`,
    rivulet: `stage.output {
  source = "msg"
}
`,
  },
  {
    promtail: 'docker',
    yaml: `- docker: {}`,
    rivulet: `stage.docker {}
`,
  },
  {
    promtail: 'cri',
    yaml: `- cri: {}`,
    rivulet: `stage.cri {}
`,
  },
  {
    promtail: 'decolorize',
    yaml: `- decolorize:`,
    rivulet: `stage.decolorize {}
`,
  },
  {
    promtail: 'multiline',
    yaml: `- multiline:\n    firstline: '^\\['\n    max_lines: 50\n    max_wait_time: 10s`,
    rivulet: `stage.multiline {
  firstline     = "^\\\\["
  max_lines     = 50
  max_wait_time = "10s"
}
`,
  },
  {
    promtail: 'pack',
    yaml: `- pack:\n    labels: [env, pod]\n    ingest_timestamp: true`,
    rivulet: `stage.pack {
  labels           = ["env", "pod"]
  ingest_timestamp = true
}
`,
  },
  {
    promtail: 'limit',
    yaml: `- limit:\n    rate: 10\n    burst: 20\n    by_label_name: app\n    drop: true\n    max_distinct_labels: 20000`,
    rivulet: `stage.limit {
  rate                = 10
  burst               = 20
  by_label_name       = "app"
  drop                = true
  max_distinct_labels = 20000
}
`,
  },
  {
    promtail: 'sampling',
    yaml: `- sampling:\n    rate: 0.1\n    drop_counter_reason: sampled`,
    rivulet: `stage.sampling {
  rate                = 0.1
  drop_counter_reason = "sampled"
}
`,
  },
  {
    promtail: 'drop',
    yaml: `- drop:\n    source: [app, level]\n    separator: '|'\n    value: 'api|debug'`,
    rivulet: `stage.drop {
  source    = "app,level"
  separator = "|"
  value     = "api|debug"
}
`,
  },
  {
    promtail: 'eventlogmessage',
    yaml: `- eventlogmessage:\n    source: message\n    overwrite_existing: true\n    drop_invalid_labels: false`,
    rivulet: `stage.eventlogmessage {
  source              = "message"
  overwrite_existing  = true
  drop_invalid_labels = false
}
`,
  },
  {
    promtail: 'geoip',
    yaml: `- geoip:\n    db: /etc/geoip/city.mmdb\n    source: ip\n    db_type: city`,
    rivulet: `stage.geoip {
  db      = "/etc/geoip/city.mmdb"
  source  = "ip"
  db_type = "city"
}
`,
  },
  {
    promtail: 'labels',
    yaml: `- labels:\n    level:\n    app: application`,
    rivulet: `stage.labels {
  values = {
    level = "",
    app   = "application",
  }
}
`,
  },
  {
    promtail: 'static_labels',
    yaml: `- static_labels:\n    env: prod`,
    rivulet: `stage.static_labels {
  values = { env = "prod" }
}
`,
  },
  {
    promtail: 'structured_metadata',
    yaml: `- structured_metadata:\n    trace_id:\n    user: user_id`,
    rivulet: `stage.structured_metadata {
  values = {
    trace_id = "",
    user     = "user_id",
  }
}
`,
  },
  {
    promtail: 'labeldrop',
    yaml: `- labeldrop:\n    - filename\n    - stream`,
    rivulet: `stage.label_drop {
  values = ["filename", "stream"]
}
`,
  },
  {
    promtail: 'labelallow',
    yaml: `- labelallow: [job, level]`,
    rivulet: `stage.label_keep {
  values = ["job", "level"]
}
`,
  },
  {
    promtail: 'metrics',
    yaml: `- metrics:\n    lines_total:\n      type: Counter\n      description: all lines\n      config:\n        match_all: true\n        count_entry_bytes: true\n        action: add\n    queue:\n      type: Gauge\n      source: depth\n      prefix: app_\n      config:\n        action: set\n    took:\n      type: histogram\n      max_idle_duration: 10m\n      config:\n        buckets: [0.1, 1, 10]`,
    rivulet: `stage.metrics {
  metric.counter {
    name              = "lines_total"
    description       = "all lines"
    prefix            = "promtail_custom_"
    match_all         = true
    count_entry_bytes = true
    action            = "add"
  }

  metric.gauge {
    name   = "queue"
    source = "depth"
    prefix = "app_"
    action = "set"
  }

  metric.histogram {
    name              = "took"
    max_idle_duration = "10m"
    prefix            = "promtail_custom_"
    buckets           = [0.1, 1, 10]
  }
}
`,
  },
  {
    promtail: 'match',
    yaml: `- match:\n    selector: '{app="api"}'\n    pipeline_name: api\n    stages:\n      - json:\n          expressions:\n            level:\n      - match:\n          selector: '{level="debug"}'\n          action: drop`,
    rivulet: `stage.match {
  selector      = "{app=\\"api\\"}"
  pipeline_name = "api"

  stage.json {
    expressions = { level = "" }
  }

  stage.match {
    selector = "{level=\\"debug\\"}"
    action   = "drop"
  }
}
`,
  },
];

describe('convert --from promtail: pipeline stages', () => {
  for (const { promtail, yaml, rivulet } of GOLDEN) {
    it(`converts the ${promtail} stage`, () => {
      const { output, warnings } = convertStageList(yaml);
      expect(output).toBe(rivulet);
      expect(warnings).toEqual([]);
      // The output is a stage list Rivulet decodes: every attribute has a stage field of its name and type.
      if (promtail !== 'geoip') expect(() => loadStageList(output, 'converted.alloy')).not.toThrow();
    });
  }
});

describe('convert --from promtail: what has no equivalent', () => {
  it('leaves out an unknown stage with a warning at its name, and converts the stages around it', () => {
    const { output, warnings } = convertStageList('- docker: {}\n- lua:\n    script: x.lua\n- output:\n    source: msg');
    expect(output).toBe('stage.docker {}\n\nstage.output {\n  source = "msg"\n}\n');
    expect(warnings).toEqual([
      { file: 'promtail.yaml', line: 3, col: 5, message: 'Promtail stage "lua" has no Rivulet equivalent; not converted' },
    ]);
  });

  it('leaves out a field the stage does not have, and a second stage in one list item, with warnings', () => {
    const { output, warnings } = convertStageList('- json:\n    expressions: { a: b }\n    strict: true\n  regex:\n    expression: x');
    expect(output).toBe('stage.json {\n  expressions = { a = "b" }\n}\n');
    expect(warnings.map((w) => `${w.line}:${w.col}: ${w.message}`)).toEqual([
      '4:7: json: field "strict" has no Rivulet equivalent; not converted',
      '5:5: a pipeline stage holds one stage; "regex" is a second one in the same list item and is not converted',
    ]);
  });

  it('warns at a metric without a known type and at a value of the wrong kind', () => {
    const { output, warnings } = convertStageList('- metrics:\n    m:\n      type: Summary\n- limit:\n    rate: fast\n    burst: 5');
    expect(output).toBe('stage.metrics {}\n\nstage.limit {\n  burst = 5\n}\n');
    expect(warnings.map((w) => `${w.line}:${w.col}: ${w.message}`)).toEqual([
      '4:15: metric "m" needs a type of Counter, Gauge or Histogram; not converted',
      '6:13: limit: rate: expected a number, got "fast"; not converted',
    ]);
  });

  it("writes Promtail's metrics prefix in place of an empty one, which means the default", () => {
    const { output } = convertStageList('- metrics:\n    n:\n      type: Gauge\n      prefix: ""\n      config:\n        action: inc');
    expect(output).toBe(
      'stage.metrics {\n  metric.gauge {\n    name   = "n"\n    prefix = "promtail_custom_"\n    action = "inc"\n  }\n}\n',
    );
  });

  it("takes Rivulet's metrics prefix with keepNames off", () => {
    const { output } = convertStageList('- metrics:\n    n:\n      type: Counter\n      config:\n        action: inc', false);
    expect(output).toBe('stage.metrics {\n  metric.counter {\n    name   = "n"\n    action = "inc"\n  }\n}\n');
  });
});
