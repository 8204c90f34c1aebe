import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileLayout,
  formatCompiled,
  formatLayout,
  parseCompiled,
  parseLayout,
  TimeParseError,
  type ParsedTime,
} from '../../../lib/time/layout.js';
import { loadLocation, UTC } from '../../../lib/time/location.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

/** Nanoseconds since the epoch of a UTC wall-clock time (any year, including 0). */
function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, nanos = 0): bigint {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return BigInt(d.getTime()) * 1_000_000n + BigInt(nanos);
}

/** Go's time.Parse with `Local` set to a zone (Go's own tests run with Local = US Pacific). */
function parseWithLocal(layout: string, value: string, local: string): ParsedTime {
  return parseCompiled(compileLayout(layout), value, UTC, loadLocation(local));
}

function parseError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(TimeParseError);
    return (err as Error).message;
  }
  throw new Error('expected a TimeParseError');
}

function fields(t: ParsedTime): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${t.year}-${two(t.month)}-${two(t.day)} ${two(t.hour)}:${two(t.minute)}:${two(t.second)}` +
    `.${String(t.nanosecond).padStart(9, '0')} ${t.offsetSeconds} ${t.location.name}`
  );
}

const ANSIC = 'Mon Jan _2 15:04:05 2006';
const UNIX_DATE = 'Mon Jan _2 15:04:05 MST 2006';
const RUBY_DATE = 'Mon Jan 02 15:04:05 -0700 2006';
const RFC850 = 'Monday, 02-Jan-06 15:04:05 MST';
const RFC1123 = 'Mon, 02 Jan 2006 15:04:05 MST';
const RFC1123Z = 'Mon, 02 Jan 2006 15:04:05 -0700';
const RFC3339 = '2006-01-02T15:04:05Z07:00';
const RFC3339_NANO = '2006-01-02T15:04:05.999999999Z07:00';
const STAMP_NANO = 'Jan _2 15:04:05.000000000';

describe('parseLayout: one chunk at a time', () => {
  it.each([
    ['2006', '2019', utc(2019, 1, 1)],
    ['06', '69', utc(1969, 1, 1)],
    ['06', '68', utc(2068, 1, 1)],
    ['06', '00', utc(2000, 1, 1)],
    ['January', 'march', utc(0, 3, 1)],
    ['Jan', 'SEP', utc(0, 9, 1)],
    ['1', '7', utc(0, 7, 1)],
    ['1', '12', utc(0, 12, 1)],
    ['01', '07', utc(0, 7, 1)],
    ['2', '9', utc(0, 1, 9)],
    ['2', '31', utc(0, 1, 31)],
    ['_2', ' 9', utc(0, 1, 9)],
    ['_2', '19', utc(0, 1, 19)],
    ['02', '09', utc(0, 1, 9)],
    ['2006 002', '2024 060', utc(2024, 2, 29)],
    ['2006 002', '2023 060', utc(2023, 3, 1)],
    ['2006 __2', '2024   7', utc(2024, 1, 7)],
    ['2006 __2', '2024  45', utc(2024, 2, 14)],
    ['15', '23', utc(0, 1, 1, 23)],
    ['15', '7', utc(0, 1, 1, 7)],
    ['3PM', '7PM', utc(0, 1, 1, 19)],
    ['3PM', '12PM', utc(0, 1, 1, 12)],
    ['3PM', '12AM', utc(0, 1, 1, 0)],
    ['03pm', '07pm', utc(0, 1, 1, 19)],
    ['03pm', '11am', utc(0, 1, 1, 11)],
    ['3', '0', utc(0, 1, 1, 0)],
    ['4', '5', utc(0, 1, 1, 0, 5)],
    ['04', '59', utc(0, 1, 1, 0, 59)],
    ['5', '7', utc(0, 1, 1, 0, 0, 7)],
    ['05', '07', utc(0, 1, 1, 0, 0, 7)],
    ['05.000', '07.123', utc(0, 1, 1, 0, 0, 7, 123_000_000)],
    ['05,000', '07.123', utc(0, 1, 1, 0, 0, 7, 123_000_000)],
    ['05.000', '07,123', utc(0, 1, 1, 0, 0, 7, 123_000_000)],
    ['05.000000000', '07.000000001', utc(0, 1, 1, 0, 0, 7, 1)],
    ['05.999', '07', utc(0, 1, 1, 0, 0, 7)],
    ['05.999', '07.5', utc(0, 1, 1, 0, 0, 7, 500_000_000)],
    ['05.999', '07.123456789', utc(0, 1, 1, 0, 0, 7, 123_456_789)],
    ['05.999999999', '07.1234567891', utc(0, 1, 1, 0, 0, 7, 123_456_789)],
    ['Mon 2006', 'sun 2019', utc(2019, 1, 1)],
    ['Monday 2006', 'FRIDAY 2019', utc(2019, 1, 1)],
    ['Jan 2 2006 MST', 'Jun 1 2019 UTC', utc(2019, 6, 1)],
    ['2006 Z07:00', '2019 Z', utc(2019, 1, 1)],
    ['2006 Z07:00', '2019 +01:30', utc(2018, 12, 31, 22, 30)],
    ['2006 Z0700', '2019 -0130', utc(2019, 1, 1, 1, 30)],
    ['2006 Z07', '2019 +03', utc(2018, 12, 31, 21)],
    ['2006 Z070000', '2019 -003408', utc(2019, 1, 1, 0, 34, 8)],
    ['2006 Z07:00:00', '2019 +00:34:08', utc(2018, 12, 31, 23, 25, 52)],
    ['2006 -0700', '2019 +0100', utc(2018, 12, 31, 23)],
    ['2006 -07:00', '2019 -05:00', utc(2019, 1, 1, 5)],
    ['2006 -07', '2019 -05', utc(2019, 1, 1, 5)],
    ['2006 -070000', '2019 +010203', utc(2018, 12, 31, 22, 57, 57)],
    ['2006 -07:00:00', '2019 +01:02:03', utc(2018, 12, 31, 22, 57, 57)],
  ])('parses layout %j from %j', (layout, value, expected) => {
    expect(parseLayout(layout, value, { defaultZone: 'UTC' }).epochNs).toBe(expected);
  });

  it('accepts a fraction after the seconds even when the layout has none', () => {
    expect(parseLayout('2006-01-02 15:04:05', '2010-02-04 21:00:57.012345678').nanosecond).toBe(12_345_678);
    expect(parseLayout('15:04:05 2006', '21:00:57,5 2010').nanosecond).toBe(500_000_000);
    expect(parseLayout(RFC3339, '2010-02-04T21:00:57.0123456789999-08:00').epochNs).toBe(utc(2010, 2, 5, 5, 0, 57, 12_345_678));
  });

  it('treats a run of spaces in the layout as any run of spaces in the value', () => {
    const expected = utc(2010, 2, 4, 21, 0, 57);
    expect(parseLayout(ANSIC, 'Thu Feb 4 21:00:57 2010').epochNs).toBe(expected);
    expect(parseLayout(ANSIC, 'Thu      Feb     4     21:00:57     2010').epochNs).toBe(expected);
    expect(parseLayout('2006 ', '2010').epochNs).toBe(utc(2010, 1, 1));
  });

  it('matches month and weekday names case-insensitively', () => {
    const expected = utc(2010, 2, 4, 21, 0, 57);
    expect(parseLayout(ANSIC, 'THU FEB 4 21:00:57 2010').epochNs).toBe(expected);
    expect(parseLayout(ANSIC, 'thu feb 4 21:00:57 2010').epochNs).toBe(expected);
  });

  it('checks the weekday only for its spelling', () => {
    expect(parseLayout(ANSIC, 'Sun Feb  4 21:00:57 2010').epochNs).toBe(utc(2010, 2, 4, 21, 0, 57));
  });

  it('reads a day of year against the parsed year', () => {
    for (let i = 1; i <= 366; i++) {
      const t = parseLayout('2006-002', `2020-${String(i).padStart(3, '0')}`);
      expect(t.epochNs).toBe(utc(2020, 1, i));
    }
  });

  it('reads _2006 as an underscore and the year', () => {
    expect(parseLayout('15:04_20060102', '14:38_20150618').epochNs).toBe(utc(2015, 6, 18, 14, 38));
  });

  it('reads the two-digit year through Go atoi, signs included', () => {
    expect(parseLayout('06', '+9').year).toBe(2009);
    expect(parseLayout('06', '-1').year).toBe(1999);
  });

  it('reports which fields the parse found and whether the layout had a year', () => {
    const t = parseLayout('Jan _2 15:04:05.000', 'Feb 29 23:59:58.250');
    expect(fields(t)).toBe('0-02-29 23:59:58.250000000 0 UTC');
    expect(t.hadYear).toBe(false);
    expect(parseLayout('06', '24').hadYear).toBe(true);
  });
});

describe("parseLayout: Go's own parse table", () => {
  // Each value denotes Thu Feb 4 21:00:57 PST 2010 (Go parses these with Local = US Pacific).
  const cases: [string, string, number, boolean][] = [
    [ANSIC, 'Thu Feb  4 21:00:57 2010', 0, false],
    [UNIX_DATE, 'Thu Feb  4 21:00:57 PST 2010', 0, true],
    [RUBY_DATE, 'Thu Feb 04 21:00:57 -0800 2010', 0, true],
    [RFC850, 'Thursday, 04-Feb-10 21:00:57 PST', 0, true],
    [RFC1123, 'Thu, 04 Feb 2010 21:00:57 PST', 0, true],
    [RFC1123, 'Thu, 04 Feb 2010 22:00:57 PDT', 0, true],
    [RFC1123Z, 'Thu, 04 Feb 2010 21:00:57 -0800', 0, true],
    [RFC3339, '2010-02-04T21:00:57-08:00', 0, true],
    ['2006-01-02 15:04:05-07', '2010-02-04 21:00:57-08', 0, true],
    [ANSIC, 'Thu Feb  4 21:00:57.0 2010', 1, false],
    [UNIX_DATE, 'Thu Feb  4 21:00:57.01 PST 2010', 2, true],
    [RUBY_DATE, 'Thu Feb 04 21:00:57.012 -0800 2010', 3, true],
    [RFC850, 'Thursday, 04-Feb-10 21:00:57.0123 PST', 4, true],
    [RFC1123, 'Thu, 04 Feb 2010 21:00:57.01234 PST', 5, true],
    [RFC1123Z, 'Thu, 04 Feb 2010 21:00:57.01234 -0800', 5, true],
    [RFC3339, '2010-02-04T21:00:57.012345678-08:00', 9, true],
    ['Mon Jan _2 15:04:05.000 2006', 'Thu Feb  4 21:00:57.012 2010', 3, false],
    ['Mon Jan _2 15:04:05,000000 2006', 'Thu Feb  4 21:00:57.012345 2010', 6, false],
    ['Mon Jan _2 15:04:05,000000000 2006', 'Thu Feb  4 21:00:57.012345678 2010', 9, false],
    ['2006.01.02.15.04.05.0', '2010.02.04.21.00.57.0', 1, false],
    ['2006.01.02.15.04.05.00', '2010.02.04.21.00.57.01', 2, false],
    ['Hi Janet, the Month is January: Jan _2 15:04:05 2006', 'Hi Janet, the Month is February: Feb  4 21:00:57 2010', 0, false],
    [UNIX_DATE, 'Fri Feb  5 05:00:57 GMT-8 2010', 0, true],
    ['2006-01-02 15:04:05.9999 -0700 MST', '2010-02-04 21:00:57 -0800 PST', 0, true],
    ['2006-01-02 15:04:05.999999999 -0700 MST', '2010-02-04 21:00:57.0123 -0800 PST', 4, true],
    ['2006-01-02 15:04:05,9999 -0700 MST', '2010-02-04 21:00:57.012345678 -0800 PST', 9, true],
    ['2006-01-02 002 15:04:05', '2010-02-04 035 21:00:57', 0, false],
    ['2006-01 002 15:04:05', '2010-02 035 21:00:57', 0, false],
    ['200600201 15:04:05', '201003502 21:00:57', 0, false],
    ['200600204 15:04:05', '201003504 21:00:57', 0, false],
  ];

  it.each(cases)('parses %j from %j', (layout, value, fracDigits, hasZone) => {
    const t = parseWithLocal(layout, value, 'America/Los_Angeles');
    const nanos = Number('012345678'.slice(0, fracDigits).padEnd(9, '0'));
    expect([t.year, t.month, t.day, t.hour, t.minute, t.second, t.nanosecond]).toEqual([2010, 2, 4, 21, 0, 57, nanos]);
    if (hasZone) expect(t.offsetSeconds).toBe(-28800);
  });

  it.each([
    [STAMP_NANO, 'Feb  4 21:00:57.012345678', 9],
    ['Jan _2 15:04:05.999', 'Feb  4 21:00:57.012300000', 4],
    ['Jan _2 15:04:05.999', 'Feb  4 21:00:57.012345678', 9],
    ['Jan _2 15:04:05.999999999', 'Feb  4 21:00:57.0123', 4],
  ])('parses the year-less %j from %j', (layout, value, fracDigits) => {
    const t = parseWithLocal(layout, value, 'America/Los_Angeles');
    const nanos = Number('012345678'.slice(0, fracDigits).padEnd(9, '0'));
    expect([t.year, t.month, t.day, t.hour, t.minute, t.second, t.nanosecond]).toEqual([0, 2, 4, 21, 0, 57, nanos]);
  });

  it.each([
    ['Thu Feb 04 21:00:57 -0000 2010', 0],
    ['Thu Feb 04 21:00:57 +0000 2010', 0],
    ['Thu Feb 04 21:00:57 +1130 2010', 41_400],
    ['Mon Jan 02 15:04:05 +0123 2006', 4980],
  ])('parses the Ruby date %j with offset %d', (value, offset) => {
    expect(parseLayout(RUBY_DATE, value).offsetSeconds).toBe(offset);
  });

  it.each([
    ['2006-01-02T15:04:05-070000', '1871-01-01T05:33:02-003408', -(34 * 60 + 8)],
    ['2006-01-02T15:04:05-07:00:00', '1871-01-01T05:33:02-00:34:08', -(34 * 60 + 8)],
    ['2006-01-02T15:04:05-070000', '1871-01-01T05:33:02+003408', 34 * 60 + 8],
    ['2006-01-02T15:04:05-07:00:00', '1871-01-01T05:33:02+00:34:08', 34 * 60 + 8],
    ['2006-01-02T15:04:05Z070000', '1871-01-01T05:33:02-003408', -(34 * 60 + 8)],
    ['2006-01-02T15:04:05Z07:00:00', '1871-01-01T05:33:02+00:34:08', 34 * 60 + 8],
    ['2006-01-02T15:04:05-07', '1871-01-01T05:33:02+01', 3600],
    ['2006-01-02T15:04:05-07', '1871-01-01T05:33:02-02', -7200],
    ['2006-01-02T15:04:05Z07', '1871-01-01T05:33:02-02', -7200],
  ])('parses %j from %j with a %d-second offset and formats it back', (layout, value, offset) => {
    const t = parseLayout(layout, value);
    expect(t.offsetSeconds).toBe(offset);
    expect(formatCompiled(compileLayout(layout), t.epochNs, t.location)).toBe(value);
  });

  it.each([
    ['Thu Jan 31 21:00:57 2010', true],
    ['Thu Feb 28 21:00:57 2012', true],
    ['Thu Feb 29 21:00:57 2012', true],
    ['Thu Feb 29 21:00:57 2010', false],
    ['Thu Apr 31 21:00:57 2010', false],
    ['Thu Jun 31 21:00:57 2010', false],
    ['Thu Sep 31 21:00:57 2010', false],
    ['Thu Nov 31 21:00:57 2010', false],
    ['Thu Dec 31 21:00:57 2010', true],
    ['Thu Dec 32 21:00:57 2010', false],
    ['Thu Dec 00 21:00:57 2010', false],
    ['Thu Jan 99 21:00:57 2010', false],
  ])('checks the day of %j (valid: %s)', (value, ok) => {
    if (ok) expect(() => parseLayout(ANSIC, value)).not.toThrow();
    else expect(parseError(() => parseLayout(ANSIC, value))).toBe(`parsing time "${value}": day out of range`);
  });
});

describe('parseLayout: errors carry Go messages', () => {
  it.each([
    [
      ANSIC,
      'Feb  4 21:00:60 2010',
      'parsing time "Feb  4 21:00:60 2010" as "Mon Jan _2 15:04:05 2006": cannot parse "Feb  4 21:00:60 2010" as "Mon"',
    ],
    [
      ANSIC,
      'Thu Feb  4 21:00:57 @2010',
      'parsing time "Thu Feb  4 21:00:57 @2010" as "Mon Jan _2 15:04:05 2006": cannot parse "@2010" as "2006"',
    ],
    [ANSIC, 'Thu Feb  4 21:00:60 2010', 'parsing time "Thu Feb  4 21:00:60 2010": second out of range'],
    [ANSIC, 'Thu Feb  4 21:61:57 2010', 'parsing time "Thu Feb  4 21:61:57 2010": minute out of range'],
    [ANSIC, 'Thu Feb  4 24:00:60 2010', 'parsing time "Thu Feb  4 24:00:60 2010": hour out of range'],
    ['3:04PM', '13:00PM', 'parsing time "13:00PM": hour out of range'],
    ['3:04PM', '1:00XM', 'parsing time "1:00XM" as "3:04PM": cannot parse "XM" as "PM"'],
    ['3:04pm', '1:00PM', 'parsing time "1:00PM" as "3:04pm": cannot parse "PM" as "pm"'],
    ['01-02', '13-01', 'parsing time "13-01": month out of range'],
    ['01-02', '00-01', 'parsing time "00-01": month out of range'],
    ['01 MST', '1 MST', 'parsing time "1 MST" as "01 MST": cannot parse "1 MST" as "01"'],
    [
      RFC850,
      'Thursday, 04-Feb-1 21:00:57 PST',
      'parsing time "Thursday, 04-Feb-1 21:00:57 PST" as "Monday, 02-Jan-06 15:04:05 MST": cannot parse "1 21:00:57 PST" as "06"',
    ],
    [
      'Mon Jan _2 15:04:05.000 2006',
      'Thu Feb  4 23:00:59x01 2010',
      'parsing time "Thu Feb  4 23:00:59x01 2010" as "Mon Jan _2 15:04:05.000 2006": cannot parse "x01 2010" as ".000"',
    ],
    [
      'Mon Jan _2 15:04:05.000 2006',
      'Thu Feb  4 23:00:59.xxx 2010',
      'parsing time "Thu Feb  4 23:00:59.xxx 2010" as "Mon Jan _2 15:04:05.000 2006": cannot parse ".xxx 2010" as ".000"',
    ],
    [
      'Mon Jan _2 15:04:05.000 2006',
      'Thu Feb  4 23:00:59.-123 2010',
      'parsing time "Thu Feb  4 23:00:59.-123 2010": fractional second out of range',
    ],
    [
      STAMP_NANO,
      'Dec  7 11:22:01.000000',
      'parsing time "Dec  7 11:22:01.000000" as "Jan _2 15:04:05.000000000": cannot parse ".000000" as ".000000000"',
    ],
    [STAMP_NANO, 'Dec  7 11:22:01.0000000000', 'parsing time "Dec  7 11:22:01.0000000000": extra text: "0"'],
    [RFC3339, '2006-01-02T15:04:05Z07:00', 'parsing time "2006-01-02T15:04:05Z07:00": extra text: "07:00"'],
    [RFC3339, '2006-01-02T15:04_abc', 'parsing time "2006-01-02T15:04_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as ":"'],
    [
      RFC3339,
      '2006-01-02T15:04:05_abc',
      'parsing time "2006-01-02T15:04:05_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as "Z07:00"',
    ],
    [RFC3339, '2006-01-02T15:04:05Z_abc', 'parsing time "2006-01-02T15:04:05Z_abc": extra text: "_abc"'],
    [RFC3339, '2010-02-04T21:00:67.012345678-08:00', 'parsing time "2010-02-04T21:00:67.012345678-08:00": second out of range'],
    [
      RFC3339,
      '2010-02-04t21:00:57Z',
      'parsing time "2010-02-04t21:00:57Z" as "2006-01-02T15:04:05Z07:00": cannot parse "t21:00:57Z" as "T"',
    ],
    [RFC3339, '2010-02-04T21:00:57z', 'parsing time "2010-02-04T21:00:57z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00"'],
    [RFC3339, '2010-02-04T21:00:57+25:00', 'parsing time "2010-02-04T21:00:57+25:00": time zone offset hour out of range'],
    [RFC3339, '2010-02-04T21:00:57+05:61', 'parsing time "2010-02-04T21:00:57+05:61": time zone offset minute out of range'],
    [
      '_2 Jan 06 15:04 MST',
      '4 --- 00 00:00 GMT',
      'parsing time "4 --- 00 00:00 GMT" as "_2 Jan 06 15:04 MST": cannot parse "--- 00 00:00 GMT" as "Jan"',
    ],
    ['Jan _2 002 2006', 'Feb  4 034 2006', 'parsing time "Feb  4 034 2006": day-of-year does not match day'],
    ['Jan _2 002 2006', 'Feb  4 004 2006', 'parsing time "Feb  4 004 2006": day-of-year does not match month'],
    ['2006 002', '2023 366', 'parsing time "2023 366": day-of-year out of range'],
    ['2006-01-02 MST', '2019-01-02 Mst', 'parsing time "2019-01-02 Mst" as "2006-01-02 MST": cannot parse "Mst" as "MST"'],
    ['2006-01-02', '', 'parsing time "" as "2006-01-02": cannot parse "" as "2006"'],
    ['2006-01-02', '2019-1-02', 'parsing time "2019-1-02" as "2006-01-02": cannot parse "1-02" as "01"'],
    ['2006-01-02 ', '2019-01-02x', 'parsing time "2019-01-02x" as "2006-01-02 ": cannot parse "x" as " "'],
    [
      '2006年01月02日',
      '2019年01月2日',
      'parsing time "2019\\xe5\\xb9\\xb401\\xe6\\x9c\\x882\\xe6\\x97\\xa5" as "2006\\xe5\\xb9\\xb401\\xe6\\x9c\\x8802\\xe6\\x97\\xa5": cannot parse "2\\xe6\\x97\\xa5" as "02"',
    ],
    ['2006 "x"', '2019 "y"', 'parsing time "2019 \\"y\\"" as "2006 \\"x\\"": cannot parse "y\\"" as " \\"x\\""'],
  ])('rejects layout %j value %j', (layout, value, message) => {
    expect(parseError(() => parseLayout(layout, value, { defaultZone: 'UTC' }))).toBe(message);
  });

  it('reports the layout and the value on the error', () => {
    try {
      parseLayout('2006', 'x');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ name: 'TimeParseError', layout: '2006', value: 'x' });
    }
  });
});

describe('parseLayout: zones', () => {
  it('reads UTC as UTC whatever the location', () => {
    const t = parseLayout('2006-01-02 15:04 MST', '2019-07-01 12:00 UTC', { location: 'America/New_York' });
    expect(t.epochNs).toBe(utc(2019, 7, 1, 12));
    expect(t.location.name).toBe('UTC');
  });

  it('gives an abbreviation the local zone does not know offset 0 and records it', () => {
    const t = parseLayout(RFC1123, 'Tue, 10 Nov 2009 23:00:00 PST');
    expect(t.epochNs).toBe(utc(2009, 11, 10, 23));
    expect(fields(t)).toBe('2009-11-10 23:00:00.000000000 0 PST');
  });

  it('uses the offset of an abbreviation the location knows', () => {
    expect(parseLayout(RFC1123, 'Tue, 10 Nov 2009 23:00:00 PST', { location: 'America/Los_Angeles' }).epochNs).toBe(utc(2009, 11, 11, 7));
    expect(parseLayout(RFC1123, 'Wed, 01 Jul 2009 12:00:00 CET', { location: 'Europe/Berlin' }).epochNs).toBe(utc(2009, 7, 1, 11));
    expect(parseLayout(RFC1123, 'Wed, 01 Jul 2009 12:00:00 CEST', { location: 'Europe/Berlin' }).epochNs).toBe(utc(2009, 7, 1, 10));
  });

  it('uses an abbreviation the location knows even when it is not in effect then', () => {
    // EST in July, EDT in January: Go falls back to the first zone of that name.
    expect(parseLayout(RFC1123, 'Wed, 01 Jul 2009 12:00:00 EST', { location: 'America/New_York' }).epochNs).toBe(utc(2009, 7, 1, 17));
    const winter = parseLayout(RFC1123, 'Thu, 01 Jan 2009 12:00:00 EDT', { location: 'America/New_York' });
    expect(winter.epochNs).toBe(utc(2009, 1, 1, 16));
    // The result is shown in the location, where 16:00Z in January is 11:00 EST.
    expect(fields(winter)).toBe('2009-01-01 11:00:00.000000000 -18000 America/New_York');
  });

  it('tells the two AST zones apart by location', () => {
    const t = parseLayout('Jan 02 2006 MST', 'Feb 01 2013 AST', { location: 'America/Blanc-Sablon' });
    expect(t.epochNs).toBe(utc(2013, 2, 1, 4));
    expect(t.offsetSeconds).toBe(-14400);
    // Baghdad's zone is named +03 in current tzdata, so AST is unknown there.
    expect(parseLayout('Jan 02 2006 MST', 'Feb 01 2013 AST', { location: 'Asia/Baghdad' }).epochNs).toBe(utc(2013, 2, 1));
  });

  it('keeps the instant of GMT±h and only shifts the recorded wall clock', () => {
    const t = parseLayout(UNIX_DATE, 'Fri Feb  5 05:00:57 GMT-8 2010');
    expect(t.epochNs).toBe(utc(2010, 2, 5, 5, 0, 57));
    expect(fields(t)).toBe('2010-02-04 21:00:57.000000000 -28800 GMT-8');
    expect(parseLayout(UNIX_DATE, 'Fri Feb  5 05:00:57 GMT 2010').epochNs).toBe(utc(2010, 2, 5, 5, 0, 57));
  });

  it('accepts the zone abbreviation shapes of Go parseTimeZone', () => {
    const layout = '2006 MST';
    const ok: [string, string][] = [
      ['2019 ChST', 'ChST'],
      ['2019 MeST', 'MeST'],
      ['2019 WITA', 'WITA'],
      ['2019 ESAST', 'ESAST'],
      ['2019 +03', '+03'],
      ['2019 -11', '-11'],
      ['2019 GMT+12', 'GMT+12'],
    ];
    for (const [value, name] of ok) expect(parseLayout(layout, value).location.name).toBe(name);
    for (const value of ['2019 MSDY', '2019 ESASTT', '2019 ESATY', '2019 +24', '2019 gmt', '2019 AB']) {
      expect(parseError(() => parseLayout(layout, value))).toBe(
        `parsing time "${value}" as "2006 MST": cannot parse "${value.slice(5)}" as "MST"`,
      );
    }
    expect(parseError(() => parseLayout(layout, '2019 GMT-51'))).toBe('parsing time "2019 GMT-51": extra text: "-51"');
  });

  it('matches a bare ±hh abbreviation against the location', () => {
    expect(parseLayout('2006-01-02 MST', '2019-07-01 +03', { location: 'Europe/Istanbul' }).epochNs).toBe(utc(2019, 6, 30, 21));
    expect(parseLayout('2006-01-02 MST', '2019-07-01 +03').epochNs).toBe(utc(2019, 7, 1));
  });

  it('attaches the location when a numeric offset is the one it had then', () => {
    const same = parseLayout('2006-01-02 15:04 -0700', '2019-07-01 12:00 -0400', { location: 'America/New_York' });
    expect(same.location.name).toBe('America/New_York');
    const other = parseLayout('2006-01-02 15:04 -0700', '2019-07-01 12:00 +0200', { location: 'America/New_York' });
    expect(other.epochNs).toBe(utc(2019, 7, 1, 10));
    expect(fields(other)).toBe('2019-07-01 12:00:00.000000000 7200 ');
  });

  it('prefers a numeric offset over the location for the instant', () => {
    expect(parseLayout('2006-01-02 15:04 -0700', '2019-07-01 12:00 +0000', { location: 'Asia/Tokyo' }).epochNs).toBe(utc(2019, 7, 1, 12));
  });

  it('keeps the Go quirk that an offset of exactly -1 second counts as no offset', () => {
    expect(parseLayout('2006-01-02T15:04:05-07:00:00', '2019-01-01T00:00:00-00:00:01').epochNs).toBe(utc(2019, 1, 1));
    expect(parseLayout('2006-01-02T15:04:05-07:00:00', '2019-01-01T00:00:00-00:00:02').epochNs).toBe(utc(2019, 1, 1, 0, 0, 2));
  });

  it('reads a zone-less value in the location', () => {
    expect(parseLayout('2006-01-02 15:04:05', '2009-07-01 03:30:20', { location: 'America/New_York' }).epochNs).toBe(
      utc(2009, 7, 1, 7, 30, 20),
    );
    expect(parseLayout('2006-01-02 15:04:05', '2009-07-01 03:30:20', { location: 'UTC' }).epochNs).toBe(utc(2009, 7, 1, 3, 30, 20));
    expect(parseLayout('2006-01-02 15:04:05', '2009-07-01 03:30:20', { location: '' }).epochNs).toBe(utc(2009, 7, 1, 3, 30, 20));
  });

  it('uses local mean time before a zone had standard time', () => {
    // New York was UTC-4:56:02 until 1883.
    expect(parseLayout('2006-01-02 15:04:05', '1850-01-01 00:00:00', { location: 'America/New_York' }).epochNs).toBe(
      utc(1850, 1, 1, 4, 56, 2),
    );
  });

  it('throws for an unknown location', () => {
    expect(() => parseLayout('2006', '2019', { location: 'America/Canada' })).toThrow('unknown time zone America/Canada');
  });
});

describe('parseLayout: wall times at DST transitions resolve as Go time.Date does', () => {
  const layout = '2006-01-02 15:04:05';
  it.each([
    // Gap, west of UTC: lands before the gap (01:30 EST), unlike Temporal's "compatible".
    ['America/New_York', '2024-03-10 02:30:00', utc(2024, 3, 10, 6, 30), '2024-03-10 01:30:00 EST'],
    // Gap, east of UTC: lands after the gap.
    ['Europe/Berlin', '2024-03-31 02:30:00', utc(2024, 3, 31, 1, 30), '2024-03-31 03:30:00 CEST'],
    // Repeated hour, west of UTC: the first (daylight) instant.
    ['America/New_York', '2024-11-03 01:30:00', utc(2024, 11, 3, 5, 30), '2024-11-03 01:30:00 EDT'],
    // Repeated hour, east of UTC: the second (standard) instant.
    ['Europe/Berlin', '2024-10-27 02:30:00', utc(2024, 10, 27, 1, 30), '2024-10-27 02:30:00 CET'],
    // A 30-minute gap: the +11 guess lands before the transition, so the +10:30 offset applies.
    ['Australia/Lord_Howe', '2024-10-06 02:15:00', utc(2024, 10, 5, 15, 45), '2024-10-06 02:45:00 +11'],
  ])('in %s reads %s', (zone, value, expected, shown) => {
    const t = parseLayout(layout, value, { location: zone });
    expect(t.epochNs).toBe(expected);
    expect(formatLayout(`${layout} MST`, t.epochNs, zone)).toBe(shown);
  });
});

describe('formatLayout', () => {
  // Thu Feb  4 21:00:57.012345600 PST 2009, as in Go's format tests.
  const t = 1233810057012345600n;
  it.each([
    [ANSIC, 'Wed Feb  4 21:00:57 2009'],
    [UNIX_DATE, 'Wed Feb  4 21:00:57 PST 2009'],
    [RUBY_DATE, 'Wed Feb 04 21:00:57 -0800 2009'],
    ['02 Jan 06 15:04 MST', '04 Feb 09 21:00 PST'],
    [RFC850, 'Wednesday, 04-Feb-09 21:00:57 PST'],
    [RFC1123, 'Wed, 04 Feb 2009 21:00:57 PST'],
    [RFC1123Z, 'Wed, 04 Feb 2009 21:00:57 -0800'],
    [RFC3339, '2009-02-04T21:00:57-08:00'],
    [RFC3339_NANO, '2009-02-04T21:00:57.0123456-08:00'],
    ['3:04PM', '9:00PM'],
    ['3pm', '9pm'],
    ['3PM', '9PM'],
    ['06 01 02', '09 02 04'],
    ['Hi Janet, the Month is January', 'Hi Janet, the Month is February'],
    ['Jan _2 15:04:05', 'Feb  4 21:00:57'],
    ['Jan _2 15:04:05.000', 'Feb  4 21:00:57.012'],
    ['Jan _2 15:04:05.000000', 'Feb  4 21:00:57.012345'],
    [STAMP_NANO, 'Feb  4 21:00:57.012345600'],
    ['Jan  2 002 __2 2', 'Feb  4 035  35 4'],
    ['15:04:05,999', '21:00:57,012'],
    ['.9 .99 ,9999999', ' .01 ,0123456'],
    ['Z07:00:00 -07:00:00 Z070000 -070000 Z07 -07 Z0700', '-08:00:00 -08:00:00 -080000 -080000 -08 -08 -0800'],
  ])('formats %j as %j', (layout, expected) => {
    expect(formatLayout(layout, t, 'America/Los_Angeles')).toBe(expected);
  });

  it('formats single-digit fields without padding', () => {
    expect(formatLayout('3:4:5 1/2', utc(2001, 2, 3, 4, 5, 6, 700_000_000))).toBe('4:5:6 2/3');
  });

  it('prints noon as 12PM and midnight as 12AM', () => {
    expect(formatLayout('3:04PM 03:04pm', utc(0, 1, 1, 12))).toBe('12:00PM 12:00pm');
    expect(formatLayout('3:04PM 03:04pm', utc(0, 1, 1, 0))).toBe('12:00AM 12:00am');
  });

  it('prints Z for UTC only in the Z forms', () => {
    expect(formatLayout('Z07:00 Z0700 Z07 Z070000 Z07:00:00 -07:00 MST', utc(2020, 1, 1))).toBe('Z Z Z Z Z +00:00 UTC');
  });

  it('drops trailing zeros and the separator of .999 fractions', () => {
    expect(formatLayout('05.999|05.000|05,999999999', utc(2020, 1, 1, 0, 0, 5))).toBe('05|05.000|05');
    expect(formatLayout('05.999999999', utc(2020, 1, 1, 0, 0, 5, 120_000_000))).toBe('05.12');
  });

  it('prints years outside 1000–9999 as Go does', () => {
    expect(formatLayout('2006.01.02 06', utc(0, 1, 1))).toBe('0000.01.01 00');
    expect(formatLayout('2006.01.02 06', utc(-1, 1, 1))).toBe('-0001.01.01 01');
    expect(formatLayout('2006.01.02 06', utc(12345, 1, 1))).toBe('12345.01.01 45');
  });

  it('prints instants before the epoch', () => {
    expect(formatLayout('2006-01-02T15:04:05.000000000Z07:00', -1n)).toBe('1969-12-31T23:59:59.999999999Z');
  });

  it('prints the zone abbreviation in effect in the location', () => {
    expect(formatLayout('MST', utc(2024, 7, 1), 'America/New_York')).toBe('EDT');
    expect(formatLayout('MST', utc(2024, 1, 1), 'America/New_York')).toBe('EST');
    expect(formatLayout('MST', utc(1943, 7, 1), 'America/New_York')).toBe('EWT');
    expect(formatLayout('MST', utc(2010, 7, 1), 'Europe/Istanbul')).toBe('EEST');
    expect(formatLayout('MST', utc(2024, 7, 1), 'Europe/Istanbul')).toBe('+03');
    expect(formatLayout('MST -07:00:00', utc(1800, 1, 1), 'America/New_York')).toBe('LMT -04:56:02');
    expect(formatLayout('MST', utc(2024, 7, 1), 'Local')).toBe('UTC');
  });

  it('prints a nameless fixed zone as a numeric offset for MST', () => {
    const t = parseLayout(RUBY_DATE, 'Thu Feb 02 16:10:03 -0500 2006');
    expect(formatCompiled(compileLayout(UNIX_DATE), t.epochNs, t.location)).toBe('Thu Feb  2 16:10:03 -0500 2006');
  });

  it('keeps the Go quirk for offsets under a minute west: the sign is lost, the seconds keep it', () => {
    // Go truncates to whole minutes toward zero (0 → "+") and prints the raw seconds remainder.
    const t = parseLayout('2006 -07:00:00', '2000 -00:00:30');
    expect(formatCompiled(compileLayout('-0700 -07:00:00'), t.epochNs, t.location)).toBe('+0000 +00:00:-30');
  });
});

const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/Berlin',
  'Asia/Kolkata',
  'Australia/Sydney',
  'America/Sao_Paulo',
  'Asia/Tokyo',
  'Europe/London',
  'Pacific/Chatham',
  'America/St_Johns',
];

/** Zones whose abbreviations Go's parseTimeZone accepts (Chatham's are `+1245`, St John's' `NST`). */
const ZONES_WITH_PARSEABLE_NAMES = ZONES.filter((z) => z !== 'Pacific/Chatham');

const YEAR_1970 = 0n;
const YEAR_2069 = utc(2069, 1, 1);
const YEAR_2101 = utc(2101, 1, 1);

interface LayoutParts {
  readonly layout: string;
  readonly fractionDigits: number;
  readonly zone: 'none' | 'numeric' | 'hours' | 'name';
  readonly twoDigitYear: boolean;
}

const layoutArb: fc.Arbitrary<LayoutParts> = fc
  .record({
    year: fc.constantFrom('06', '2006'),
    month: fc.constantFrom('1', '01', 'Jan', 'January'),
    day: fc.constantFrom('2', '02', '_2'),
    weekday: fc.constantFrom('', 'Mon ', 'Monday, '),
    hour: fc.constantFrom('3', '03', '15'),
    period: fc.constantFrom('PM', 'pm'),
    minute: fc.constantFrom('4', '04'),
    second: fc.constantFrom('5', '05'),
    fraction: fc.constantFrom('', '.000', '.000000', '.000000000', '.999', '.999999', '.999999999', ',000'),
    zone: fc.constantFrom('', 'MST', '-0700', '-07:00', '-070000', '-07:00:00', '-07', 'Z0700', 'Z07:00', 'Z070000', 'Z07:00:00', 'Z07'),
    dateOrder: fc.boolean(),
  })
  .map((p) => {
    const date = p.dateOrder ? `${p.year}-${p.month}-${p.day}` : `${p.day}/${p.month}/${p.year}`;
    const twelve = p.hour !== '15';
    const time = `${p.hour}:${p.minute}:${p.second}${p.fraction}${twelve ? ' ' + p.period : ''}`;
    const layout = `${p.weekday}${date} ${time}${p.zone === '' ? '' : ' ' + p.zone}`;
    const zone = p.zone === '' ? 'none' : p.zone === 'MST' ? 'name' : p.zone.endsWith('07') ? 'hours' : 'numeric';
    return {
      layout,
      fractionDigits: p.fraction === '' ? 0 : p.fraction.length - 1,
      zone,
      twoDigitYear: p.year === '06',
    } satisfies LayoutParts;
  });

function truncate(t: bigint, fractionDigits: number): bigint {
  const unit = 10n ** BigInt(9 - fractionDigits);
  const r = ((t % unit) + unit) % unit;
  return t - r;
}

describe('parseLayout and formatLayout: properties', () => {
  it('parses back what it formats, to the precision of a complete layout', () => {
    fc.assert(
      fc.property(layoutArb, fc.constantFrom(...ZONES), fc.bigInt({ min: YEAR_1970, max: YEAR_2101 - 1n }), (parts, zone, t0) => {
        // Two-digit years only cover 1969–2068.
        const t = parts.twoDigitYear ? t0 % YEAR_2069 : t0;
        if (parts.zone === 'name' && !ZONES_WITH_PARSEABLE_NAMES.includes(zone)) return;
        const offset = loadLocation(zone).offsetAt(Number(t / 1_000_000_000n));
        // An hours-only offset cannot carry a zone like -03:30.
        if (parts.zone === 'hours' && offset % 3600 !== 0) return;
        const text = formatLayout(parts.layout, t, zone);
        const parsed = parseLayout(parts.layout, text, { location: zone });
        // The wall clock always survives; the instant does when the layout pins it down
        // (a zone-less layout is ambiguous in the repeated hour of a DST change).
        expect(formatLayout(parts.layout, parsed.epochNs, zone)).toBe(text);
        if (parts.zone !== 'none') expect(parsed.epochNs).toBe(truncate(t, parts.fractionDigits));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('round-trips every shorthand layout formatted in UTC', () => {
    const shorthands: [string, number][] = [
      [ANSIC, 0],
      [UNIX_DATE, 0],
      [RUBY_DATE, 0],
      ['02 Jan 06 15:04 MST', -2],
      ['02 Jan 06 15:04 -0700', -2],
      [RFC850, 0],
      [RFC1123, 0],
      [RFC1123Z, 0],
      [RFC3339, 0],
      [RFC3339_NANO, 9],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...shorthands), fc.bigInt({ min: YEAR_1970, max: YEAR_2069 - 1n }), ([layout, digits], t) => {
        const text = formatLayout(layout, t);
        const parsed = parseLayout(layout, text).epochNs;
        // RFC822 has minutes only: a negative digit count truncates to minutes.
        const expected = digits >= 0 ? truncate(t, digits) : t - (((t % 60_000_000_000n) + 60_000_000_000n) % 60_000_000_000n);
        expect(parsed).toBe(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('round-trips the shorthands with numeric zones in any location', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(RUBY_DATE, RFC1123Z, RFC3339, RFC3339_NANO),
        fc.constantFrom(...ZONES),
        fc.bigInt({ min: YEAR_1970, max: YEAR_2101 - 1n }),
        (layout, zone, t) => {
          const parsed = parseLayout(layout, formatLayout(layout, t, zone)).epochNs;
          expect(parsed).toBe(truncate(t, layout === RFC3339_NANO ? 9 : 0));
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('never throws anything but TimeParseError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.constantFrom(ANSIC, RFC3339, RFC1123, 'Jan _2 15:04:05.000', '2006 002 3PM Z07'), fc.string(), (layout, value) => {
        try {
          parseLayout(layout, value);
        } catch (err) {
          expect(err).toBeInstanceOf(TimeParseError);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
