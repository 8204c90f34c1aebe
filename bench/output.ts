import type { Entry } from '../core/entry.js';
import { entryToJson } from '../core/entry-json.js';
import { formatRFC3339Nano } from '../lib/time/rfc3339.js';
import { calibrate, compared, rate } from './harness.js';
import type { BenchRow } from './types.js';

/** The JSON form as it was first written (a view object through JSON.stringify with a replacer): the baseline. */
function viewJson(entry: Entry): string {
  const labels: Record<string, string> = {};
  for (const name of Object.keys(entry.labels).sort()) labels[name] = entry.labels[name]!;
  const view = {
    labels,
    line: entry.line,
    timestamp: formatRFC3339Nano(entry.timestamp),
    structured_metadata: Object.fromEntries(entry.structuredMetadata.map((p) => [p.name, p.value])),
    extracted: entry.extracted,
  };
  return JSON.stringify(view, (_key, value) => (typeof value === 'bigint' ? Number(value) : value));
}

/**
 * `rivulet process` output serialization on Kubernetes-shaped entries (four labels, one metadata
 * pair, a JSON line and its extracted fields), 1,000 distinct entries a millisecond apart.
 */
export async function benchOutput(): Promise<BenchRow[]> {
  const entries: Entry[] = Array.from({ length: 1000 }, (_, i) => ({
    labels: { namespace: 'shop', pod: `checkout-${i % 7}`, container: 'app', level: i % 5 === 0 ? 'warn' : 'info' },
    line: `{"level":"info","msg":"order ${i} placed","duration_ms":${i % 97},"trace_id":"${(i * 7919).toString(16)}"}`,
    timestamp: 1_764_061_200_000_000_000n + BigInt(i) * 1_000_000n,
    structuredMetadata: [{ name: 'trace_id', value: (i * 7919).toString(16) }],
    extracted: { level: 'info', msg: `order ${i} placed`, duration_ms: i % 97, namespace: 'shop', pod: `checkout-${i % 7}` },
  }));
  let sink = 0;
  const per = (fn: (e: Entry) => string) => (i: number) => {
    sink += fn(entries[i % entries.length]!).length;
  };
  const n = calibrate(per(viewJson));
  const baseline = rate(n, () => {
    for (let i = 0; i < n; i++) per(viewJson)(i);
  });
  const json = rate(n, () => {
    for (let i = 0; i < n; i++) per((e) => entryToJson(e, true))(i);
  });
  if (sink < 0) console.log(sink);
  return [compared('process output --output json (entryToJson)', json, 'entries/s', 'JSON.stringify of a view object', baseline)];
}
