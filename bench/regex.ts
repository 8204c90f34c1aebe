/**
 * Per-match cost of the regex interface on Apache combined log lines, against V8's RegExp running
 * the same expression directly (the ceiling) and the `re2` package (what every pattern would cost
 * without the translation). Target: the interface within 1.3× of raw V8.
 */
import RE2 from 're2';
import { Registry } from 'prom-client';
import { ManualClock } from '../core/clock.js';
import type { Entry } from '../core/entry.js';
import { buildPipeline, ingress } from '../core/pipeline.js';
import { compileRegex } from '../lib/regex/index.js';
import { compileWith } from '../lib/regex/compile.js';
import { nodeRe2Engine } from '../lib/regex/node-re2-engine.js';
import { t } from '../lib/config/schema.js';
import { defineStage, unregisterStage, type StageOperator } from '../core/stage.js';
import { labels, output, regex } from '../operators/index.js';
import { compared, rate } from './harness.js';
import type { BenchRow } from './types.js';

const LINES = 20_000;

/** Apache combined log format with named groups, in RE2 syntax. */
export const APACHE_COMBINED =
  '^(?P<ip>\\S+) (?P<ident>\\S+) (?P<user>\\S+) \\[(?P<timestamp>[^\\]]+)\\] "(?P<method>\\S+) (?P<path>\\S+) (?P<protocol>[^"]+)" ' +
  '(?P<status>\\d{3}) (?P<size>\\d+|-) "(?P<referer>[^"]*)" "(?P<agent>[^"]*)"$';

/** Deterministic, realistic lines: varied addresses, users, paths, statuses, sizes and agents. */
export function apacheLines(count: number): string[] {
  let seed = 0x9e3779b9;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[next(xs.length)]!;
  const users = ['-', 'frank', 'alice', 'svc-deploy'];
  const methods = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'HEAD'];
  const paths = ['/', '/index.html', '/api/v1/users/', '/static/app.js', '/search?q=', '/img/logo.png'];
  const statuses = [200, 200, 200, 301, 304, 404, 500];
  const referers = ['-', 'https://www.example.com/start.html', 'https://search.example.org/?q=rivulet'];
  const agents = [
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
    'curl/8.5.0',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148',
  ];
  return Array.from({ length: count }, () => {
    const ip = `${10 + next(200)}.${next(256)}.${next(256)}.${next(256)}`;
    const ts = `${String(1 + next(28)).padStart(2, '0')}/Oct/2024:${String(next(24)).padStart(2, '0')}:${String(next(60)).padStart(2, '0')}:${String(next(60)).padStart(2, '0')} +0000`;
    const path = pick(paths) + (next(3) === 0 ? String(next(100000)) : '');
    const size = next(10) === 0 ? '-' : String(next(50000));
    return `${ip} - ${pick(users)} [${ts}] "${pick(methods)} ${path} HTTP/1.1" ${pick(statuses)} ${size} "${pick(referers)}" "${pick(agents)}"`;
  });
}

function everyLine(lines: readonly string[], exec: (line: string) => unknown): () => void {
  return () => {
    for (let i = 0; i < lines.length; i++) {
      if (exec(lines[i]!) === null) throw new Error(`no match: ${lines[i]}`);
    }
  };
}

export async function benchRegex(): Promise<BenchRow[]> {
  const lines = apacheLines(LINES);
  const ours = compileRegex(APACHE_COMBINED);
  // The same expression as a plain JavaScript RegExp (named groups as `(?<name>…)`).
  const raw = new RegExp(APACHE_COMBINED.replace(/\(\?P</g, '(?<'));
  const native = new RE2(APACHE_COMBINED, 'u');

  const rawRate = rate(
    lines.length,
    everyLine(lines, (l) => raw.exec(l)),
    5,
  );
  const oursRate = rate(
    lines.length,
    everyLine(lines, (l) => ours.exec(l)),
    5,
  );
  const re2Rate = rate(
    lines.length,
    everyLine(lines, (l) => native.exec(l)),
    2,
  );
  const oursGroups = rate(
    lines.length,
    everyLine(lines, (l) => ours.exec(l)?.groups ?? null),
    5,
  );
  const oursTest = rate(
    lines.length,
    everyLine(lines, (l) => (ours.test(l) ? l : null)),
    5,
  );
  const rawTest = rate(
    lines.length,
    everyLine(lines, (l) => (raw.test(l) ? l : null)),
    5,
  );

  return [
    compared(`compileRegex(apache).exec [engine ${ours.engine}]`, oursRate, 'lines/s', 'RegExp.exec', rawRate),
    compared('compileRegex(apache).exec + groups', oursGroups, 'lines/s', 'RegExp.exec', rawRate),
    compared('compileRegex(apache).test', oursTest, 'lines/s', 'RegExp.test', rawTest),
    compared('re2 package exec', re2Rate, 'lines/s', 'RegExp.exec', rawRate),
    compared('compileRegex(apache).exec vs re2 package', oursRate, 'lines/s', 're2 exec', re2Rate),
  ];
}

/**
 * The web-access-log pipeline (regex → labels → output) through the real pipeline builder, beside
 * the same pipeline whose regex stage is forced onto the re2 package — what every regex stage
 * would cost without the V8 translation. Target: at least 2×.
 */
export async function benchRegexPipeline(): Promise<BenchRow[]> {
  const lines = apacheLines(LINES);
  const stages = (regexStage: StageOperator) => [
    regexStage.spec,
    labels({ values: { method: '', status: '' } }).spec,
    output({ source: 'path' }).spec,
  ];
  const options = { clock: new ManualClock(0n), registry: new Registry() };
  const fast = buildPipeline(stages(regex({ expression: APACHE_COMBINED })), options).process!;
  const slow = buildPipeline(stages(re2OnlyRegex({ expression: APACHE_COMBINED })), options).process!;
  const run = (fn: (e: Entry) => Entry | null) => () => {
    for (const line of lines) {
      const out = fn(ingress({ labels: { job: 'web' }, line, timestamp: 1n, structuredMetadata: [], extracted: {} }));
      if (out === null || out.line === line) throw new Error('pipeline did not parse the line');
    }
  };
  const slowRate = rate(lines.length, run(slow), 2);
  const fastRate = rate(lines.length, run(fast), 5);
  unregisterStage('bench_regex_re2');
  return [compared('web-access pipeline regex → labels → output', fastRate, 'entries/s', 'same pipeline, regex on re2 only', slowRate)];
}

/** stage.regex with its expression compiled for the re2 package only (the baseline above). */
const re2OnlyRegex = defineStage<{ expression: string }>({
  name: 'bench_regex_re2',
  doc: 'stage.regex on the re2 package alone, for the bench baseline.',
  fields: { expression: { kind: t.string, required: true, doc: 'RE2 expression.' } },
  build: ({ expression }) => {
    const re = compileWith(nodeRe2Engine, null, expression);
    const groups = re.groupNames.flatMap((name, i) => (i > 0 && name ? [[i, name] as const] : []));
    return {
      kind: 'map',
      process: (entry) => {
        const match = re.exec(entry.line);
        if (match) for (const [i, name] of groups) entry.extracted[name] = match.groups[i] ?? '';
        return entry;
      },
    };
  },
});
