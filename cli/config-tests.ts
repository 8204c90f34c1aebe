import { dirname, join } from 'node:path';
import { Registry } from 'prom-client';
import { ManualClock } from '../core/clock.js';
import { labelsKey, type Entry } from '../core/entry.js';
import { entryToJson } from '../core/entry-json.js';
import { loadStageList, standaloneScope, startProcessRun } from '../core/process.js';
import { decodeStageBlocks, type StageSpec } from '../core/stage.js';
import { loadConfigStageModules } from '../core/stage-modules.js';
import type { Block } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors, configErrorsOf, type Position } from '../lib/config/errors.js';
import { isCapsule, typeOf, type EvalScope } from '../lib/config/evaluate.js';
import { parseConfig } from '../lib/config/parser.js';
import {
  blockTitle,
  decodeValues,
  nestedBlocks,
  nestedValues,
  t,
  typeName,
  type BlockSpec,
  type DecodedBlock,
  type DecodeWording,
  type FieldSpec,
  type FieldType,
  type NestedBlockSpec,
} from '../lib/config/schema.js';
import { didYouMean } from '../lib/suggest.js';
import { formatRFC3339Nano, parseRFC3339 } from '../lib/time/rfc3339.js';
import { briefReason, PathError, readTextFile } from './io.js';

/**
 * Config tests (`rivulet test`): a test file, written in the config block syntax, holds `test`
 * blocks; each gives input entries (with optional arrival offsets on a virtual clock), runs them
 * through a stage list exactly as `rivulet process --now` does, and checks the forwarded entries
 * and metric values. The format is documented in docs/config-tests.md.
 */

/** The clock a test starts at when neither the test nor the file sets `now`. */
export const DEFAULT_NOW = '1970-01-01T00:00:00Z';

export interface TestInput {
  readonly entry: Omit<Entry, 'timestamp'> & { readonly timestamp?: bigint };
  readonly arrivalMs: number;
}

/** One `expect` block: only the fields written are compared. */
export interface ExpectedOutput {
  readonly pos: Position;
  readonly line?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly timestamp?: bigint;
  readonly structuredMetadata?: Readonly<Record<string, string>>;
  /** Compared key by key: keys not written here are not checked. */
  readonly extracted?: Readonly<Record<string, unknown>>;
  readonly atMs?: number;
}

export interface ExpectedMetric {
  readonly pos: Position;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface TestCase {
  readonly name: string;
  readonly pos: Position;
  readonly specs: readonly StageSpec[];
  readonly startNs: bigint;
  readonly inputs: readonly TestInput[];
  /** Undefined when the test checks no outputs (only metrics). */
  readonly outputs?: readonly ExpectedOutput[];
  readonly metrics: readonly ExpectedMetric[];
}

/** What a test file names: a file of stages, read once however many tests use it. */
export type ConfigCache = Map<string, Promise<StageSpec[]>>;

/** The file's own attributes: defaults for every test. */
const FILE_SPEC = {
  fields: {
    config: { kind: t.string, doc: 'The stage list the tests run, relative to the test file.' },
    now: { kind: t.string, doc: 'The time (RFC 3339) the virtual clock starts at.' },
  },
} satisfies BlockSpec;

/** What an input and an expected output both say of an entry. */
const ENTRY_FIELDS = {
  line: { kind: t.string, doc: 'The log line.' },
  labels: { kind: t.map(t.string), doc: 'An object of strings.' },
  timestamp: { kind: t.string, doc: 'An RFC 3339 time.' },
  structured_metadata: { kind: t.map(t.string), doc: 'An object of strings.' },
  extracted: { kind: t.map(t.any), doc: 'An object.' },
} satisfies Record<string, FieldSpec>;

const INPUT_SPEC = {
  doc: 'An input entry.',
  multiple: true,
  fields: {
    ...ENTRY_FIELDS,
    line: { ...ENTRY_FIELDS.line, required: true },
    arrival_ms: { kind: t.number, doc: 'When the entry arrives, in milliseconds after now.' },
  },
} satisfies NestedBlockSpec;

const EXPECT_SPEC = {
  doc: 'An expected output entry.',
  multiple: true,
  fields: { ...ENTRY_FIELDS, at_ms: { kind: t.number, doc: 'When the entry was forwarded, in milliseconds after now.' } },
} satisfies NestedBlockSpec;

const METRIC_SPEC = {
  doc: 'A metric value the run must leave behind.',
  multiple: true,
  fields: {
    name: { kind: t.string, required: true, doc: 'The series name as Prometheus shows it.' },
    labels: { kind: t.map(t.string), doc: 'Labels the series has.' },
    value: { kind: t.number, required: true, doc: 'The expected value.' },
  },
} satisfies NestedBlockSpec;

const TEST_SPEC = {
  fields: {
    name: { kind: t.string, doc: "The test's name, when it has no label." },
    config: { kind: t.string, doc: 'The stage list file, relative to the test file.' },
    now: { kind: t.string, doc: 'The start of the virtual clock for this test.' },
    expect_no_output: { kind: t.bool, doc: 'The pipeline must forward nothing.' },
  },
  blocks: {
    // Taken as a list, so that a second one is reported in this format's words (at most one pipeline block).
    pipeline: { doc: 'The stage list written inline: bare stage blocks.', multiple: true, fields: {}, stages: true },
    input: INPUT_SPEC,
    expect: EXPECT_SPEC,
    expect_metric: METRIC_SPEC,
  },
} satisfies BlockSpec;

/** Attributes in milliseconds of virtual time. */
const MILLISECONDS = ['arrival_ms', 'at_ms'];

/** How a test file words a value of the wrong type: `"line" must be a string, got number`. */
const TEST_FILE_WORDING: DecodeWording = {
  // A test states its values exactly: `line = 1` is a mistake, not the line "1".
  numbersAsStrings: false,
  mistyped: (at, kind, value) =>
    MILLISECONDS.includes(at)
      ? notMilliseconds(at)
      : `"${at}" must be ${described(kind)}, got ${isCapsule(value) ? 'capsule' : typeOf(value)}`,
  repeated: (name) => `attribute "${name}" may only be set once`,
};

function described(kind: FieldType): string {
  switch (kind.type) {
    case 'map':
      return 'an object';
    case 'int':
    case 'number':
      return 'a number';
    default:
      return `a ${typeName(kind)}`;
  }
}

function notMilliseconds(name: string): string {
  return `"${name}" must be a non-negative number of milliseconds`;
}

/** Decoding in a test file: every error kept in `errors`, the blocks that decoded still read. */
interface Reading {
  readonly scope: EvalScope;
  readonly errors: ConfigError[];
}

/**
 * Reads a test file and every config it names (loading their `stages.import` modules and
 * building each stage list once, so a bad regex fails here rather than mid-run). Throws
 * ConfigErrors, every error positioned, when the file or a config is invalid.
 */
export async function readTestFile(file: string, text: string, cache: ConfigCache = new Map()): Promise<TestCase[]> {
  const ast = parseConfig(text, file);
  const reading: Reading = { scope: standaloneScope(), errors: [] };
  const { errors } = reading;
  const start: Position = { file, line: 1, col: 1, offset: 0 };
  // The file's attributes are decoded as a block's; its blocks are tests.
  const top = decodeIn(
    reading,
    { kind: 'block', name: '', body: ast.body.filter((s) => s.kind === 'attribute'), pos: start, endPos: start },
    FILE_SPEC,
    [],
  );
  const defaultConfig: ConfigRef = {
    file: top.values.config,
    at: valuePos(top.decoded, 'config'),
    written: top.decoded.positions.has('config'),
  };
  const defaultNow = top.values.now === undefined ? undefined : timeOf(reading, top.values.now, 'now', top.decoded, []);
  for (const stmt of ast.body) {
    if (stmt.kind === 'block' && stmt.name !== 'test')
      errors.push(
        new ConfigError(
          `unrecognized block name "${stmt.name}"${didYouMean(stmt.name, ['test'])}; a test file holds test blocks`,
          stmt.pos,
        ),
      );
  }
  const blocks = ast.body.filter((s): s is Block => s.kind === 'block' && s.name === 'test');
  if (blocks.length === 0 && errors.length === 0) errors.push(new ConfigError('no test blocks; write test "NAME" { … }', start));

  const pending: Promise<TestCase | undefined>[] = [];
  const names = new Map<string, Position>();
  for (const block of blocks) {
    const path = [blockTitle(block)];
    const { values, decoded } = decodeIn(reading, withBareStageLists(reading, block, path), TEST_SPEC, path);
    const written = (name: string) => decoded.positions.has(name);
    const name = written('name') ? values.name : block.label;
    if (name === undefined) {
      if (!written('name')) errors.push(new ConfigError('a test needs a name: test "NAME" { … } or name = "…"', block.pos));
      continue;
    }
    const earlier = names.get(name);
    if (earlier) errors.push(new ConfigError(`test ${JSON.stringify(name)} already declared at ${where(earlier)}`, block.pos));
    names.set(name, block.pos);

    const startNs = !written('now')
      ? (defaultNow ?? parseRFC3339(DEFAULT_NOW))
      : values.now === undefined
        ? undefined
        : timeOf(reading, values.now, 'now', decoded, path);
    const inputs = readInputs(reading, nestedValues(decoded, 'input', INPUT_SPEC), [...path, 'input']);
    const outputs = nestedValues(decoded, 'expect', EXPECT_SPEC).flatMap((e) => readExpect(reading, e, [...path, 'expect']) ?? []);
    const metrics = nestedValues(decoded, 'expect_metric', METRIC_SPEC).map(({ values: m, block: at }) => ({
      pos: at.pos,
      name: m.name,
      labels: m.labels ?? {},
      value: m.value,
    }));
    // What the test checks is what it wrote, whether or not each block is valid.
    const expects = nestedBlocks(block, 'expect').length;
    const noOutput = values.expect_no_output;
    if (noOutput === true && expects > 0)
      errors.push(
        new ConfigError(
          'expect_no_output = true contradicts the expect blocks of this test',
          decoded.positions.get('expect_no_output'),
          path,
        ),
      );
    if (noOutput !== true && expects === 0 && nestedBlocks(block, 'expect_metric').length === 0)
      errors.push(new ConfigError('the test checks nothing: add expect, expect_metric or expect_no_output = true', block.pos, path));
    if (startNs === undefined) continue;

    const config: ConfigRef = written('config') ? { file: values.config, at: valuePos(decoded, 'config'), written: true } : defaultConfig;
    const specs = stageListOf(reading, block, decoded, config, path, cache);
    if (specs === undefined) continue;
    pending.push(
      specs.then(
        (loaded): TestCase => ({
          name,
          pos: block.pos,
          specs: loaded,
          startNs,
          inputs,
          outputs: noOutput === true ? [] : outputs.length > 0 ? outputs : undefined,
          metrics,
        }),
        (err: unknown) => {
          errors.push(...configErrorsOf(err));
          return undefined;
        },
      ),
    );
  }
  const cases = await Promise.all(pending);
  if (errors.length > 0) throw new ConfigErrors(inFileOrder(file, dedupe(errors)));
  return cases.filter((c) => c !== undefined);
}

/**
 * A test block with its `pipeline` blocks reduced to their stage blocks, as the schema decodes
 * them: a label on `pipeline` is allowed (and ignored), and an attribute in it is reported in this
 * format's words, since a pipeline holds only stages.
 */
function withBareStageLists(reading: Reading, block: Block, path: readonly string[]): Block {
  const body = block.body.map((stmt) => {
    if (stmt.kind !== 'block' || stmt.name !== 'pipeline') return stmt;
    for (const inner of stmt.body)
      if (inner.kind === 'attribute')
        reading.errors.push(
          new ConfigError(`unexpected attribute "${inner.name}"; a pipeline holds stage blocks`, inner.pos, [...path, 'pipeline']),
        );
    return { ...stmt, label: undefined, body: stmt.body.filter((inner) => inner.kind === 'block') };
  });
  return { ...block, body };
}

/** A block decoded in a test file, its errors kept with the file's. */
function decodeIn<S extends BlockSpec>(reading: Reading, block: Block, spec: S, path: readonly string[]) {
  return decodeValues(block, spec, reading.scope, path, { wording: TEST_FILE_WORDING, errors: reading.errors });
}

/** A `config` attribute: the file it names (undefined when it is not a string) and where its value is. */
interface ConfigRef {
  readonly file: string | undefined;
  readonly at: Position | undefined;
  readonly written: boolean;
}

/** The stages a test runs: its inline `pipeline` block, its `config` file, or the file's `config`. */
function stageListOf(
  reading: Reading,
  block: Block,
  decoded: DecodedBlock,
  config: ConfigRef,
  path: readonly string[],
  cache: ConfigCache,
): Promise<StageSpec[]> | undefined {
  const { errors } = reading;
  const [pipelineBlock, second] = nestedBlocks(block, 'pipeline');
  if (second) {
    errors.push(new ConfigError('a test has at most one pipeline block', second.pos, path));
    return undefined;
  }
  if (pipelineBlock) {
    const configAttr = decoded.positions.get('config');
    if (configAttr) {
      errors.push(new ConfigError('a test takes either config = "FILE" or a pipeline block, not both', configAttr, path));
      return undefined;
    }
    const pipeline = decoded.nested?.get('pipeline')?.[0];
    if (!pipeline) return undefined;
    try {
      return Promise.resolve(inlineStages(reading, pipeline.decoded));
    } catch (err) {
      errors.push(...configErrorsOf(err));
      return undefined;
    }
  }
  if (config.file === undefined || config.at === undefined) {
    if (!config.written)
      errors.push(new ConfigError('the test has no stages: set config = "FILE" or write a pipeline { stage.… } block', block.pos, path));
    return undefined;
  }
  const file = join(dirname(block.pos.file), config.file);
  let loaded = cache.get(file);
  if (!loaded) {
    loaded = loadConfigFile(file, config.at);
    cache.set(file, loaded);
  }
  return loaded;
}

/** A stage list file, as `rivulet process --config` reads it, its stage modules loaded first. */
async function loadConfigFile(file: string, at: Position): Promise<StageSpec[]> {
  let text: string;
  try {
    text = readTextFile(file);
  } catch (err) {
    if (!(err instanceof PathError)) throw err;
    throw new ConfigError(`config ${JSON.stringify(file)}: ${briefReason(err)}`, at);
  }
  await loadConfigStageModules(text, file);
  const specs = loadStageList(text, file);
  checkBuilds(specs);
  return specs;
}

/** `pipeline { stage.json { … } … }`: its bare stage blocks, decoded as a config's. */
function inlineStages(reading: Reading, pipeline: DecodedBlock): StageSpec[] {
  const specs = decodeStageBlocks(pipeline.stageBlocks, reading.scope);
  checkBuilds(specs);
  return specs;
}

/** Builds the stages once, so what decoding cannot check (regexes, templates) fails up front. */
function checkBuilds(specs: readonly StageSpec[]): void {
  const run = startProcessRun(specs, { clock: new ManualClock(), registry: new Registry(), onEntry: () => {} });
  run.dispose();
}

type Decoded<S extends BlockSpec> = ReturnType<typeof nestedValues<S>>[number];

function readInputs(reading: Reading, blocks: readonly Decoded<typeof INPUT_SPEC>[], path: readonly string[]): TestInput[] {
  const inputs: TestInput[] = [];
  let lastArrival = 0;
  for (const { values, decoded } of blocks) {
    const arrivalMs = values.arrival_ms === undefined ? lastArrival : milliseconds(reading, values.arrival_ms, 'arrival_ms', decoded, path);
    if (arrivalMs === undefined) continue;
    if (arrivalMs < lastArrival) {
      reading.errors.push(
        new ConfigError(
          `arrival_ms ${arrivalMs} is before the previous input's ${lastArrival}; inputs arrive in the order written`,
          valuePos(decoded, 'arrival_ms'),
          path,
        ),
      );
      continue;
    }
    lastArrival = arrivalMs;
    const timestamp = values.timestamp === undefined ? undefined : timeOf(reading, values.timestamp, 'timestamp', decoded, path);
    if (values.timestamp !== undefined && timestamp === undefined) continue;
    inputs.push({
      arrivalMs,
      entry: {
        line: values.line,
        labels: { ...values.labels },
        timestamp,
        structuredMetadata: Object.entries(values.structured_metadata ?? {}).map(([name, value]) => ({ name, value })),
        extracted: { ...values.extracted },
      },
    });
  }
  return inputs;
}

/** An `expect` block, or undefined (its errors reported) when its time or offset is not one. */
function readExpect(
  reading: Reading,
  { values, decoded, block }: Decoded<typeof EXPECT_SPEC>,
  path: readonly string[],
): ExpectedOutput | undefined {
  const timestamp = values.timestamp === undefined ? undefined : timeOf(reading, values.timestamp, 'timestamp', decoded, path);
  const atMs = values.at_ms === undefined ? undefined : milliseconds(reading, values.at_ms, 'at_ms', decoded, path);
  if ((values.timestamp !== undefined && timestamp === undefined) || (values.at_ms !== undefined && atMs === undefined)) return undefined;
  return {
    pos: block.pos,
    line: values.line,
    labels: values.labels,
    timestamp,
    structuredMetadata: values.structured_metadata,
    extracted: values.extracted,
    atMs,
  };
}

/** Where attribute `name`'s value is written. */
function valuePos(decoded: DecodedBlock, name: string): Position | undefined {
  return decoded.valueExprs?.get(name)?.pos;
}

/** An RFC 3339 time, or undefined when `text` is not one (the error reported at the value). */
function timeOf(reading: Reading, text: string, name: string, decoded: DecodedBlock, path: readonly string[]): bigint | undefined {
  try {
    return parseRFC3339(text);
  } catch (err) {
    reading.errors.push(new ConfigError(`"${name}" must be an RFC 3339 time: ${(err as Error).message}`, valuePos(decoded, name), path));
    return undefined;
  }
}

/** An offset in milliseconds, or undefined when it is negative (the error reported at the value). */
function milliseconds(reading: Reading, ms: number, name: string, decoded: DecodedBlock, path: readonly string[]): number | undefined {
  if (Number.isFinite(ms) && ms >= 0) return ms;
  reading.errors.push(new ConfigError(notMilliseconds(name), valuePos(decoded, name), path));
  return undefined;
}

function where(pos: Position): string {
  return `${pos.file}:${pos.line}:${pos.col}`;
}

/** The test file's errors in source order, then those of the configs it names. */
function inFileOrder(file: string, errors: readonly ConfigError[]): ConfigError[] {
  const rank = (e: ConfigError) => (e.pos?.file === file ? e.pos.offset : Number.MAX_SAFE_INTEGER);
  return [...errors].sort((a, b) => rank(a) - rank(b));
}

/** One error per message: a config shared by several tests fails once. */
function dedupe(errors: readonly ConfigError[]): ConfigError[] {
  const seen = new Set<string>();
  return errors.filter((e) => !seen.has(e.message) && seen.add(e.message));
}

/** What a run of one test saw. */
interface RunOutcome {
  readonly outputs: readonly { readonly entry: Entry; readonly atMs: number }[];
  readonly metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
  readonly completed: boolean;
}

/**
 * Runs a test as `rivulet process --now` would, but on a clock that first moves to each input's
 * arrival offset (so idle flushes and rate limits play out), and returns the mismatches, each a
 * line of the readable diff; an empty list means the test passed.
 */
export async function runTestCase(test: TestCase): Promise<string[]> {
  let outcome: RunOutcome;
  try {
    outcome = await runInputs(test);
  } catch (err) {
    return [`error: ${(err as Error).message}`];
  }
  const problems: string[] = [];
  if (!outcome.completed) problems.push('the pipeline did not complete at end of input');
  if (test.outputs) problems.push(...compareOutputs(test.outputs, outcome.outputs));
  for (const metric of test.metrics) problems.push(...compareMetric(metric, outcome.metrics));
  return problems;
}

async function runInputs(test: TestCase): Promise<RunOutcome> {
  const clock = new ManualClock(test.startNs);
  const registry = new Registry();
  const outputs: { entry: Entry; atMs: number }[] = [];
  let completed = false;
  const run = startProcessRun(test.specs, {
    clock,
    registry,
    onEntry: (entry) => outputs.push({ entry, atMs: clock.now() }),
    onComplete: () => (completed = true),
  });
  try {
    for (const input of test.inputs) {
      clock.advanceTo(input.arrivalMs);
      const { entry } = input;
      run.push({
        labels: { ...entry.labels },
        line: entry.line,
        timestamp: entry.timestamp ?? clock.nowNs(),
        structuredMetadata: entry.structuredMetadata.map((p) => ({ ...p })),
        extracted: { ...entry.extracted },
      });
    }
    // End of input, as `rivulet process` ends it: stages flush, then every pending timer runs.
    run.end();
    clock.runAll();
    // Read before disposing: disposing a stage.metrics stage removes its series.
    const metrics = await registry.getMetricsAsJSON();
    return { outputs, metrics, completed };
  } finally {
    run.dispose();
  }
}

function compareOutputs(expected: readonly ExpectedOutput[], actual: RunOutcome['outputs']): string[] {
  const problems: string[] = [];
  const count = Math.max(expected.length, actual.length);
  for (let i = 0; i < count; i++) {
    const want = expected[i];
    const got = actual[i];
    if (want && !got) {
      problems.push(`output ${i + 1} (${where(want.pos)}): missing; the pipeline forwarded ${plural(actual.length, 'entry', 'entries')}`);
      continue;
    }
    if (!want) {
      problems.push(`output ${i + 1}: unexpected ${entryToJson(got!.entry, false)}`);
      continue;
    }
    const fields = fieldDiffs(want, got!.entry, got!.atMs);
    if (fields.length > 0) problems.push(`output ${i + 1} (${where(want.pos)}):`, ...fields.map((f) => `  ${f}`));
  }
  return problems;
}

/** `FIELD` then indented `expected …` / `actual …` lines for each field that differs. */
function fieldDiffs(want: ExpectedOutput, entry: Entry, atMs: number): string[] {
  const out: string[] = [];
  const differ = (field: string, expected: string, actual: string) => {
    if (expected !== actual) out.push(field, `  expected ${expected}`, `  actual   ${actual}`);
  };
  if (want.line !== undefined) differ('line', JSON.stringify(want.line), JSON.stringify(entry.line));
  if (want.labels !== undefined) differ('labels', labelsKey({ ...want.labels }), labelsKey(entry.labels));
  if (want.timestamp !== undefined) differ('timestamp', formatRFC3339Nano(want.timestamp), formatRFC3339Nano(entry.timestamp));
  if (want.structuredMetadata !== undefined) {
    const metadata = Object.fromEntries(entry.structuredMetadata.map((p) => [p.name, p.value]));
    differ('structured_metadata', labelsKey({ ...want.structuredMetadata }), labelsKey(metadata));
  }
  for (const [key, value] of Object.entries(want.extracted ?? {})) {
    const actual = Object.hasOwn(entry.extracted, key) ? canonicalJson(entry.extracted[key]) : '(not set)';
    differ(`extracted.${key}`, canonicalJson(value), actual);
  }
  if (want.atMs !== undefined) differ('at_ms', String(want.atMs), String(atMs));
  return out;
}

function compareMetric(want: ExpectedMetric, metrics: RunOutcome['metrics']): string[] {
  const title = `metric ${want.name}${selector(want.labels)} (${where(want.pos)}):`;
  const series = metrics.flatMap((m) =>
    (m.values as { value: number; labels: Record<string, string | number>; metricName?: string }[]).filter(
      (v) => (v.metricName ?? m.name) === want.name,
    ),
  );
  const known = metrics.some(
    (m) => m.name === want.name || (m.values as { metricName?: string }[]).some((v) => v.metricName === want.name),
  );
  if (!known) {
    const names = metrics.map((m) => m.name).sort();
    return [title, `  expected ${want.value}`, `  actual   no such metric${didYouMean(want.name, names)}`];
  }
  const matching = series.filter((v) => Object.entries(want.labels).every(([k, value]) => String(v.labels[k]) === value));
  const actual = matching.reduce((sum, v) => sum + v.value, 0);
  if (sameNumber(actual, want.value)) return [];
  return [title, `  expected ${want.value}`, `  actual   ${actual}${matching.length === 0 ? ' (no series with these labels)' : ''}`];
}

/** `{a="1",b="2"}` as Prometheus writes a series' labels; empty for none. */
function selector(labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels).sort();
  return names.length === 0 ? '' : `{${names.map((n) => `${n}=${JSON.stringify(labels[n])}`).join(',')}}`;
}

function sameNumber(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** JSON with object keys sorted, bigint as a number: equal values give equal text. */
function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (typeof v === 'bigint') return Number(v);
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) out[key] = sort((v as Record<string, unknown>)[key]);
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value)) ?? 'undefined';
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
