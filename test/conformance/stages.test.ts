import { describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { parseRFC3339 } from '../../lib/time/rfc3339.js';
import { conformanceFiles, loadCases, runCase, type ConformanceCase, type ExpectedEntry } from '../support/conformance.js';
import { familiesOf, samplesOfFamilies } from '../support/prometheus-text.js';

/** Cases we deliberately run differently, each with its reason (none so far). */
const deviations: Record<string, string> = {};

describe.each(conformanceFiles())('conformance: stage %s', (stage) => {
  for (const c of loadCases(stage)) {
    const reason = deviations[`${stage}/${c.name}`];
    if (reason) continue;
    it(c.name, async () => {
      await checkCase(c);
    });
  }
});

async function checkCase(c: ConformanceCase): Promise<void> {
  const result = await runCase(c, seededRandom(42));
  const expected = c.expected;
  if (!Array.isArray(expected) && 'error' in expected) {
    expect(result.configError, 'building the component must fail').toBeDefined();
    for (const err of result.configError!) expect(err.message).toMatch(/^config\.alloy:\d+:\d+: /);
    return;
  }
  if (result.configError) throw new Error(`unexpected config error: ${result.configError.map((e) => e.message).join('\n')}`);
  const expectedEntries = Array.isArray(expected) ? expected : expected.entries;
  if (!Array.isArray(expected) && expected.entries_count_between) {
    const [min, max] = expected.entries_count_between;
    expect(result.entries.length).toBeGreaterThanOrEqual(min);
    expect(result.entries.length).toBeLessThanOrEqual(max);
  }
  if (expectedEntries) compareEntries(c, result.entries, expectedEntries, result.processedAtNs);
  if (!Array.isArray(expected) && expected.metrics) {
    const families = [...familiesOf(expected.metrics).keys()];
    expect(Object.fromEntries(samplesOfFamilies(result.metricsText, families))).toEqual(
      Object.fromEntries(samplesOfFamilies(expected.metrics, families)),
    );
  }
}

function compareEntries(c: ConformanceCase, actual: Entry[], expected: ExpectedEntry[], processedAtNs: bigint[]): void {
  expect(actual.map(describeEntry), 'forwarded entry count').toHaveLength(expected.length);
  const orderedCount = c.unordered ? 0 : (c.unordered_from ?? expected.length);
  for (let i = 0; i < orderedCount; i++) checkEntry(actual[i]!, expected[i]!, processedAtNs[i]!);
  const restActual = actual.slice(orderedCount).map((e, i) => ({ e, at: processedAtNs[orderedCount + i]! }));
  for (const want of expected.slice(orderedCount)) {
    const index = restActual.findIndex(({ e, at }) => entryMatches(e, want, at));
    expect(
      index,
      `no forwarded entry matches ${JSON.stringify(want)} among ${JSON.stringify(restActual.map(({ e }) => describeEntry(e)))}`,
    ).toBeGreaterThanOrEqual(0);
    restActual.splice(index, 1);
  }
}

function entryMatches(actual: Entry, want: ExpectedEntry, at: bigint): boolean {
  try {
    checkEntry(actual, want, at);
    return true;
  } catch {
    return false;
  }
}

function checkEntry(actual: Entry, want: ExpectedEntry, processedAt: bigint): void {
  const context = JSON.stringify(describeEntry(actual));
  expect(actual.line, context).toBe(want.line);
  expect(actual.labels, context).toEqual(want.labels);
  if (want.timestamp !== undefined) {
    const year = new Date(Number(processedAt / 1_000_000n)).getUTCFullYear();
    expect(actual.timestamp.toString(), context).toBe(parseRFC3339(want.timestamp.replace('YYYY', String(year))).toString());
  }
  if (want.timestamp_is_now) expect(actual.timestamp, context).toBe(processedAt);
  if (want.extracted) {
    const got = jsonView(actual.extracted);
    if (want.extracted_exact) expect(got, context).toEqual(want.extracted);
    else for (const [key, value] of Object.entries(want.extracted)) expect(got[key], `extracted ${key} of ${context}`).toEqual(value);
  }
  for (const key of want.extracted_absent ?? []) expect(Object.keys(actual.extracted), context).not.toContain(key);
  if (want.structured_metadata) {
    expect(Object.fromEntries(actual.structuredMetadata.map((p) => [p.name, p.value])), context).toEqual(want.structured_metadata);
    expect(actual.structuredMetadata.length, context).toBe(Object.keys(want.structured_metadata).length);
  }
  if (want.sm_order)
    expect(
      actual.structuredMetadata.map((p) => p.name),
      context,
    ).toEqual(want.sm_order);
}

/** Extracted values as JSON sees them (numbers, strings, booleans, null). */
function jsonView(extracted: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(extracted, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))) as Record<string, unknown>;
}

function describeEntry(e: Entry) {
  return { labels: e.labels, line: e.line, timestamp: e.timestamp.toString(), sm: e.structuredMetadata, extracted: jsonView(e.extracted) };
}

/** A deterministic generator so sampling cases give the same count every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}
