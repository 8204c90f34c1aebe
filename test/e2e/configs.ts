/** Config texts of the end-to-end instances. */

/** Instance B: a push API that echoes what it receives to a file as JSON lines. */
export function receiverConfig(echoFile: string): string {
  return `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  forward_to = [logs.echo.out.receiver]
}

logs.echo "out" {
  path = ${JSON.stringify(echoFile)}
}
`;
}

const WRITE_DEFAULTS: Record<string, string> = {
  batch_wait: '"50ms"',
  min_backoff_period: '"50ms"',
  max_backoff_period: '"200ms"',
  max_backoff_retries: '0',
};

/**
 * Instance A: push API → a Kubernetes-logs-like pipeline (CRI, JSON, labels, structured metadata,
 * static and dropped labels) → logs.write to `pushUrl`. `write` overrides or adds endpoint
 * attributes; `writeBlocks`, `api` and `extraComponents` add text where they say.
 */
export function forwarderConfig(
  pushUrl: string,
  options: { write?: Record<string, string>; writeBlocks?: string; api?: string; extraComponents?: string } = {},
): string {
  const write = Object.entries({ ...WRITE_DEFAULTS, ...options.write })
    .map(([name, value]) => `    ${name} = ${value}`)
    .join('\n');
  return `logs.source.api "in" {
  http {
    listen_address = "127.0.0.1"
    listen_port = 0
  }
  use_incoming_timestamp = true
  ${options.api ?? ''}
  forward_to = [logs.process.k8s.receiver]
}

logs.process "k8s" {
  stage.cri { }
  stage.json {
    expressions = { level = "", msg = "", trace_id = "" }
  }
  stage.labels {
    values = { level = "" }
  }
  stage.structured_metadata {
    values = { trace_id = "" }
  }
  stage.static_labels {
    values = { cluster = "eu-1" }
  }
  stage.label_drop {
    values = ["container"]
  }
  forward_to = [logs.write.out.receiver]
}

logs.write "out" {
  endpoint {
    url = ${JSON.stringify(pushUrl)}
${write}
    ${options.writeBlocks ?? ''}
  }
}
${options.extraComponents ?? ''}
`;
}

/**
 * A JetStream processor: reads the group's partitions, counts lines in, joins multiline blocks
 * (`^B ` starts one), counts blocks out and writes them to Loki.
 */
export function jetStreamProcessorConfig(
  natsUrl: string,
  lokiUrl: string,
  leaseTtlMs: number,
  ackDelayMs: number,
  maxWaitTime: string,
): string {
  return `logs.source.jetstream "in" {
  url = "${natsUrl}"
  stream = "LOGS"
  group = "processors"
  lease_ttl = "${leaseTtlMs}ms"
  ack_delay = "${ackDelayMs}ms"
  forward_to = [logs.process.main.receiver]
}

logs.process "main" {
  stage.metrics {
    metric.counter {
      name = "lines_in"
      match_all = true
      action = "inc"
    }
  }
  stage.multiline {
    firstline = "^B "
    max_wait_time = "${maxWaitTime}"
  }
  stage.metrics {
    metric.counter {
      name = "blocks_out"
      match_all = true
      action = "inc"
    }
  }
  forward_to = [logs.write.loki.receiver]
}

logs.write "loki" {
  endpoint {
    url = "${lokiUrl}"
    batch_wait = "100ms"
    min_backoff_period = "50ms"
    max_backoff_period = "500ms"
    max_backoff_retries = 0
  }
}
`;
}
