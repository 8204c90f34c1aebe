/**
 * Timestamp parsing rate: RFC3339Nano, a custom access-log layout and a zoned layout, with
 * `Date.parse` on the same RFC 3339 strings as the baseline (it keeps only milliseconds and
 * knows no Go layouts, so it is a floor for what "fast" means, not a competitor).
 */
import { rate, compared } from './harness.js';
import { compileTimestampFormat } from '../lib/time/formats.js';
import { formatLayout } from '../lib/time/layout.js';
import type { BenchRow } from './types.js';

const COUNT = 20_000;
const NOW = 1_717_243_200_000_000_000n; // 2024-06-01T12:00:00Z

/** Deterministic pseudo-random instants: `spanDays` of time from 2024-01-01, nanosecond precision. */
function instants(count: number, spanDays: number): bigint[] {
  let seed = 0x2545f491;
  const next = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  const start = 1_704_067_200_000_000_000n;
  const span = spanDays * 86_400;
  return Array.from({ length: count }, () => start + BigInt(Math.floor(next() * span)) * 1_000_000_000n + BigInt(Math.floor(next() * 1e9)));
}

function parseAll(values: readonly string[], parse: (v: string) => unknown): () => void {
  return () => {
    for (let i = 0; i < values.length; i++) parse(values[i]!);
  };
}

export async function benchTime(): Promise<BenchRow[]> {
  const month = instants(COUNT, 30);
  const decade = instants(COUNT, 3650);

  const rfc3339Values = month.map((t, i) =>
    formatLayout('2006-01-02T15:04:05.999999999Z07:00', t, i % 2 === 0 ? 'UTC' : 'America/New_York'),
  );
  const accessLayout = '02/Jan/2006:15:04:05 -0700';
  const accessValues = month.map((t) => formatLayout(accessLayout, t, 'Europe/Berlin'));
  const zonedLayout = '2006-01-02 15:04:05.000';
  const zonedValues = month.map((t) => formatLayout(zonedLayout, t, 'America/New_York'));
  const zonedDecadeValues = decade.map((t) => formatLayout(zonedLayout, t, 'America/New_York'));

  const rfc3339 = compileTimestampFormat('RFC3339Nano');
  const access = compileTimestampFormat(accessLayout);
  const zoned = compileTimestampFormat(zonedLayout, 'America/New_York');

  const baseline = rate(COUNT, parseAll(rfc3339Values, Date.parse));
  const rows: BenchRow[] = [
    compared(
      'time: parse RFC3339Nano',
      rate(
        COUNT,
        parseAll(rfc3339Values, (v) => rfc3339.parse(v, NOW)),
      ),
      'values/s',
      'Date.parse (ms precision)',
      baseline,
    ),
    compared(
      `time: parse layout ${accessLayout}`,
      rate(
        COUNT,
        parseAll(accessValues, (v) => access.parse(v, NOW)),
      ),
      'values/s',
      'Date.parse on RFC3339',
      baseline,
    ),
    compared(
      `time: parse ${zonedLayout} in America/New_York (1 month)`,
      rate(
        COUNT,
        parseAll(zonedValues, (v) => zoned.parse(v, NOW)),
      ),
      'values/s',
      'Date.parse on RFC3339',
      baseline,
    ),
    compared(
      `time: parse ${zonedLayout} in America/New_York (10 years)`,
      rate(
        COUNT,
        parseAll(zonedDecadeValues, (v) => zoned.parse(v, NOW)),
      ),
      'values/s',
      'Date.parse on RFC3339',
      baseline,
    ),
  ];
  return rows;
}
