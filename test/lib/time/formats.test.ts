import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compileTimestampFormat,
  parseTimestamp,
  parseTimestampWithFallbacks,
  TIMESTAMP_SHORTHANDS,
  validateLocation,
} from '../../../lib/time/formats.js';
import { formatLayout, TimeParseError } from '../../../lib/time/layout.js';
import { UnknownLocationError } from '../../../lib/time/location.js';
import { parseRFC3339 } from '../../../lib/time/rfc3339.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

const ns = (rfc3339: string): bigint => parseRFC3339(rfc3339);
const NOW = ns('2024-06-01T12:00:00Z');

function errorOf(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

describe('parseTimestamp: shorthands', () => {
  it.each([
    ['ANSIC', 'Mon Jan  2 15:04:05 2006', '2006-01-02T15:04:05Z'],
    ['UnixDate', 'Mon Jan  2 15:04:05 MST 2006', '2006-01-02T15:04:05Z'],
    ['RubyDate', 'Mon Jan 02 15:04:05 -0700 2006', '2006-01-02T22:04:05Z'],
    ['RFC822', '02 Jan 06 15:04 MST', '2006-01-02T15:04:00Z'],
    ['RFC822Z', '02 Jan 06 15:04 -0700', '2006-01-02T22:04:00Z'],
    ['RFC850', 'Monday, 02-Jan-06 15:04:05 MST', '2006-01-02T15:04:05Z'],
    ['RFC1123', 'Mon, 02 Jan 2006 15:04:05 MST', '2006-01-02T15:04:05Z'],
    ['RFC1123Z', 'Mon, 02 Jan 2006 15:04:05 -0700', '2006-01-02T22:04:05Z'],
    ['RFC3339', '2006-01-02T15:04:05-07:00', '2006-01-02T22:04:05Z'],
    ['RFC3339', '2006-01-02T15:04:05.5Z', '2006-01-02T15:04:05.5Z'],
    ['RFC3339Nano', '2006-01-02T15:04:05.999999999-07:00', '2006-01-02T22:04:05.999999999Z'],
    ['RFC3339Nano', '2006-01-02T15:04:05Z', '2006-01-02T15:04:05Z'],
  ])('parses %s from %j', (format, value, expected) => {
    expect(parseTimestamp(format, value, { nowNs: NOW })).toBe(ns(expected));
  });

  it('lists exactly the ten shorthands of the reference', () => {
    expect(Object.keys(TIMESTAMP_SHORTHANDS)).toEqual([
      'ANSIC',
      'UnixDate',
      'RubyDate',
      'RFC822',
      'RFC822Z',
      'RFC850',
      'RFC1123',
      'RFC1123Z',
      'RFC3339',
      'RFC3339Nano',
    ]);
  });

  it('ignores the location for shorthands', () => {
    // EST is unknown to the (UTC) process zone, so it reads as offset 0 even with a New York location.
    const value = 'Mon, 02 Jan 2006 15:04:05 EST';
    expect(parseTimestamp('RFC1123', value, { location: 'America/New_York', nowNs: NOW })).toBe(ns('2006-01-02T15:04:05Z'));
    // The same layout written out is a custom layout, which does use the location.
    expect(parseTimestamp('Mon, 02 Jan 2006 15:04:05 MST', value, { location: 'America/New_York', nowNs: NOW })).toBe(
      ns('2006-01-02T20:04:05Z'),
    );
    expect(parseTimestamp('ANSIC', 'Mon Jan  2 15:04:05 2006', { location: 'Asia/Tokyo', nowNs: NOW })).toBe(ns('2006-01-02T15:04:05Z'));
  });

  it('takes other Go constant names as literal layouts', () => {
    expect(errorOf(() => parseTimestamp('Kitchen', '3:04PM', { nowNs: NOW })).message).toBe(
      'parsing time "3:04PM" as "Kitchen": cannot parse "3:04PM" as "Kitchen"',
    );
    // "Kitchen" has no year chunk, so the no-year rule gives 1 January of this year.
    expect(parseTimestamp('Kitchen', 'Kitchen', { nowNs: NOW })).toBe(ns('2024-01-01T00:00:00Z'));
    expect(() => parseTimestamp('DateTime', '2024-01-01 00:00:00', { nowNs: NOW })).toThrow(TimeParseError);
  });

  it('reports Go messages for shorthand failures', () => {
    expect(errorOf(() => parseTimestamp('RFC3339', '2024-01-02 03:04:05Z', { nowNs: NOW })).message).toBe(
      'parsing time "2024-01-02 03:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 03:04:05Z" as "T"',
    );
  });
});

describe('parseTimestamp: Unix formats', () => {
  it.each([
    ['Unix', '1562708916', '2019-07-09T21:48:36Z'],
    ['Unix', '1562708916.414123', '2019-07-09T21:48:36.414123Z'],
    ['Unix', '1562708916.000000123', '2019-07-09T21:48:36.000000123Z'],
    ['Unix', '1562708916.5', '2019-07-09T21:48:36.5Z'],
    ['Unix', '-1', '1969-12-31T23:59:59Z'],
    ['Unix', '+15', '1970-01-01T00:00:15Z'],
    ['UnixMs', '1562708916919', '2019-07-09T21:48:36.919Z'],
    ['UnixMs', '-1', '1969-12-31T23:59:59.999Z'],
    ['UnixUs', '1562708916414123', '2019-07-09T21:48:36.414123Z'],
    ['UnixNs', '1562708916000000123', '2019-07-09T21:48:36.000000123Z'],
  ])('parses %s from %j', (format, value, expected) => {
    expect(parseTimestamp(format, value, { nowNs: NOW })).toBe(ns(expected));
  });

  it('adds the fraction of a negative Unix time instead of subtracting it', () => {
    expect(parseTimestamp('Unix', '-1.5', { nowNs: NOW })).toBe(-500_000_000n);
    expect(parseTimestamp('Unix', '-0.5', { nowNs: NOW })).toBe(500_000_000n);
  });

  it('reads the Unix fraction as a signed integer scaled by its written length', () => {
    expect(parseTimestamp('Unix', '1.-5', { nowNs: NOW })).toBe(950_000_000n);
    expect(parseTimestamp('Unix', '1.+5', { nowNs: NOW })).toBe(1_050_000_000n);
    expect(parseTimestamp('Unix', '1.05', { nowNs: NOW })).toBe(1_050_000_000n);
  });

  it('truncates Unix fractions past nine digits', () => {
    expect(parseTimestamp('Unix', '1.1234567891', { nowNs: NOW })).toBe(1_123_456_789n);
    expect(parseTimestamp('Unix', '1.9999999999', { nowNs: NOW })).toBe(1_999_999_999n);
    expect(parseTimestamp('Unix', '1.0000000001', { nowNs: NOW })).toBe(1_000_000_000n);
    expect(parseTimestamp('Unix', '1.000000000000000000000000000009', { nowNs: NOW })).toBe(1_000_000_000n);
  });

  it.each([
    ['Unix', '', 'strconv.ParseInt: parsing "": invalid syntax'],
    ['Unix', 'abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ['Unix', '1.', 'strconv.ParseInt: parsing "": invalid syntax'],
    ['Unix', '.5', 'strconv.ParseInt: parsing "": invalid syntax'],
    ['Unix', '1.2.3', 'strconv.ParseInt: parsing "1.2.3": invalid syntax'],
    ['Unix', '1e3', 'strconv.ParseInt: parsing "1e3": invalid syntax'],
    ['Unix', ' 1', 'strconv.ParseInt: parsing " 1": invalid syntax'],
    ['Unix', '1_000', 'strconv.ParseInt: parsing "1_000": invalid syntax'],
    ['Unix', '9223372036854775808', 'strconv.ParseInt: parsing "9223372036854775808": value out of range'],
    ['UnixMs', '1562708916919.5', 'strconv.ParseInt: parsing "1562708916919.5": invalid syntax'],
    ['UnixUs', '0x10', 'strconv.ParseInt: parsing "0x10": invalid syntax'],
    ['UnixNs', '', 'strconv.ParseInt: parsing "": invalid syntax'],
  ])('rejects %s %j', (format, value, message) => {
    const err = errorOf(() => parseTimestamp(format, value, { nowNs: NOW }));
    expect(err).toBeInstanceOf(TimeParseError);
    expect(err.message).toBe(message);
  });

  it('wraps UnixMs and UnixUs around int64 as Go multiplication does', () => {
    expect(parseTimestamp('UnixMs', '9223372036854775807', { nowNs: NOW })).toBe(BigInt.asIntN(64, 9223372036854775807n * 1_000_000n));
    expect(parseTimestamp('UnixUs', '-9223372036854775808', { nowNs: NOW })).toBe(0n);
  });

  it('ignores the location for Unix formats', () => {
    expect(parseTimestamp('Unix', '0', { location: 'Asia/Tokyo', nowNs: NOW })).toBe(0n);
  });
});

describe('parseTimestamp: custom layouts', () => {
  it('reads a zone-less value in the location, or UTC without one', () => {
    const layout = '2006-01-02 15:04:05';
    expect(parseTimestamp(layout, '2019-07-22 20:29:32', { nowNs: NOW })).toBe(ns('2019-07-22T20:29:32Z'));
    expect(parseTimestamp(layout, '2019-07-22 20:29:32', { location: 'America/New_York', nowNs: NOW })).toBe(ns('2019-07-23T00:29:32Z'));
  });

  it('lets a numeric offset in the value win over the location', () => {
    expect(parseTimestamp('02/Jan/2006:15:04:05 -0700', '10/Oct/2000:13:55:36 -0700', { location: 'Asia/Tokyo', nowNs: NOW })).toBe(
      ns('2000-10-10T20:55:36Z'),
    );
  });

  it('throws for an unknown location', () => {
    const err = errorOf(() => parseTimestamp('2006', '2019', { location: 'Mars/Olympus', nowNs: NOW }));
    expect(err).toBeInstanceOf(UnknownLocationError);
    expect(err.message).toBe('unknown time zone Mars/Olympus');
  });
});

describe('parseTimestamp: layouts without a year', () => {
  const layout = 'Jan 02 15:04:05';
  it.each([
    ['Jul 15 01:02:03', '2019-07-14T00:00:00Z', '2019-07-15T01:02:03Z'],
    ['Dec 31 23:59:59', '2019-01-01T00:00:00Z', '2018-12-31T23:59:59Z'],
    ['Jan 01 01:02:03', '2018-12-31T23:59:59Z', '2019-01-01T01:02:03Z'],
    ['Dec 31 23:59:59', '2019-12-31T00:00:00Z', '2019-12-31T23:59:59Z'],
    ['Jan 01 00:00:00', '2019-01-31T00:00:00Z', '2019-01-01T00:00:00Z'],
    ['Nov 30 00:00:00', '2019-01-01T00:00:00Z', '2019-11-30T00:00:00Z'],
    ['Feb 02 00:00:00', '2019-12-01T00:00:00Z', '2019-02-02T00:00:00Z'],
  ])('places %j seen at %s in the right year', (value, now, expected) => {
    expect(parseTimestamp(layout, value, { nowNs: ns(now) })).toBe(ns(expected));
  });

  it('turns 29 February into 1 March in a non-leap year', () => {
    expect(parseTimestamp(layout, 'Feb 29 12:00:00', { nowNs: ns('2023-06-01T00:00:00Z') })).toBe(ns('2023-03-01T12:00:00Z'));
    expect(parseTimestamp(layout, 'Feb 29 12:00:00', { nowNs: ns('2024-06-01T00:00:00Z') })).toBe(ns('2024-02-29T12:00:00Z'));
  });

  it('uses the offset of the final date in the location, not that of year 0', () => {
    const options = { location: 'America/New_York', nowNs: ns('2019-07-14T00:00:00Z') };
    expect(parseTimestamp(layout, 'Jul 15 01:02:03', options)).toBe(ns('2019-07-15T05:02:03Z'));
    expect(parseTimestamp(layout, 'Jan 15 01:02:03', options)).toBe(ns('2019-01-15T06:02:03Z'));
  });

  it('moves a time given with an abbreviation by its wall clock in the location', () => {
    // Read as 01:02:03 EST = 06:02:03Z in year 0, which New York (on LMT, -4:56:02) shows as
    // 01:06:01; that wall clock is what moves to 2019 (EDT).
    const options = { location: 'America/New_York', nowNs: ns('2019-07-14T00:00:00Z') };
    expect(parseTimestamp('Jan 02 15:04:05 MST', 'Jul 15 01:02:03 EST', options)).toBe(ns('2019-07-15T05:06:01Z'));
  });

  it('keeps a numeric offset through the move', () => {
    const options = { nowNs: ns('2019-07-14T00:00:00Z') };
    expect(parseTimestamp('Jan 02 15:04:05 -0700', 'Jul 15 01:02:03 +0200', options)).toBe(ns('2019-07-14T23:02:03Z'));
  });

  it('reads now in the process-local zone, as the reference reads time.Now()', () => {
    // 2019-01-01T02:00Z is still December in New York, but January in the (UTC) process zone.
    const options = { location: 'America/New_York', nowNs: ns('2019-01-01T02:00:00Z') };
    expect(parseTimestamp(layout, 'Dec 31 20:00:00', options)).toBe(ns('2019-01-01T01:00:00Z'));
  });

  it('rejects a value whose recorded wall clock leaves year 0', () => {
    // GMT+3 keeps the instant (Dec 31 22:00 UTC) but shows it as 1 January of year 1.
    expect(errorOf(() => parseTimestamp('Jan 02 15:04:05 MST', 'Dec 31 22:00:00 GMT+3', { nowNs: NOW })).message).toBe(
      "timestamp 'Dec 31 22:00:00 GMT+3' is expected to not contain the year date component",
    );
  });

  it('parses sub-second no-year layouts', () => {
    expect(parseTimestamp('Jan _2 15:04:05.000', 'Mar  7 10:11:12.345', { nowNs: NOW })).toBe(ns('2024-03-07T10:11:12.345Z'));
  });

  it('places any no-year value within a year of now', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: ns('1971-01-01T00:00:00Z'), max: ns('2099-01-01T00:00:00Z') }),
        fc.bigInt({ min: -360n * 86_400_000_000_000n, max: 360n * 86_400_000_000_000n }),
        (now, delta) => {
          const t = now + delta - ((now + delta) % 1_000_000_000n);
          const value = formatLayout(layout, t);
          // 29 February may move to 1 March.
          if (value.startsWith('Feb 29')) return;
          const parsed = parseTimestamp(layout, value, { nowNs: now });
          expect(formatLayout(layout, parsed)).toBe(value);
          const year = 366n * 86_400_000_000_000n;
          expect(parsed - now < year && now - parsed < year).toBe(true);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('parseTimestampWithFallbacks', () => {
  it('returns the first format that parses', () => {
    const formats = ['UnixMs', '2006-01-02 03:04:05.000000000 +0000 UTC', '2006-01-02T15:04:05Z07:00'];
    expect(parseTimestampWithFallbacks(formats, '2012-11-01T22:08:41-04:00', { nowNs: NOW })).toBe(ns('2012-11-02T02:08:41Z'));
    expect(parseTimestampWithFallbacks(formats, '1562708916919', { nowNs: NOW })).toBe(ns('2019-07-09T21:48:36.919Z'));
  });

  it('applies the shorthand rules to fallbacks too', () => {
    expect(parseTimestampWithFallbacks(['UnixNs', 'RFC3339'], '2012-11-01T22:08:41Z', { nowNs: NOW })).toBe(ns('2012-11-01T22:08:41Z'));
  });

  it('throws the error of the first format when none parses', () => {
    const err = errorOf(() => parseTimestampWithFallbacks(['RFC3339', 'UnixMs'], 'nope', { nowNs: NOW }));
    expect(err).toBeInstanceOf(TimeParseError);
    expect(err.message).toBe('parsing time "nope" as "2006-01-02T15:04:05Z07:00": cannot parse "nope" as "2006"');
  });
});

describe('validateLocation', () => {
  it.each(['', 'UTC', 'Local', 'America/New_York', 'US/Eastern', 'Etc/GMT+3', 'EST5EDT', 'Europe/Kyiv'])('accepts %j', (name) => {
    expect(() => validateLocation(name)).not.toThrow();
  });

  it.each([
    ['America/Canada', 'unknown time zone America/Canada'],
    ['america/new_york', 'unknown time zone america/new_york'],
    ['+03:00', 'unknown time zone +03:00'],
    ['../etc/passwd', 'time: invalid location name'],
    ['/etc/localtime', 'time: invalid location name'],
  ])('rejects %j', (name, message) => {
    const err = errorOf(() => validateLocation(name));
    expect(err).toBeInstanceOf(UnknownLocationError);
    expect(err.message).toBe(message);
  });
});

describe('compileTimestampFormat', () => {
  it('compiles once and parses many values', () => {
    const parser = compileTimestampFormat('02/Jan/2006:15:04:05 -0700');
    expect(parser.parse('10/Oct/2000:13:55:36 -0700', NOW)).toBe(ns('2000-10-10T20:55:36Z'));
    expect(parser.parse('11/Oct/2000:13:55:36 +0000', NOW)).toBe(ns('2000-10-11T13:55:36Z'));
  });

  it('validates the location when compiling', () => {
    expect(() => compileTimestampFormat('RFC3339', 'Nowhere/Special')).toThrow(UnknownLocationError);
  });
});

// ---------------------------------------------------------------------------------------------
// The reference's conformance cases for stage.timestamp, checked at the parsing level.

interface ConformanceEntry {
  readonly labels: Record<string, string>;
  readonly line: string;
  readonly timestamp: string;
  readonly extracted?: Record<string, unknown>;
}

interface ConformanceCase {
  readonly name: string;
  readonly config: string;
  readonly input: ConformanceEntry[];
  readonly expected: { timestamp?: string }[] | { error: string };
  readonly now?: string;
}

const cases = JSON.parse(readFileSync(new URL('./fixtures/timestamp.json', import.meta.url), 'utf8')) as ConformanceCase[];

function attribute(config: string, name: string): string | undefined {
  return new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`).exec(config)?.[1];
}

function timestampBlock(config: string): string {
  return config.slice(config.indexOf('stage.timestamp'));
}

/** The value the stage would read: from `extracted`, or from a preceding stage.json expression. */
function sourceValue(c: ConformanceCase, entry: ConformanceEntry, source: string): unknown {
  if (entry.extracted !== undefined && source in entry.extracted) return entry.extracted[source];
  const expr = new RegExp(`\\b${source}\\s*=\\s*"([^"]*)"`).exec(c.config.slice(0, c.config.indexOf('stage.timestamp')));
  if (expr === null) return undefined;
  try {
    return (JSON.parse(entry.line) as Record<string, unknown>)[expr[1]!];
  } catch {
    return undefined;
  }
}

describe('conformance: stage.timestamp values', () => {
  let checked = 0;
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const block = timestampBlock(c.config);
    const format = attribute(block, 'format');
    const location = attribute(block, 'location');
    const source = attribute(block, 'source');
    if (!Array.isArray(c.expected)) {
      // Invalid configs: the parsing library's share is rejecting unknown locations.
      if (location !== undefined) {
        expect(() => validateLocation(location)).toThrow(UnknownLocationError);
        checked++;
      }
      return;
    }
    const fallbacks = [...(/fallback_formats\s*=\s*\[([^\]]*)\]/.exec(block)?.[1] ?? '').matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
    const nowNs = c.now === undefined ? NOW : ns(c.now);
    const nowYear = new Date(Number(nowNs / 1_000_000n)).getUTCFullYear();
    const lastParsed = new Map<string, bigint>();
    c.input.forEach((entry, i) => {
      const value = source === undefined ? undefined : sourceValue(c, entry, source);
      if (typeof value !== 'string') return;
      const parsed = parseTimestampWithFallbacks([format!, ...fallbacks], value, { location, nowNs });
      const stream = JSON.stringify(entry.labels);
      const duplicate = lastParsed.get(stream) === parsed;
      lastParsed.set(stream, parsed);
      const expected = (c.expected as { timestamp?: string }[])[i]?.timestamp;
      // A repeated instant is fudged by the stage (+1 ns), which is not the parser's business.
      if (expected === undefined || duplicate) return;
      expect(parsed).toBe(ns(expected.replace('YYYY', String(nowYear))));
      checked++;
    });
  });

  it('checked the parse of every conformance value', () => {
    expect(checked).toBeGreaterThanOrEqual(35);
  });
});
