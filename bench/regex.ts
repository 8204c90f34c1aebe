/**
 * Per-match cost of the regex interface on Apache combined log lines, against V8's RegExp running
 * the same expression directly (the ceiling) and the `re2` package (what every pattern would cost
 * without the translation). Target: the interface within 1.3× of raw V8.
 */
import RE2 from 're2';
import { compileRegex } from '../core/regex';
import { compared, rate } from './harness';
import type { BenchRow } from './types';

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

  const rawRate = rate(lines.length, everyLine(lines, (l) => raw.exec(l)), 5);
  const oursRate = rate(lines.length, everyLine(lines, (l) => ours.exec(l)), 5);
  const re2Rate = rate(lines.length, everyLine(lines, (l) => native.exec(l)), 2);
  const oursGroups = rate(lines.length, everyLine(lines, (l) => ours.exec(l)?.groups ?? null), 5);
  const oursTest = rate(lines.length, everyLine(lines, (l) => (ours.test(l) ? l : null)), 5);
  const rawTest = rate(lines.length, everyLine(lines, (l) => (raw.test(l) ? l : null)), 5);

  return [
    compared(`compileRegex(apache).exec [engine ${ours.engine}]`, oursRate, 'lines/s', 'RegExp.exec', rawRate),
    compared('compileRegex(apache).exec + groups', oursGroups, 'lines/s', 'RegExp.exec', rawRate),
    compared('compileRegex(apache).test', oursTest, 'lines/s', 'RegExp.test', rawTest),
    compared('re2 package exec', re2Rate, 'lines/s', 'RegExp.exec', rawRate),
    compared('compileRegex(apache).exec vs re2 package', oursRate, 'lines/s', 're2 exec', re2Rate),
  ];
}
