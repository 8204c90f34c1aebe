import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { ManualClock } from '../../core/clock.js';
import type { Entry } from '../../core/entry.js';
import { ConfigError, ConfigErrors } from '../../lib/config/errors.js';
import { loadStageList, startProcessRun } from '../../core/process.js';
import { parseRFC3339 } from '../../lib/time/rfc3339.js';
import '../../operators/index.js';

/** One conformance case as stored in test/fixtures/conformance/stages/<stage>.json. */
export interface ConformanceCase {
  name: string;
  origin?: string;
  config: string;
  input: Array<InputItem | { sleep_only_ms: number }>;
  expected: ExpectedEntry[] | { error: string } | { entries?: ExpectedEntry[]; metrics?: string; entries_count_between?: [number, number] };
  unordered?: boolean;
  unordered_from?: number;
  timing?: boolean;
  now?: string;
  notes?: string;
}

interface InputItem {
  labels: Record<string, string>;
  line: string;
  timestamp: string | null;
  structured_metadata?: Record<string, string>;
  extracted?: Record<string, unknown>;
  sleep_before_ms?: number;
}

export interface ExpectedEntry {
  labels: Record<string, string>;
  line: string;
  timestamp?: string;
  extracted?: Record<string, unknown>;
  extracted_exact?: boolean;
  extracted_absent?: string[];
  structured_metadata?: Record<string, string>;
  sm_order?: string[];
  timestamp_is_now?: boolean;
}

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'conformance', 'stages');

export function conformanceFiles(): string[] {
  return readdirSync(fixtures)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''))
    .sort();
}

export function loadCases(stage: string): ConformanceCase[] {
  return JSON.parse(readFileSync(join(fixtures, `${stage}.json`), 'utf8')) as ConformanceCase[];
}

export interface CaseResult {
  readonly configError?: ConfigError[];
  readonly entries: Entry[];
  readonly metricsText: string;
  readonly startNs: bigint;
  readonly processedAtNs: bigint[];
}

/** Runs a case through the same path as `rivulet process`, on a manual clock. */
export async function runCase(c: ConformanceCase, random?: () => number): Promise<CaseResult> {
  const startNs = c.now ? parseRFC3339(c.now) : BigInt(Date.now()) * 1_000_000n;
  const clock = new ManualClock(startNs);
  const registry = new Registry();
  const entries: Entry[] = [];
  const processedAtNs: bigint[] = [];
  let specs;
  try {
    specs = loadStageList(c.config, 'config.alloy');
  } catch (err) {
    if (err instanceof ConfigErrors) return { configError: [...err.errors], entries, metricsText: '', startNs, processedAtNs };
    if (err instanceof ConfigError) return { configError: [err], entries, metricsText: '', startNs, processedAtNs };
    throw err;
  }
  let run;
  try {
    run = startProcessRun(specs, {
      clock,
      registry,
      random,
      onEntry: (e) => {
        entries.push(e);
        processedAtNs.push(clock.nowNs());
      },
    });
  } catch (err) {
    if (err instanceof ConfigError) return { configError: [err], entries, metricsText: '', startNs, processedAtNs };
    if (err instanceof ConfigErrors) return { configError: [...err.errors], entries, metricsText: '', startNs, processedAtNs };
    throw err;
  }
  for (const item of c.input) {
    if ('sleep_only_ms' in item) {
      clock.advanceBy(item.sleep_only_ms);
      continue;
    }
    if (item.sleep_before_ms) clock.advanceBy(item.sleep_before_ms);
    run.push({
      labels: { ...item.labels },
      line: item.line,
      timestamp: item.timestamp === null || item.timestamp === undefined ? clock.nowNs() : parseRFC3339(item.timestamp),
      structuredMetadata: Object.entries(item.structured_metadata ?? {}).map(([name, value]) => ({ name, value })),
      extracted: { ...(item.extracted ?? {}) },
    });
  }
  run.end();
  clock.runAll();
  const metricsText = await registry.metrics();
  run.dispose();
  return { entries, metricsText, startNs, processedAtNs };
}
