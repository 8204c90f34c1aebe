import { lines, type Sample } from './sample.js';

/** Docker's json-file driver output: the stage unwraps it, health checks are dropped. */
export const dockerSample: Sample = {
  id: 'docker',
  title: 'Docker JSON logs',
  description:
    'Docker json-file lines: stage.docker sets the line, the stream label and the timestamp; health checks are dropped and lines are counted per stream.',
  inputFormat: 'text',
  now: '2024-05-01T12:00:10Z',
  config: String.raw`logs.process "default" {
  // {"log":…,"stream":…,"time":…} → line, label "stream", timestamp
  stage.docker { }

  stage.drop {
    expression          = "GET /healthz"
    drop_counter_reason = "healthcheck"
  }

  stage.static_labels {
    values = { job = "docker" }
  }

  stage.metrics {
    metric.counter {
      name        = "lines_total"
      description = "Lines per stream"
      match_all   = true
      action      = "inc"
    }
  }

  forward_to = []
}
`,
  input: lines(
    String.raw`{"log":"Server listening on :8080\n","stream":"stdout","time":"2024-05-01T12:00:00.000000001Z"}`,
    String.raw`{"log":"GET /healthz 200 0.4ms\n","stream":"stdout","time":"2024-05-01T12:00:01.250000000Z"}`,
    String.raw`{"log":"GET /api/cart 200 12ms\n","stream":"stdout","time":"2024-05-01T12:00:02.500000000Z"}`,
    String.raw`{"log":"warning: cache miss rate 41%\n","stream":"stderr","time":"2024-05-01T12:00:03.000000000Z"}`,
    String.raw`{"log":"GET /healthz 200 0.3ms\n","stream":"stdout","time":"2024-05-01T12:00:06.250000000Z"}`,
  ),
};
