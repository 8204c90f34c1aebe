import { dirname, join } from 'node:path';
import { Registry } from 'prom-client';
import { ManualClock } from '../core/clock.js';
import { labelsKey, type Entry } from '../core/entry.js';
import { entryToJson } from '../core/entry-json.js';
import { loadStageList, standaloneScope, startProcessRun } from '../core/process.js';
import { blockTitle } from '../lib/config/schema.js';
import { decodeStageBlocks, type StageSpec } from '../core/stage.js';
import { loadConfigStageModules } from '../core/stage-modules.js';
import type { Attribute, Block, Statement } from '../lib/config/ast.js';
import { ConfigError, ConfigErrors, configErrorsOf, type Position } from '../lib/config/errors.js';
import { evaluate, isCapsule, typeOf, type ConfigValue } from '../lib/config/evaluate.js';
import { parseConfig } from '../lib/config/parser.js';
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
  readonly extracted?: Readonly<Record<string, ConfigValue>>;
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

const TOP_ATTRIBUTES = ['config', 'now'];
const TEST_ATTRIBUTES = ['name', 'config', 'now', 'expect_no_output'];
const TEST_BLOCKS = ['pipeline', 'input', 'expect', 'expect_metric'];
const INPUT_ATTRIBUTES = ['line', 'labels', 'timestamp', 'structured_metadata', 'extracted', 'arrival_ms'];
const EXPECT_ATTRIBUTES = ['line', 'labels', 'timestamp', 'structured_metadata', 'extracted', 'at_ms'];
const METRIC_ATTRIBUTES = ['name', 'labels', 'value'];

/**
 * Reads a test file and every config it names (loading their `stages.import` modules and
 * building each stage list once, so a bad regex fails here rather than mid-run). Throws
 * ConfigErrors, every error positioned, when the file or a config is invalid.
 */
export async function readTestFile(file: string, text: string, cache: ConfigCache = new Map()): Promise<TestCase[]> {
  const ast = parseConfig(text, file);
  const errors: ConfigError[] = [];
  const collect = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch (err) {
      errors.push(...configErrorsOf(err));
      return undefined;
    }
  };
  const top = attributeMap(ast.body, TOP_ATTRIBUTES, [], errors);
  const defaultConfig = top.has('config') ? collect(() => stringOf(top.get('config')!)) : undefined;
  const defaultNow = top.has('now') ? collect(() => timeOf(top.get('now')!)) : undefined;
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
  if (blocks.length === 0 && errors.length === 0)
    errors.push(new ConfigError('no test blocks; write test "NAME" { … }', { file, line: 1, col: 1, offset: 0 }));

  const pending: Promise<TestCase | undefined>[] = [];
  const names = new Map<string, Position>();
  for (const block of blocks) {
    const path = [blockTitle(block)];
    const attrs = attributeMap(block.body, TEST_ATTRIBUTES, path, errors);
    const nested = blockList(block.body, TEST_BLOCKS, path, errors);
    const name = attrs.has('name') ? collect(() => stringOf(attrs.get('name')!, path)) : block.label;
    if (name === undefined) {
      if (!attrs.has('name')) errors.push(new ConfigError('a test needs a name: test "NAME" { … } or name = "…"', block.pos));
      continue;
    }
    const earlier = names.get(name);
    if (earlier) errors.push(new ConfigError(`test ${JSON.stringify(name)} already declared at ${where(earlier)}`, block.pos));
    names.set(name, block.pos);

    const startNs = attrs.has('now') ? collect(() => timeOf(attrs.get('now')!, path)) : (defaultNow ?? parseRFC3339(DEFAULT_NOW));
    const inputs = readInputs(nested.input ?? [], path, errors);
    const outputs = (nested.expect ?? []).map((b) => collect(() => readExpect(b, [...path, 'expect'])));
    const metrics = (nested.expect_metric ?? []).map((b) => collect(() => readMetric(b, [...path, 'expect_metric'])));
    const noOutput = attrs.has('expect_no_output') ? collect(() => boolOf(attrs.get('expect_no_output')!, path)) : undefined;
    if (noOutput === true && outputs.length > 0)
      errors.push(
        new ConfigError('expect_no_output = true contradicts the expect blocks of this test', attrs.get('expect_no_output')!.pos, path),
      );
    if (noOutput !== true && outputs.length === 0 && metrics.length === 0)
      errors.push(new ConfigError('the test checks nothing: add expect, expect_metric or expect_no_output = true', block.pos, path));
    if (startNs === undefined) continue;

    const specs = stageListOf(block, attrs.get('config'), nested.pipeline, defaultConfig, top.get('config'), path, cache, errors);
    if (specs === undefined) continue;
    pending.push(
      specs.then(
        (loaded): TestCase => ({
          name,
          pos: block.pos,
          specs: loaded,
          startNs,
          inputs,
          outputs: noOutput === true ? [] : outputs.length > 0 ? (outputs as ExpectedOutput[]) : undefined,
          metrics: metrics as ExpectedMetric[],
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
  return cases as TestCase[];
}

/** The stages a test runs: its inline `pipeline` block, its `config` file, or the file's `config`. */
function stageListOf(
  block: Block,
  configAttr: Attribute | undefined,
  pipelines: readonly Block[] | undefined,
  defaultConfig: string | undefined,
  defaultAttr: Attribute | undefined,
  path: readonly string[],
  cache: ConfigCache,
  errors: ConfigError[],
): Promise<StageSpec[]> | undefined {
  if (pipelines && pipelines.length > 1) {
    errors.push(new ConfigError('a test has at most one pipeline block', pipelines[1]!.pos, path));
    return undefined;
  }
  if (pipelines?.length === 1) {
    if (configAttr) {
      errors.push(new ConfigError('a test takes either config = "FILE" or a pipeline block, not both', configAttr.pos, path));
      return undefined;
    }
    try {
      return Promise.resolve(inlineStages(pipelines[0]!, path));
    } catch (err) {
      errors.push(...configErrorsOf(err));
      return undefined;
    }
  }
  let config: string | undefined;
  let at: Attribute | undefined;
  if (configAttr) {
    try {
      config = stringOf(configAttr, path);
      at = configAttr;
    } catch (err) {
      errors.push(...configErrorsOf(err));
      return undefined;
    }
  } else {
    config = defaultConfig;
    at = defaultAttr;
  }
  if (config === undefined || at === undefined) {
    if (!defaultAttr)
      errors.push(new ConfigError('the test has no stages: set config = "FILE" or write a pipeline { stage.… } block', block.pos, path));
    return undefined;
  }
  const file = join(dirname(block.pos.file), config);
  let loaded = cache.get(file);
  if (!loaded) {
    loaded = loadConfigFile(file, at);
    cache.set(file, loaded);
  }
  return loaded;
}

/** A stage list file, as `rivulet process --config` reads it, its stage modules loaded first. */
async function loadConfigFile(file: string, at: Attribute): Promise<StageSpec[]> {
  let text: string;
  try {
    text = readTextFile(file);
  } catch (err) {
    if (!(err instanceof PathError)) throw err;
    throw new ConfigError(`config ${JSON.stringify(file)}: ${briefReason(err)}`, at.value.pos);
  }
  await loadConfigStageModules(text, file);
  const specs = loadStageList(text, file);
  checkBuilds(specs);
  return specs;
}

/** `pipeline { stage.json { … } … }`: bare stage blocks, decoded in place. */
function inlineStages(pipeline: Block, path: readonly string[]): StageSpec[] {
  const inner = [...path, 'pipeline'];
  const errors: ConfigError[] = [];
  for (const stmt of pipeline.body)
    if (stmt.kind === 'attribute')
      errors.push(new ConfigError(`unexpected attribute "${stmt.name}"; a pipeline holds stage blocks`, stmt.pos, inner));
  if (errors.length > 0) throw new ConfigErrors(errors);
  const blocks = pipeline.body.filter((s): s is Block => s.kind === 'block');
  const specs = decodeStageBlocks(
    blocks.map((b) => ({ block: b, path: [...inner, blockTitle(b)] })),
    standaloneScope(),
  );
  checkBuilds(specs);
  return specs;
}

/** Builds the stages once, so what decoding cannot check (regexes, templates) fails up front. */
function checkBuilds(specs: readonly StageSpec[]): void {
  const run = startProcessRun(specs, { clock: new ManualClock(), registry: new Registry(), onEntry: () => {} });
  run.dispose();
}

function readInputs(blocks: readonly Block[], path: readonly string[], errors: ConfigError[]): TestInput[] {
  const inputs: TestInput[] = [];
  let lastArrival = 0;
  for (const block of blocks) {
    const inner = [...path, 'input'];
    try {
      const attrs = attributeMap(block.body, INPUT_ATTRIBUTES, inner, errors, true);
      blockList(block.body, [], inner, errors);
      const line = attrs.get('line');
      if (!line) throw new ConfigError('missing required attribute "line"', block.pos, inner);
      const arrivalAttr = attrs.get('arrival_ms');
      const arrivalMs = arrivalAttr ? millisecondsOf(arrivalAttr, inner) : lastArrival;
      if (arrivalMs < lastArrival)
        throw new ConfigError(
          `arrival_ms ${arrivalMs} is before the previous input's ${lastArrival}; inputs arrive in the order written`,
          arrivalAttr!.value.pos,
          inner,
        );
      lastArrival = arrivalMs;
      const metadata = attrs.has('structured_metadata') ? stringMapOf(attrs.get('structured_metadata')!, inner) : {};
      inputs.push({
        arrivalMs,
        entry: {
          line: stringOf(line, inner),
          labels: attrs.has('labels') ? { ...stringMapOf(attrs.get('labels')!, inner) } : {},
          timestamp: attrs.has('timestamp') ? timeOf(attrs.get('timestamp')!, inner) : undefined,
          structuredMetadata: Object.entries(metadata).map(([name, value]) => ({ name, value })),
          extracted: attrs.has('extracted') ? { ...objectOf(attrs.get('extracted')!, inner) } : {},
        },
      });
    } catch (err) {
      errors.push(...configErrorsOf(err));
    }
  }
  return inputs;
}

function readExpect(block: Block, path: readonly string[]): ExpectedOutput {
  const errors: ConfigError[] = [];
  const attrs = attributeMap(block.body, EXPECT_ATTRIBUTES, path, errors);
  blockList(block.body, [], path, errors);
  if (errors.length > 0) throw new ConfigErrors(errors);
  const get = <T>(name: string, read: (a: Attribute, p: readonly string[]) => T): T | undefined => {
    const attr = attrs.get(name);
    return attr ? read(attr, path) : undefined;
  };
  return {
    pos: block.pos,
    line: get('line', stringOf),
    labels: get('labels', stringMapOf),
    timestamp: get('timestamp', timeOf),
    structuredMetadata: get('structured_metadata', stringMapOf),
    extracted: get('extracted', objectOf),
    atMs: get('at_ms', millisecondsOf),
  };
}

function readMetric(block: Block, path: readonly string[]): ExpectedMetric {
  const errors: ConfigError[] = [];
  const attrs = attributeMap(block.body, METRIC_ATTRIBUTES, path, errors);
  blockList(block.body, [], path, errors);
  for (const required of ['name', 'value'])
    if (!attrs.has(required)) errors.push(new ConfigError(`missing required attribute "${required}"`, block.pos, path));
  if (errors.length > 0) throw new ConfigErrors(errors);
  const value = evaluate(attrs.get('value')!.value, standaloneScope());
  if (typeof value !== 'number') throw mistyped(attrs.get('value')!, 'a number', value, path);
  return {
    pos: block.pos,
    name: stringOf(attrs.get('name')!, path),
    labels: attrs.has('labels') ? stringMapOf(attrs.get('labels')!, path) : {},
    value,
  };
}

/** The attributes of a body by name; unknown or repeated ones are errors. */
function attributeMap(
  body: readonly Statement[],
  known: readonly string[],
  path: readonly string[],
  errors: ConfigError[],
  strict = false,
): Map<string, Attribute> {
  const map = new Map<string, Attribute>();
  const found: ConfigError[] = [];
  for (const stmt of body) {
    if (stmt.kind !== 'attribute') continue;
    if (!known.includes(stmt.name))
      found.push(new ConfigError(`unrecognized attribute name "${stmt.name}"${didYouMean(stmt.name, known)}`, stmt.pos, path));
    else if (map.has(stmt.name)) found.push(new ConfigError(`attribute "${stmt.name}" may only be set once`, stmt.pos, path));
    else map.set(stmt.name, stmt);
  }
  if (strict && found.length > 0) throw new ConfigErrors(found);
  errors.push(...found);
  return map;
}

/** The nested blocks of a body grouped by name; unknown ones are errors. */
function blockList(
  body: readonly Statement[],
  known: readonly string[],
  path: readonly string[],
  errors: ConfigError[],
): Record<string, Block[]> {
  const groups: Record<string, Block[]> = {};
  for (const stmt of body) {
    if (stmt.kind !== 'block') continue;
    if (!known.includes(stmt.name)) {
      errors.push(new ConfigError(`unrecognized block name "${stmt.name}"${didYouMean(stmt.name, known)}`, stmt.pos, path));
      continue;
    }
    if (stmt.label !== undefined && stmt.name !== 'pipeline') {
      errors.push(new ConfigError(`block "${stmt.name}" does not support specifying labels`, stmt.pos, path));
      continue;
    }
    (groups[stmt.name] ??= []).push(stmt);
  }
  return groups;
}

function valueOf(attr: Attribute): ConfigValue {
  return evaluate(attr.value, standaloneScope());
}

function mistyped(attr: Attribute, wanted: string, got: ConfigValue, path: readonly string[]): ConfigError {
  return new ConfigError(`"${attr.name}" must be ${wanted}, got ${isCapsule(got) ? 'capsule' : typeOf(got)}`, attr.value.pos, path);
}

function stringOf(attr: Attribute, path: readonly string[] = []): string {
  const value = valueOf(attr);
  if (typeof value !== 'string') throw mistyped(attr, 'a string', value, path);
  return value;
}

function boolOf(attr: Attribute, path: readonly string[]): boolean {
  const value = valueOf(attr);
  if (typeof value !== 'boolean') throw mistyped(attr, 'a bool', value, path);
  return value;
}

function millisecondsOf(attr: Attribute, path: readonly string[]): number {
  const value = valueOf(attr);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new ConfigError(`"${attr.name}" must be a non-negative number of milliseconds`, attr.value.pos, path);
  return value;
}

function timeOf(attr: Attribute, path: readonly string[] = []): bigint {
  const text = stringOf(attr, path);
  try {
    return parseRFC3339(text);
  } catch (err) {
    throw new ConfigError(`"${attr.name}" must be an RFC 3339 time: ${(err as Error).message}`, attr.value.pos, path);
  }
}

function objectOf(attr: Attribute, path: readonly string[]): Readonly<Record<string, ConfigValue>> {
  const value = valueOf(attr);
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isCapsule(value))
    throw mistyped(attr, 'an object', value, path);
  return value as Readonly<Record<string, ConfigValue>>;
}

function stringMapOf(attr: Attribute, path: readonly string[]): Readonly<Record<string, string>> {
  const map = objectOf(attr, path);
  for (const [key, value] of Object.entries(map))
    if (typeof value !== 'string')
      throw new ConfigError(
        `"${attr.name}.${key}" must be a string, got ${isCapsule(value) ? 'capsule' : typeOf(value)}`,
        attr.value.pos,
        path,
      );
  return map as Readonly<Record<string, string>>;
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
