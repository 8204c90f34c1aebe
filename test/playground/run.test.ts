import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../index.js';
import type { RunResult, TraceStep } from '../../playground/api.js';
import {
  checkConfig,
  type HostAccess,
  MAX_ENTRIES,
  readInputs,
  runPlayground,
  RunRequestError,
  seededRandom,
} from '../../playground/run.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 25);
const NOW = '2024-05-01T12:00:00Z';

function steps(result: RunResult, trace: number): string[] {
  return result.traces[trace]!.steps.map((s: TraceStep) => `${result.stages[s.stage]!.name}:${s.outcome}`);
}

describe('runPlayground', () => {
  it('forwards entries in the rivulet process form and records what each stage changed', async () => {
    const result = await runPlayground({
      config: 'stage.json {\n  expressions = { level = "" }\n}\n\nstage.labels {\n  values = { level = "" }\n}\n',
      input: '{"line":"{\\"level\\":\\"warn\\"}","labels":{"app":"api"},"timestamp":"2024-05-01T11:00:00Z"}\n',
      inputFormat: 'jsonl',
      now: NOW,
    });
    expect(result.errors).toEqual([]);
    expect(result.entries).toEqual([
      {
        labels: { app: 'api', level: 'warn' },
        line: '{"level":"warn"}',
        timestamp: '2024-05-01T11:00:00.000000000Z',
        structured_metadata: {},
        extracted: { app: 'api', level: 'warn' },
      },
    ]);
    expect(result.outputs).toEqual([{ trace: 0, atMs: 0 }]);
    expect(result.stages.map((s) => [s.name, s.line, s.col, s.kind, s.parent])).toEqual([
      ['stage.json', 1, 1, 'map', null],
      ['stage.labels', 5, 1, 'map', null],
    ]);
    const [json, labels] = result.traces[0]!.steps;
    expect(json!.outcome).toBe('changed');
    expect(json!.changes).toEqual(['extracted +level="warn"']);
    expect(json!.before!.extracted).toEqual({ app: 'api' });
    expect(labels!.changes).toEqual(['labels +level="warn"']);
    expect(result.traces[0]!.fate).toEqual({ kind: 'forwarded', output: 0 });
    expect(result.startedAt).toBe('2024-05-01T12:00:00.000000000Z');
  });

  it('says which stage dropped an entry and why', async () => {
    const result = await runPlayground({
      config: 'stage.drop {\n  expression = "healthz"\n  longer_than = "4B"\n  drop_counter_reason = "noise"\n}\n',
      input: 'GET /healthz\nGET /\n',
      inputFormat: 'text',
      now: NOW,
    });
    expect(result.entries.map((e) => e.line)).toEqual(['GET /']);
    expect(result.traces[0]!.fate).toEqual({
      kind: 'dropped',
      stage: 0,
      reason: 'every condition held: the line matches "healthz" and the line is longer than 4B (counted as reason "noise")',
    });
    expect(steps(result, 0)).toEqual(['stage.drop:dropped']);
    expect(result.metrics).toContain('logs_process_dropped_lines_total{reason="noise"} 1');
  });

  it('shows the match branch an entry took, with the nested stages after the match step', async () => {
    const config = [
      'logs.process "default" {',
      '  stage.match {',
      '    selector = "{app=\\"api\\"}"',
      '    stage.static_labels {',
      '      values = { team = "core" }',
      '    }',
      '  }',
      '  stage.match {',
      '    selector = "{app=\\"db\\"}"',
      '    action   = "drop"',
      '  }',
      '  forward_to = []',
      '}',
    ].join('\n');
    const input = ['{"line":"a","labels":{"app":"api"}}', '{"line":"b","labels":{"app":"web"}}', '{"line":"c","labels":{"app":"db"}}'].join(
      '\n',
    );
    const result = await runPlayground({ config, input, inputFormat: 'jsonl', now: NOW });
    expect(result.stages.map((s) => [s.name, s.depth, s.parent])).toEqual([
      ['stage.match', 0, null],
      ['stage.static_labels', 1, 0],
      ['stage.match', 0, null],
    ]);
    expect(steps(result, 0)).toEqual(['stage.match:matched', 'stage.static_labels:changed', 'stage.match:not-matched']);
    expect(result.traces[0]!.steps[0]!.changes).toEqual(['labels +team="core"']);
    expect(steps(result, 1)).toEqual(['stage.match:not-matched', 'stage.match:not-matched']);
    expect(steps(result, 2)).toEqual(['stage.match:not-matched', 'stage.match:dropped']);
    expect(result.traces[2]!.fate).toEqual({
      kind: 'dropped',
      stage: 2,
      reason: 'matched selector {app="db"} with action "drop" (counted as reason "match_stage")',
    });
  });

  it('names the nested stage when an entry is dropped inside a match branch', async () => {
    const config = 'stage.match {\n  selector = "{app=\\"api\\"}"\n  stage.drop {\n    expression = "debug"\n  }\n}\n';
    const result = await runPlayground({ config, input: '{"line":"debug x","labels":{"app":"api"}}\n', inputFormat: 'jsonl', now: NOW });
    expect(steps(result, 0)).toEqual(['stage.match:matched', 'stage.drop:dropped']);
    expect(result.traces[0]!.fate).toMatchObject({ kind: 'dropped', stage: 1 });
  });

  it('flushes a multiline block on the idle timer of the virtual clock when arrivals leave a gap', async () => {
    const config = 'stage.multiline {\n  firstline = "^START"\n  max_wait_time = "3s"\n}\n';
    const input = [
      '{"line":"START a","arrival_ms":0}',
      '{"line":"  a2","arrival_ms":10}',
      '{"line":"START b","arrival_ms":5000}',
      '{"line":"START c","arrival_ms":5100}',
    ].join('\n');
    const result = await runPlayground({ config, input, inputFormat: 'jsonl', now: NOW });
    expect(result.entries.map((e) => e.line)).toEqual(['START a\n  a2', 'START b', 'START c']);
    expect(result.flushes.map((f) => [f.atMs, f.trigger, f.trace])).toEqual([
      [3010, { kind: 'timer' }, 0],
      [5100, { kind: 'input', input: 3 }, 2],
      [5100, { kind: 'end' }, 3],
    ]);
    expect(result.outputs).toEqual([
      { trace: 0, atMs: 3010 },
      { trace: 2, atMs: 5100 },
      { trace: 3, atMs: 5100 },
    ]);
    expect(result.traces[1]!.fate).toEqual({ kind: 'merged', stage: 0, into: 0 });
    const released = result.traces[0]!.steps[0]!;
    expect([released.outcome, released.atMs, released.releasedAtMs, released.changes]).toEqual([
      'released',
      0,
      3010,
      ['line "START a" -> "START a\\n  a2"'],
    ]);
    expect(result.endMs).toBe(5100);
  });

  it('joins CRI partial lines into the entry of the full line', async () => {
    const input = ['2024-05-01T12:00:00Z stdout P one ', '2024-05-01T12:00:01Z stdout P two ', '2024-05-01T12:00:02Z stdout F three'].join(
      '\n',
    );
    const result = await runPlayground({ config: 'stage.cri {}\n', input, inputFormat: 'text', now: NOW });
    expect(result.entries.map((e) => e.line)).toEqual(['one two three']);
    expect(result.traces.map((t) => t.fate)).toEqual([
      { kind: 'merged', stage: 0, into: 2 },
      { kind: 'merged', stage: 0, into: 2 },
      { kind: 'forwarded', output: 0 },
    ]);
    expect(steps(result, 2)).toEqual(['stage.cri:passed']);
    expect(result.traces[2]!.steps[0]!.changes).toContain('timestamp 2024-05-01T12:00:00.000000000Z -> 2024-05-01T12:00:02.000000000Z');
  });

  it('records the metric series a stage.metrics step updated', async () => {
    const config = 'stage.metrics {\n  metric.counter {\n    name = "lines_total"\n    match_all = true\n    action = "inc"\n  }\n}\n';
    const result = await runPlayground({ config, input: '{"line":"x","labels":{"app":"api"}}\n', inputFormat: 'jsonl', now: NOW });
    const step = result.traces[0]!.steps[0]!;
    expect([step.outcome, step.changes, step.effects]).toEqual([
      'unchanged',
      [],
      ['counter logs_process_custom_lines_total{app="api"} +1'],
    ]);
  });

  it('releases entries a waiting limit holds as tokens refill on the virtual clock', async () => {
    const config = 'stage.limit {\n  rate = 1\n  burst = 1\n  drop = false\n}\n';
    const result = await runPlayground({ config, input: 'a\nb\n', inputFormat: 'text', now: NOW });
    expect(result.entries.map((e) => e.line)).toEqual(['a', 'b']);
    expect(result.traces[0]!.steps[0]!.outcome).toBe('passed');
    const held = result.traces[1]!.steps[0]!;
    expect([held.outcome, held.releasedAtMs]).toEqual(['released', 1000]);
    expect(result.flushes).toEqual([{ stage: 0, atMs: 1000, trigger: { kind: 'end' }, trace: 1, line: 'b' }]);
  });

  it('starts a new trace when an operator sends an entry on a second time', async () => {
    const config = 'stage.multiline {\n  firstline = "^S"\n  max_lines = 2\n}\n';
    const result = await runPlayground({ config, input: 'S1\nx\ny\n', inputFormat: 'text', now: NOW });
    expect(result.entries.map((e) => e.line)).toEqual(['S1\nx', 'y']);
    expect(result.traces.map((t) => [t.origin, t.fate])).toEqual([
      [
        { kind: 'input', input: 0, line: 1 },
        { kind: 'forwarded', output: 0 },
      ],
      [
        { kind: 'input', input: 1, line: 2 },
        { kind: 'merged', stage: 0, into: 0 },
      ],
      [
        { kind: 'input', input: 2, line: 3 },
        { kind: 'merged', stage: 0, into: 3 },
      ],
      [
        { kind: 'emitted', stage: 0, from: 0 },
        { kind: 'forwarded', output: 1 },
      ],
    ]);
  });

  it('reports config errors at their line and column without running', async () => {
    const result = await runPlayground({ config: 'stage.json {\n  expressions = 1\n}\n', input: 'x\n', inputFormat: 'text', now: NOW });
    expect(result.errors).toEqual([{ line: 2, col: 17, message: 'stage.json: attribute "expressions": expected map(string), got number' }]);
    expect(result.entries).toEqual([]);
    expect(result.traces).toEqual([]);
  });

  it('reports a build error of a stage at the unbalanced parenthesis in its attribute', () => {
    const config = 'logs.process "default" {\n  stage.multiline {\n    firstline = "("\n  }\n}\n';
    expect(checkConfig(config)).toEqual([
      {
        line: 3,
        col: 18,
        message:
          'logs.process "default" > stage.multiline: multiline stage first line regex compilation error: error parsing regexp: missing closing ): `(`',
      },
    ]);
    expect(checkConfig('stage.decolorize {}\n')).toEqual([]);
  });

  it('reports unreadable input lines and runs the others', async () => {
    const input = '{"line":"a"}\nnot json\n\n{"line":"b","arrival_ms":-1}\n{"line":"c","arrival_ms":1500}\n{"line": 3}\n';
    const result = await runPlayground({ config: 'stage.decolorize {}\n', input, inputFormat: 'jsonl', now: NOW });
    expect(result.inputErrors).toEqual([
      { line: 2, message: `invalid JSON: Unexpected token 'o', "not json" is not valid JSON` },
      { line: 4, message: '"arrival_ms" must be a non-negative number of milliseconds' },
      { line: 6, message: '"line" must be a string' },
    ]);
    expect(result.entries.map((e) => [e.line, e.timestamp])).toEqual([
      ['a', '2024-05-01T12:00:00.000000000Z'],
      ['c', '2024-05-01T12:00:01.500000000Z'],
    ]);
  });

  it('rejects a now that is not RFC 3339', async () => {
    await expect(runPlayground({ config: '', input: '', inputFormat: 'text', now: 'yesterday' })).rejects.toThrow(RunRequestError);
  });

  it('gives the same sampling picks for the same seed', async () => {
    const request = {
      config: 'stage.sampling {\n  rate = 0.5\n}\n',
      input: 'a\nb\nc\nd\ne\nf\ng\nh\n',
      inputFormat: 'text' as const,
      now: NOW,
      seed: 42,
    };
    const first = await runPlayground(request);
    const second = await runPlayground(request);
    expect(second.entries).toEqual(first.entries);
    expect(first.entries.length).toBeGreaterThan(0);
    expect(first.entries.length).toBeLessThan(8);
  });
});

describe('the sandbox of a playground run', () => {
  const SECRET = 'RIVULET_PLAYGROUND_SANDBOX_TEST';
  beforeEach(() => {
    process.env[SECRET] = 's3cret';
  });
  afterEach(() => {
    delete process.env[SECRET];
  });
  const run = (config: string, access?: HostAccess) =>
    runPlayground({ config, input: '{"line":"10.0.0.1"}\n', inputFormat: 'jsonl', now: NOW }, access);

  it('reads every environment variable as unset, in expressions and templates, unless host access is allowed', async () => {
    const config = [
      'stage.static_labels {',
      `  values = { a = "[" + sys.env("${SECRET}") + "]", b = "[" + env("${SECRET}") + "]" }`,
      '}',
      'stage.template {',
      '  source   = "t"',
      `  template = "[{{ env \\"${SECRET}\\" }}|{{ expandenv \\"$${SECRET}\\" }}]"`,
      '}',
    ].join('\n');
    const sandboxed = await run(config);
    expect(sandboxed.errors).toEqual([]);
    expect([sandboxed.entries[0]!.labels, sandboxed.entries[0]!.extracted]).toEqual([{ a: '[]', b: '[]' }, { t: '[|]' }]);
    const open = await run(config, { allowHostAccess: true });
    expect([open.entries[0]!.labels, open.entries[0]!.extracted]).toEqual([{ a: '[s3cret]', b: '[s3cret]' }, { t: '[s3cret|s3cret]' }]);
  });

  it('hides the host name from constants.hostname', async () => {
    const config = 'stage.static_labels {\n  values = { h = "[" + constants.hostname + "]", os = constants.os }\n}\n';
    expect((await run(config)).entries[0]!.labels).toEqual({ h: '[]', os: 'linux' });
    expect((await run(config, { allowHostAccess: true })).entries[0]!.labels).toEqual({ h: `[${hostname()}]`, os: 'linux' });
  });

  it('resolves no host name in templates: the render fails and the entry passes unchanged', async () => {
    const result = await run('stage.template {\n  source   = "t"\n  template = "{{ getHostByName \\"localhost\\" }}"\n}\n');
    expect([result.errors, result.entries[0]!.extracted, result.traces[0]!.steps[0]!.outcome]).toEqual([[], {}, 'unchanged']);
  });

  it('refuses file paths in stage configs, but for the files it lists', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rivulet-playground-sandbox-'));
    try {
      const db = join(dir, 'missing.mmdb');
      const config = `stage.geoip {\n  db      = "${db}"\n  source  = "ip"\n  db_type = "city"\n}\n`;
      const refused = `stage.geoip: this run may not read files such as "${db}" (start the playground with --allow-host-access to allow it)`;
      expect((await run(config)).errors).toEqual([{ line: 2, col: 3, message: refused }]);
      expect(checkConfig(config)).toEqual([{ line: 2, col: 3, message: refused }]);
      const opened = `stage.geoip: open ${db}: no such file or directory`;
      expect((await run(config, { allowHostAccess: true })).errors).toEqual([{ line: 2, col: 3, message: opened }]);
      expect((await run(config, { readableFiles: [db] })).errors).toEqual([{ line: 2, col: 3, message: opened }]);
      expect(checkConfig(config, { readableFiles: [join(dir, '.', 'missing.mmdb')] })).toEqual([{ line: 2, col: 3, message: opened }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('readInputs', () => {
  it('splits lines as the CLI reads them and keeps empty text lines', () => {
    const { inputs } = readInputs({ config: '', input: 'a\r\n\rb\n\nc', inputFormat: 'text' });
    expect(inputs.map((i) => i.line)).toEqual([1, 2, 3, 4, 5]);
  });

  it('runs at most MAX_ENTRIES entries and says where it stopped', () => {
    const { inputs, problems } = readInputs({ config: '', input: 'x\n'.repeat(MAX_ENTRIES + 2), inputFormat: 'text' });
    expect(inputs).toHaveLength(MAX_ENTRIES);
    expect(problems).toEqual([
      { line: MAX_ENTRIES + 1, message: `only the first ${MAX_ENTRIES} entries are run; this one and the rest are skipped` },
    ]);
  });

  it('never lets arrival offsets run backwards and prefers explicit arrivals', () => {
    const { inputs } = readInputs({
      config: '',
      input: '{"line":"a","arrival_ms":500}\n{"line":"b","arrival_ms":100}\n{"line":"c"}\n',
      inputFormat: 'jsonl',
      arrivals: [null, null, 900],
    });
    expect(inputs.map((i) => i.arrivalMs)).toEqual([500, 500, 900]);
  });
});

describe('seededRandom', () => {
  it('stays in [0, 1) and repeats for a seed', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const a = seededRandom(seed);
        const b = seededRandom(seed);
        for (let i = 0; i < 20; i++) {
          const x = a();
          expect(x).toBe(b());
          expect(x >= 0 && x < 1).toBe(true);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('trace invariants', () => {
  const CONFIG = [
    'stage.multiline {',
    '  firstline = "^S"',
    '  max_lines = 3',
    '  max_wait_time = "1s"',
    '}',
    'stage.match {',
    '  selector = "{app=\\"a\\"} |= \\"x\\""',
    '  stage.drop {',
    '    expression = "y"',
    '  }',
    '}',
    'stage.limit {',
    '  rate = 2',
    '  burst = 1',
    '  drop = false',
    '}',
  ].join('\n');
  const entryArb = fc.record({
    line: fc.constantFrom('S', 'x', 'y', 'xy', 'Sx', 'z'),
    labels: fc.record({ app: fc.constantFrom('a', 'b') }),
    gap: fc.nat({ max: 1500 }),
  });

  it('gives every input one fate and maps each output to exactly one forwarded trace', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entryArb, { maxLength: 12 }), async (entries) => {
        let at = 0;
        const input = entries.map((e) => JSON.stringify({ line: e.line, labels: e.labels, arrival_ms: (at += e.gap) })).join('\n');
        const result = await runPlayground({ config: CONFIG, input, inputFormat: 'jsonl', now: NOW });
        expect(result.errors).toEqual([]);
        expect(result.traces.filter((t) => t.origin.kind === 'input')).toHaveLength(entries.length);
        const forwarded = result.traces.filter((t) => t.fate.kind === 'forwarded').map((t) => (t.fate as { output: number }).output);
        expect(forwarded.sort((a, b) => a - b)).toEqual(result.entries.map((_, i) => i));
        result.outputs.forEach((o, i) => expect(result.traces[o.trace]!.fate).toEqual({ kind: 'forwarded', output: i }));
        for (const t of result.traces) {
          if (t.fate.kind === 'merged') expect(result.traces[t.fate.into]).toBeDefined();
          expect(t.fate.kind === 'held' && t.fate.stage === -1).toBe(false);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
