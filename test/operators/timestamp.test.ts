import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../core/entry.js';
import { compileTimestampFormat } from '../../lib/time/index.js';
import { formatRFC3339Nano, parseRFC3339 } from '../../lib/time/rfc3339.js';
import { stringify } from '../../lib/go/values.js';
import { timestamp, TIMESTAMP_STREAMS_REMEMBERED } from '../../operators/timestamp.js';
import { entry, runConfig } from '../support/run-stages.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);
const ns = (rfc3339: string): bigint => parseRFC3339(rfc3339);
/** The timestamp every test entry arrives with. */
const INCOMING = ns('2000-01-01T00:00:00Z');

/** A stage.timestamp block reading `ts`, with extra attributes as config lines. */
function stage(format: string, ...extra: string[]): string {
  return ['stage.timestamp {', '  source = "ts"', `  format = ${JSON.stringify(format)}`, ...extra.map((l) => `  ${l}`), '}'].join('\n');
}

/** An entry whose `ts` is `value` (omitted when undefined). */
function withTs(value: unknown, labels: Record<string, string> = {}): Entry {
  return entry('line', labels, { timestamp: INCOMING, extracted: value === undefined ? {} : { ts: value } });
}

/** Runs the entries and returns their timestamps as RFC 3339 text (Go's RFC3339Nano form). */
function stamps(config: string, inputs: readonly Entry[], startNs?: bigint): string[] {
  return runConfig(config, inputs, { startNs }).entries.map((e) => formatRFC3339Nano(e.timestamp).replace(/\.?0+Z$/, 'Z'));
}

describe('stage.timestamp: parsing', () => {
  it('sets the timestamp from a Go layout, a shorthand and each Unix format', () => {
    expect(stamps(stage('2006-01-02 15:04:05.000'), [withTs('2019-07-22 20:29:32.123')])).toEqual(['2019-07-22T20:29:32.123Z']);
    expect(stamps(stage('RFC1123Z'), [withTs('Mon, 22 Jul 2019 20:29:32 -0400')])).toEqual(['2019-07-23T00:29:32Z']);
    expect(stamps(stage('Unix'), [withTs('1562708916.5')])).toEqual(['2019-07-09T21:48:36.5Z']);
    expect(stamps(stage('UnixMs'), [withTs('1562708916414')])).toEqual(['2019-07-09T21:48:36.414Z']);
    expect(stamps(stage('UnixUs'), [withTs('1562708916414123')])).toEqual(['2019-07-09T21:48:36.414123Z']);
    expect(stamps(stage('UnixNs'), [withTs('1562708916000000123')])).toEqual(['2019-07-09T21:48:36.000000123Z']);
  });

  it('adds the fraction to the seconds in Unix format, so -1.5 is half a second before the epoch', () => {
    expect(stamps(stage('Unix'), [withTs('-1.5')])).toEqual(['1969-12-31T23:59:59.5Z']);
  });

  it('reads numbers and booleans as their Go text', () => {
    expect(stamps(stage('Unix'), [withTs(1562708916.25)])).toEqual(['2019-07-09T21:48:36.25Z']);
    expect(stamps(stage('UnixMs'), [withTs(1562708916414)])).toEqual(['2019-07-09T21:48:36.414Z']);
  });

  it('accepts a fraction right after the seconds although the layout has none', () => {
    expect(stamps(stage('2006-01-02 15:04:05'), [withTs('2019-07-22 20:29:32.5')])).toEqual(['2019-07-22T20:29:32.5Z']);
  });

  it('interprets custom layouts in the location, which shorthands and Unix formats ignore', () => {
    const ny = 'location = "America/New_York"';
    expect(stamps(stage('2006-01-02 15:04:05', ny), [withTs('2019-07-22 20:29:32')])).toEqual(['2019-07-23T00:29:32Z']);
    expect(stamps(stage('2006-01-02 15:04:05 -0700', ny), [withTs('2019-07-22 20:29:32 +0100')])).toEqual(['2019-07-22T19:29:32Z']);
    expect(stamps(stage('ANSIC', ny), [withTs('Mon Jul 22 20:29:32 2019')])).toEqual(['2019-07-22T20:29:32Z']);
    expect(stamps(stage('Unix', ny), [withTs('0')])).toEqual(['1970-01-01T00:00:00Z']);
  });

  it('reads an explicitly empty location as UTC', () => {
    expect(stamps(stage('2006-01-02 15:04:05', 'location = ""'), [withTs('2019-07-22 20:29:32')])).toEqual(['2019-07-22T20:29:32Z']);
  });

  it('tries fallback formats in order and takes the first that parses', () => {
    const config = stage('UnixMs', 'fallback_formats = ["2006-01-02", "RFC3339", "2006-01-02T15"]');
    expect(stamps(config, [withTs('2012-11-01T22:08:41-04:00'), withTs('2012-11-01'), withTs('2012-11-01T22'), withTs('1000')])).toEqual([
      '2012-11-02T02:08:41Z',
      '2012-11-01T00:00:00Z',
      '2012-11-01T22:00:00Z',
      '1970-01-01T00:00:01Z',
    ]);
  });

  it('gives a layout without a year the year of the stage clock, with the New Year rule', () => {
    const config = stage('Jan 02 15:04:05');
    expect(stamps(config, [withTs('Jul 15 01:02:03'), withTs('Dec 31 23:59:59')], ns('2019-07-14T00:00:00Z'))).toEqual([
      '2019-07-15T01:02:03Z',
      '2019-12-31T23:59:59Z',
    ]);
    expect(stamps(config, [withTs('Dec 31 23:59:59'), withTs('Jan 02 00:00:00')], ns('2019-01-01T00:00:00Z'))).toEqual([
      '2018-12-31T23:59:59Z',
      '2019-01-02T00:00:00Z',
    ]);
    expect(stamps(config, [withTs('Jan 01 01:02:03'), withTs('Dec 01 00:00:00')], ns('2018-12-31T23:59:59Z'))).toEqual([
      '2019-01-01T01:02:03Z',
      '2018-12-01T00:00:00Z',
    ]);
  });

  it('moves 29 February to 1 March in a non-leap year', () => {
    expect(stamps(stage('Jan 02 15:04:05'), [withTs('Feb 29 10:00:00')], ns('2019-06-01T00:00:00Z'))).toEqual(['2019-03-01T10:00:00Z']);
  });

  it('takes the zone offset of the final date for a layout without a year', () => {
    const config = stage('Jan 02 15:04:05', 'location = "America/New_York"');
    expect(stamps(config, [withTs('Jul 15 01:02:03'), withTs('Jan 15 01:02:03')], ns('2019-07-14T00:00:00Z'))).toEqual([
      '2019-07-15T05:02:03Z',
      '2019-01-15T06:02:03Z',
    ]);
  });
});

describe('stage.timestamp: failures', () => {
  it('keeps the incoming timestamp on failure when the stream has no earlier timestamp', () => {
    const inputs = [withTs(undefined), withTs(null), withTs(['x']), withTs('garbage')];
    expect(stamps(stage('RFC3339'), inputs)).toEqual(Array(4).fill('2000-01-01T00:00:00Z'));
  });

  it('fudges a failure to 1 ns after the stream’s last output, and keeps counting', () => {
    const inputs = [withTs('2019-10-01T01:02:03.4Z'), withTs('bad'), withTs(null), withTs(undefined)];
    expect(stamps(stage('RFC3339Nano'), inputs)).toEqual([
      '2019-10-01T01:02:03.4Z',
      '2019-10-01T01:02:03.400000001Z',
      '2019-10-01T01:02:03.400000002Z',
      '2019-10-01T01:02:03.400000003Z',
    ]);
  });

  it('reads an empty action_on_failure as fudge', () => {
    const inputs = [withTs('2019-10-01T01:02:03.4Z'), withTs('bad')];
    expect(stamps(stage('RFC3339Nano', 'action_on_failure = ""'), inputs)[1]).toBe('2019-10-01T01:02:03.400000001Z');
  });

  it('leaves the timestamp alone on failure with skip', () => {
    const inputs = [withTs('2019-10-01T01:02:03.4Z'), withTs('bad')];
    expect(stamps(stage('RFC3339Nano', 'action_on_failure = "skip"'), inputs)).toEqual(['2019-10-01T01:02:03.4Z', '2000-01-01T00:00:00Z']);
  });

  it('keeps one history per label set, read at the time the stage runs', () => {
    const config = `stage.static_labels {\n  values = { extra = "1" }\n}\n${stage('RFC3339Nano')}`;
    const inputs = [
      withTs('2019-10-01T01:02:03.4Z', { f: 'a' }),
      withTs('2019-10-01T01:02:03.8Z', { f: 'b' }),
      withTs('x', { f: 'b' }),
      withTs('x', { f: 'a' }),
    ];
    expect(stamps(config, inputs)).toEqual([
      '2019-10-01T01:02:03.4Z',
      '2019-10-01T01:02:03.8Z',
      '2019-10-01T01:02:03.800000001Z',
      '2019-10-01T01:02:03.400000001Z',
    ]);
    // The stream key includes the label added before the stage: a plain {f="a"} stream is new.
    const keyed = `${stage('RFC3339Nano')}\nstage.static_labels {\n  values = { extra = "1" }\n}`;
    expect(stamps(keyed, [withTs('2019-10-01T01:02:03.4Z', { f: 'a' }), withTs('x', { f: 'a', extra: '1' })])[1]).toBe(
      '2000-01-01T00:00:00Z',
    );
  });

  it('forgets the least recently used stream beyond 10 000 streams', () => {
    const first = withTs('2019-10-01T01:02:03Z', { s: 'first' });
    const second = withTs('2019-10-01T01:02:03Z', { s: 'second' });
    const others = Array.from({ length: TIMESTAMP_STREAMS_REMEMBERED - 2 }, (_, i) => withTs('2019-10-01T01:02:03Z', { s: String(i) }));
    // `first` is used again before the 10 001st stream arrives, so `second` is the one forgotten.
    const inputs = [
      first,
      second,
      ...others,
      withTs('x', { s: 'first' }),
      withTs('2019-10-01T01:02:03Z', { s: 'new' }),
      withTs('x', { s: 'second' }),
      withTs('x', { s: 'first' }),
    ];
    const out = stamps(stage('RFC3339'), inputs);
    expect(out.slice(-4)).toEqual([
      '2019-10-01T01:02:03.000000001Z',
      '2019-10-01T01:02:03Z',
      '2000-01-01T00:00:00Z',
      '2019-10-01T01:02:03.000000002Z',
    ]);
  });
});

describe('stage.timestamp: duplicate timestamps', () => {
  const t1 = '2019-10-01T01:02:03.4Z';
  const t2 = '2019-10-01T01:02:03.5Z';

  it('fudges consecutive duplicates by default and only consecutive ones', () => {
    expect(stamps(stage('RFC3339Nano'), [withTs(t1), withTs(t1), withTs(t1), withTs(t2), withTs(t1)])).toEqual([
      '2019-10-01T01:02:03.4Z',
      '2019-10-01T01:02:03.400000001Z',
      '2019-10-01T01:02:03.400000002Z',
      '2019-10-01T01:02:03.5Z',
      '2019-10-01T01:02:03.4Z',
    ]);
  });

  it('counts on from the last output when a failure came between two duplicates', () => {
    expect(stamps(stage('RFC3339Nano'), [withTs(t1), withTs('bad'), withTs(t1)])).toEqual([
      '2019-10-01T01:02:03.4Z',
      '2019-10-01T01:02:03.400000001Z',
      '2019-10-01T01:02:03.400000002Z',
    ]);
  });

  it('keeps duplicates with keep, and still fudges them with action_on_failure = skip', () => {
    expect(stamps(stage('RFC3339Nano', 'action_on_duplicate_timestamp = "keep"'), [withTs(t1), withTs(t1)])).toEqual([
      '2019-10-01T01:02:03.4Z',
      '2019-10-01T01:02:03.4Z',
    ]);
    expect(stamps(stage('RFC3339Nano', 'action_on_failure = "skip"'), [withTs(t1), withTs('bad'), withTs(t1)])).toEqual([
      '2019-10-01T01:02:03.4Z',
      '2000-01-01T00:00:00Z',
      '2019-10-01T01:02:03.400000001Z',
    ]);
  });

  it('compares duplicates per stream', () => {
    expect(stamps(stage('RFC3339Nano'), [withTs(t1, { s: 'a' }), withTs(t1, { s: 'b' }), withTs(t1, { s: 'a' })])).toEqual([
      '2019-10-01T01:02:03.4Z',
      '2019-10-01T01:02:03.4Z',
      '2019-10-01T01:02:03.400000001Z',
    ]);
  });
});

describe('stage.timestamp: configuration', () => {
  it('reports configuration errors with the reference texts', () => {
    expect(() => runConfig('stage.timestamp {\n  source = ""\n  format = "RFC3339"\n}', [])).toThrow(
      'test.alloy:2:3: stage.timestamp: timestamp source value is required if timestamp is specified',
    );
    expect(() => runConfig('stage.timestamp {\n  source = "ts"\n  format = ""\n}', [])).toThrow(
      'test.alloy:3:3: stage.timestamp: timestamp format is required',
    );
    expect(() => runConfig(stage('2006-01-02', 'location = "America/Canada"'), [])).toThrow(
      'test.alloy:4:3: stage.timestamp: invalid location specified: %v: unknown time zone America/Canada',
    );
    expect(() => runConfig(stage('RFC3339', 'action_on_failure = "foo"'), [])).toThrow(
      'test.alloy:4:3: stage.timestamp: invalid action on failure (supported values are [skip fudge])',
    );
    expect(() => runConfig(stage('RFC3339', 'action_on_duplicate_timestamp = "drop"'), [])).toThrow(
      'test.alloy:4:3: stage.timestamp: invalid action on duplicate timestamp (supported values are [keep fudge])',
    );
    expect(() => runConfig('stage.timestamp {\n  source = "ts"\n}', [])).toThrow(
      'test.alloy:1:1: stage.timestamp: missing required attribute "format"',
    );
    expect(() => timestamp({ source: 'ts', format: 'RFC3339', location: 'Mars/Base' })).toThrow(
      'stage.timestamp: invalid location specified: %v: unknown time zone Mars/Base',
    );
  });
});

describe('stage.timestamp: properties', () => {
  const valid = fc.integer({ min: 0, max: 4_000_000_000 }).map((s) => formatRFC3339Nano(BigInt(s) * 1_000_000_000n));
  const value = fc.oneof(valid, fc.string({ maxLength: 25 }), fc.constant(null), fc.constant(undefined), fc.integer());
  const rfc3339 = compileTimestampFormat('RFC3339');
  const fails = (v: unknown): boolean => {
    const text = stringify(v);
    if (text === undefined) return true;
    try {
      rfc3339.parse(text, 0n);
      return false;
    } catch {
      return true;
    }
  };
  const streamLabels = fc.constantFrom<Record<string, string>>({ s: 'a' }, { s: 'b' }, { s: 'c', t: 'x' });
  const inputs = fc.array(fc.tuple(value, streamLabels), { minLength: 1, maxLength: 30 });

  it('with skip never changes the timestamp of an entry that fails to parse (property)', () => {
    fc.assert(
      fc.property(inputs, (items) => {
        const out = runConfig(
          stage('RFC3339', 'action_on_failure = "skip"'),
          items.map(([v, labels]) => withTs(v, labels)),
        ).entries;
        items.forEach(([v], i) => {
          if (fails(v)) expect(out[i]!.timestamp).toBe(INCOMING);
        });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('with fudge gives each failure 1 ns after the previous output of its stream, once the stream has one (property)', () => {
    fc.assert(
      fc.property(inputs, (items) => {
        const out = runConfig(
          stage('RFC3339'),
          items.map(([v, labels]) => withTs(v, labels)),
        ).entries;
        const lastOutput = new Map<string, bigint>();
        items.forEach(([v, labels], i) => {
          const key = JSON.stringify(labels);
          const got = out[i]!.timestamp;
          const previous = lastOutput.get(key);
          if (fails(v)) {
            if (previous === undefined) expect(got).toBe(INCOMING);
            else {
              expect(got).toBe(previous + 1n);
              lastOutput.set(key, got);
            }
          } else {
            lastOutput.set(key, got);
          }
        });
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
