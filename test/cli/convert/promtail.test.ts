import { describe, expect, it } from 'vitest';
import '../../../index.js';
import { convertPromtail } from '../../../cli/convert/promtail.js';
import { formatWarning } from '../../../cli/convert/conversion.js';
import { ComponentGraph } from '../../../core/runtime/graph.js';
import { systemClock } from '../../../core/clock.js';
import { Registry } from 'prom-client';

function convert(text: string) {
  const { output, warnings } = convertPromtail(text, 'promtail.yaml', { keepNames: true });
  return { output, warnings: warnings.map(formatWarning) };
}

/** The component graph `rivulet run` would build from the output, loaded and stopped again. */
async function load(config: string): Promise<void> {
  const registry = new Registry();
  const graph = new ComponentGraph((id) => ({ id, clock: systemClock(), registry, stdout: process.stdout, log: () => {} }));
  graph.load(config, 'converted.alloy');
  await graph.stop();
}

const CLIENT = 'clients:\n  - url: http://loki:3100/loki/api/v1/push\n';

describe('convert --from promtail: targets', () => {
  it('applies relabel rules to static targets: one target per distinct label set, __ labels dropped', async () => {
    const { output, warnings } = convert(`${CLIENT}scrape_configs:
  - job_name: logs
    static_configs:
      - targets: [host-a, host-b]
        labels:
          __path__: /var/log/a/*.log
          __team: payments
          env: prod-eu
      - targets: [localhost]
        labels:
          __path__: /var/log/b/*.log
          env: dev
    relabel_configs:
      - source_labels: [env]
        regex: 'dev'
        action: drop
      - source_labels: [env]
        regex: '(\\w+)-(\\w+)'
        target_label: region
        replacement: '$2'
      - source_labels: [__team]
        target_label: team
      - regex: '__(team)'
        action: labelmap
        replacement: 'owner_$1'
      - regex: env
        action: labeldrop
`);
    expect(warnings).toEqual([]);
    expect(output).toContain(`  targets        = [
    {
      __path__   = "/var/log/a/*.log",
      region     = "eu",
      team       = "payments",
      owner_team = "payments",
    },
  ]`);
    await load(output);
  });

  it('leaves out a target without __path__, with a warning at it', () => {
    const { warnings } = convert(`${CLIENT}scrape_configs:
  - job_name: x
    static_configs:
      - targets: [localhost]
        labels:
          job: x
`);
    expect(warnings).toEqual(['promtail.yaml:6:9: warning: a static target without __path__ tails no file; not converted']);
  });
});

describe('convert --from promtail: components', () => {
  it('names components after their jobs, unique, with a positions file for each file source', async () => {
    const { output } = convert(`${CLIENT}positions:
  filename: /data/positions.yml
scrape_configs:
  - job_name: web-app
    static_configs: [{ targets: [localhost], labels: { __path__: /a.log } }]
  - job_name: web_app
    static_configs: [{ targets: [localhost], labels: { __path__: /b.log } }]
`);
    expect(output).toContain('logs.source.file "web_app" {');
    expect(output).toContain('logs.source.file "web_app_2" {');
    expect(output).toContain('positions_file = "/data/positions.web_app.json"');
    expect(output).toContain('positions_file = "/data/positions.web_app_2.json"');
    await load(output);
  });

  it('writes each client as a logs.write, with the settings logs.write has and a warning for each other one', async () => {
    const { output, warnings } = convert(`clients:
  - url: http://a/loki/api/v1/push
    batchsize: 102400
    batchwait: 500ms
    timeout: 5s
    backoff_config: { min_period: 100ms, max_period: 10s, max_retries: 3 }
    drop_rate_limited_batches: true
    tls_config:
      insecure_skip_verify: true
  - url: http://b/loki/api/v1/push
    batchsize: 1000
  - tenant_id: orphan
limits_config:
  readline_rate: 100
`);
    expect(output).toBe(`logs.write "default" {
  endpoint {
    url                 = "http://a/loki/api/v1/push"
    batch_size          = "100KiB"
    batch_wait          = "500ms"
    remote_timeout      = "5s"
    min_backoff_period  = "100ms"
    max_backoff_period  = "10s"
    max_backoff_retries = 3
    retry_on_http_429   = false
  }
}

logs.write "default_1" {
  endpoint {
    url        = "http://b/loki/api/v1/push"
    batch_size = "1000B"
  }
}
`);
    expect(warnings).toEqual([
      'promtail.yaml:8:5: warning: client: tls_config is not converted: logs.write has no equivalent',
      'promtail.yaml:12:5: warning: a client without a url is not converted',
      'promtail.yaml:13:1: warning: limits_config is not converted: Rivulet has no equivalent',
    ]);
    await load(output);
  });
});

describe('convert --from promtail: YAML anchors', () => {
  it('reads an alias as the node it names, and a merge key as the pairs it names under the mapping’s own', () => {
    const { output } = convert(`x-client: &client
  url: http://loki/push
  tenant_id: base
clients:
  - <<: *client
    tenant_id: override
`);
    expect(output).toBe('logs.write "default" {\n  endpoint {\n    url       = "http://loki/push"\n    tenant_id = "override"\n  }\n}\n');
  });
});
