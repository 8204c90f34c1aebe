import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rivulet-test-'));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const MULTILINE = `pipeline {
    stage.multiline {
      firstline     = "^START"
      max_wait_time = "3s"
    }
  }`;

describe('rivulet test', () => {
  it('passes the worked example of docs/config-tests.md', async () => {
    expect(await runCli(['test', 'examples/config-tests/pipeline.test.alloy'])).toEqual({
      code: 0,
      stderr: '',
      stdout:
        'ok   joins_stack_traces\n' +
        'ok   flushes_after_max_wait_time\n' +
        'ok   drops debug lines and counts them\n' +
        'ok   drops_a_lone_debug_line\n' +
        '4 passed, 0 failed\n',
    });
  });

  it('prints a diff per mismatched field, missing and extra outputs, and exits 1', async () => {
    const config = file(
      'labels.alloy',
      'stage.json {\n  expressions = { level = "", n = "" }\n}\nstage.labels {\n  values = { level = "" }\n}\n',
    );
    const tests = file(
      'diff.test.alloy',
      `config = "labels.alloy"
now    = "2024-01-01T00:00:00Z"

test "passes" {
  input { line = "{\\"level\\":\\"info\\"}" }
  expect { labels = { level = "info" } }
}

test "wrong_fields" {
  input {
    line   = "{\\"level\\":\\"warn\\",\\"n\\":2}"
    labels = { app = "api" }
  }
  expect {
    line      = "{\\"level\\":\\"info\\"}"
    labels    = { app = "api", level = "info" }
    timestamp = "2024-01-01T00:00:01Z"
    extracted = { level = "warn", n = "2", missing = true }
  }
}

test "counts" {
  input { line = "{}" }
  input { line = "{\\"level\\":\\"x\\"}" }
  expect { line = "{}" }
}

test "too_few" {
  input { line = "{}" }
  expect { line = "{}" }
  expect { line = "more" }
}

test "none_wanted" {
  input { line = "{}" }
  expect_no_output = true
}
`,
    );
    const result = await runCli(['test', tests]);
    expect(config).toBe(join(dir, 'labels.alloy'));
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'ok   passes',
        'FAIL wrong_fields',
        `  output 1 (${tests}:14:3):`,
        '    line',
        '      expected "{\\"level\\":\\"info\\"}"',
        '      actual   "{\\"level\\":\\"warn\\",\\"n\\":2}"',
        '    labels',
        '      expected {app="api", level="info"}',
        '      actual   {app="api", level="warn"}',
        '    timestamp',
        '      expected 2024-01-01T00:00:01.000000000Z',
        '      actual   2024-01-01T00:00:00.000000000Z',
        '    extracted.n',
        '      expected "2"',
        '      actual   2',
        '    extracted.missing',
        '      expected true',
        '      actual   (not set)',
        'FAIL counts',
        '  output 2: unexpected {"labels":{"level":"x"},"line":"{\\"level\\":\\"x\\"}","timestamp":"2024-01-01T00:00:00.000000000Z","structured_metadata":{}}',
        'FAIL too_few',
        `  output 2 (${tests}:31:3): missing; the pipeline forwarded 1 entry`,
        'FAIL none_wanted',
        '  output 1: unexpected {"labels":{},"line":"{}","timestamp":"2024-01-01T00:00:00.000000000Z","structured_metadata":{}}',
        '1 passed, 4 failed',
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(1);
  });

  it('checks metric values by name and label subset, histograms by series name, and says what is off', async () => {
    const tests = file(
      'metrics.test.alloy',
      `test "metrics" {
  pipeline {
    stage.regex { expression = "^(?P<level>\\\\w+) (?P<ms>\\\\d+)" }
    stage.metrics {
      metric.counter {
        name      = "lines"
        action    = "inc"
        match_all = true
      }
      metric.histogram {
        name    = "latency_ms"
        source  = "ms"
        buckets = [10, 100]
      }
    }
    stage.drop {
      source              = "level"
      value               = "debug"
      drop_counter_reason = "debug"
    }
  }
  input { line = "info 5" }
  input { line = "debug 50" }
  input { line = "debug 500" }

  expect_metric {
    name   = "logs_process_dropped_lines_total"
    labels = { reason = "debug" }
    value  = 2
  }
  expect_metric {
    name  = "logs_process_custom_lines"
    value = 3
  }
  expect_metric {
    name  = "logs_process_custom_latency_ms_sum"
    value = 555
  }
  expect_metric {
    name   = "logs_process_custom_latency_ms_bucket"
    labels = { le = "100" }
    value  = 2
  }
  expect_metric {
    name   = "logs_process_dropped_lines_total"
    labels = { reason = "info" }
    value  = 1
  }
  expect_metric {
    name  = "logs_process_custom_lnes"
    value = 3
  }
  expect_metric {
    name  = "logs_process_custom_lines"
    value = 4
  }
}
`,
    );
    const result = await runCli(['test', tests]);
    expect(result.stdout).toBe(
      [
        'FAIL metrics',
        `  metric logs_process_dropped_lines_total{reason="info"} (${tests}:44:3):`,
        '    expected 1',
        '    actual   0 (no series with these labels)',
        `  metric logs_process_custom_lnes (${tests}:49:3):`,
        '    expected 3',
        '    actual   no such metric (did you mean "logs_process_custom_lines"?)',
        `  metric logs_process_custom_lines (${tests}:53:3):`,
        '    expected 4',
        '    actual   3',
        '0 passed, 1 failed',
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(1);
  });

  it('plays arrival offsets out on the virtual clock: a multiline block flushes after max_wait_time', async () => {
    const tests = file(
      'time.test.alloy',
      `now = "2024-01-01T00:00:00Z"

test "joined_within_the_wait" {
  ${MULTILINE}
  input { line = "START a" }
  input {
    line       = "  more"
    arrival_ms = 2000
  }
  expect {
    line  = "START a\\n  more"
    at_ms = 2000
  }
}

test "split_after_the_wait" {
  ${MULTILINE}
  input { line = "START a" }
  input {
    line       = "START b"
    arrival_ms = 10000
  }
  expect {
    line      = "START a"
    timestamp = "2024-01-01T00:00:00Z"
    at_ms     = 3000
  }
  expect {
    line      = "START b"
    timestamp = "2024-01-01T00:00:10Z"
    at_ms     = 10000
  }
}

test "flushed_at_end_of_input_without_offsets" {
  ${MULTILINE}
  input { line = "START a" }
  input { line = "START b" }
  expect {
    line  = "START a"
    at_ms = 0
  }
  expect {
    line  = "START b"
    at_ms = 0
  }
}

test "wrong_time" {
  ${MULTILINE}
  input { line = "START a" }
  input {
    line       = "  more"
    arrival_ms = 4000
  }
  expect { line = "START a\\n  more" }
}
`,
    );
    const result = await runCli(['test', tests]);
    expect(result.stdout).toBe(
      [
        'ok   joined_within_the_wait',
        'ok   split_after_the_wait',
        'ok   flushed_at_end_of_input_without_offsets',
        'FAIL wrong_time',
        `  output 1 (${tests}:76:3):`,
        '    line',
        '      expected "START a\\n  more"',
        '      actual   "START a"',
        '  output 2: unexpected {"labels":{},"line":"  more","timestamp":"2024-01-01T00:00:04.000000000Z","structured_metadata":{}}',
        '3 passed, 1 failed',
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(1);
  });

  it('exits 2 with every problem of a test file at its position, before running any test', async () => {
    const tests = file(
      'bad.test.alloy',
      `config = "nowhere.alloy"

test "a" {
  input { line = 1 }
  input {
    line       = "x"
    arrival_ms = 10
  }
  input {
    line       = "y"
    arrival_ms = 5
  }
  expect { lin = "x" }
  expect_metric { name = "m" }
}

test "b" {
  pipeline {
    stage.jsn { }
  }
  expect { timestamp = "yesterday" }
}

test "b" {
  expect {}
  expect_no_output = true
}

test {
  input { line = "x" }
}

stage.json { }
`,
    );
    const result = await runCli(['test', tests]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: [
        `${tests}:1:10: config "${join(dir, 'nowhere.alloy')}": no such file`,
        `${tests}:4:18: test "a" > input: "line" must be a string, got number`,
        `${tests}:11:18: test "a" > input: arrival_ms 5 is before the previous input's 10; inputs arrive in the order written`,
        `${tests}:13:12: test "a" > expect: unrecognized attribute name "lin" (did you mean "line"?)`,
        `${tests}:14:3: test "a" > expect_metric: missing required attribute "value"`,
        `${tests}:19:5: test "b" > pipeline: unrecognized block name "stage.jsn" (did you mean "stage.json"?)`,
        `${tests}:21:24: test "b" > expect: "timestamp" must be an RFC 3339 time: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
        `${tests}:24:1: test "b" already declared at ${tests}:17:1`,
        `${tests}:26:3: test "b": expect_no_output = true contradicts the expect blocks of this test`,
        `${tests}:29:1: a test needs a name: test "NAME" { … } or name = "…"`,
        `${tests}:33:1: unrecognized block name "stage.json"; a test file holds test blocks`,
        '',
      ].join('\n'),
    });
  });

  it('reports every problem of each block, a value of the wrong type named by its place inside the value; a pipeline may have a label', async () => {
    const tests = file(
      'values.test.alloy',
      `now = 5

test "a" {
  pipeline {
    stage.json {
      expressions = { a = "" }
    }
    foo = 1
  }
  input {
    line   = "x"
    line   = "y"
    labels = { app = 1 }
  }
  input {
    line       = "z"
    arrival_ms = "soon"
    extracted  = [1]
  }
  input {
    line       = "w"
    arrival_ms = -1
  }
  expect { at_ms = -2 }
  expect {
    structured_metadata = { k = false }
  }
  expect_metric {
    name  = "m"
    value = "1"
  }
  expect_no_output = "yes"
}

test "b" {
  pipeline "named" { }
  expect_no_output = true
}
`,
    );
    expect(await runCli(['test', tests])).toEqual({
      code: 2,
      stdout: '',
      stderr: [
        `${tests}:1:7: "now" must be a string, got number`,
        `${tests}:8:5: test "a" > pipeline: unexpected attribute "foo"; a pipeline holds stage blocks`,
        `${tests}:12:5: test "a" > input: attribute "line" may only be set once`,
        `${tests}:13:14: test "a" > input: "labels.app" must be a string, got number`,
        `${tests}:17:18: test "a" > input: "arrival_ms" must be a non-negative number of milliseconds`,
        `${tests}:18:18: test "a" > input: "extracted" must be an object, got array`,
        `${tests}:22:18: test "a" > input: "arrival_ms" must be a non-negative number of milliseconds`,
        `${tests}:24:20: test "a" > expect: "at_ms" must be a non-negative number of milliseconds`,
        `${tests}:26:27: test "a" > expect: "structured_metadata.k" must be a string, got bool`,
        `${tests}:30:13: test "a" > expect_metric: "value" must be a number, got string`,
        `${tests}:32:22: test "a": "expect_no_output" must be a bool, got string`,
        '',
      ].join('\n'),
    });
  });

  it('exits 2 for a syntax error, a bad config file (at its own positions) and a test file without tests', async () => {
    const syntax = file('syntax.test.alloy', 'test "a" {\n  input { line = "x" \n}\n');
    const result = await runCli(['test', syntax]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^${syntax.replaceAll('.', '\\.')}:\\d+:\\d+: `));

    const config = file('broken.alloy', 'stage.regex {\n  expression = "(a"\n}\n');
    const uses = file('uses-broken.test.alloy', 'test "a" {\n  config = "broken.alloy"\n  expect_no_output = true\n}\n');
    expect(await runCli(['test', uses])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${config}:2:17: stage.regex: could not compile regular expression: error parsing regexp: missing closing ): \`(a\`\n`,
    });

    const empty = file('empty.test.alloy', '// nothing yet\n');
    expect(await runCli(['test', empty])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${empty}:1:1: no test blocks; write test "NAME" { … }\n`,
    });
    expect(await runCli(['test', join(dir, 'absent.test.alloy')])).toEqual({
      code: 2,
      stdout: '',
      stderr: `${join(dir, 'absent.test.alloy')}: no such file\n`,
    });
  });

  it('runs the tests of several files in order, and needs at least one', async () => {
    const a = file('a.test.alloy', `test "one" {\n  ${MULTILINE}\n  input { line = "START" }\n  expect { line = "START" }\n}\n`);
    const b = file('b.test.alloy', `test "two" {\n  ${MULTILINE}\n  input { line = "x" }\n  expect { line = "y" }\n}\n`);
    const result = await runCli(['test', a, b]);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n').filter((l) => !l.startsWith(' '))).toEqual(['ok   one', 'FAIL two', '1 passed, 1 failed', '']);
    expect(await runCli(['test'])).toEqual({ code: 1, stdout: '', stderr: 'rivulet test: test needs at least one test FILE\n' });
  });
});
