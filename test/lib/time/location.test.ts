import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import { describe, expect, it } from 'vitest';
import {
  dateInLocation,
  epochSecondsFromWall,
  fixedZone,
  isKnownZoneName,
  loadLocation,
  localLocation,
  refreshLocalLocation,
  UnknownLocationError,
  UTC,
} from '../../../lib/time/location.js';

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 100);

const sec = (iso: string): number => Date.parse(iso) / 1000;

const ZONES = [
  'America/New_York',
  'Europe/Berlin',
  'Europe/Istanbul',
  'Asia/Kolkata',
  'Australia/Sydney',
  'Australia/Lord_Howe',
  'America/Sao_Paulo',
  'Pacific/Chatham',
  'Africa/Casablanca',
  'Europe/Dublin',
];

describe('loadLocation', () => {
  it('reads the empty name and UTC as UTC, as Go does', () => {
    expect(loadLocation('')).toBe(UTC);
    expect(loadLocation('UTC')).toBe(UTC);
  });

  it('loads IANA zones, including backward-compatible links', () => {
    expect(loadLocation('America/New_York').name).toBe('America/New_York');
    expect(loadLocation('US/Eastern').offsetAt(sec('2024-01-01T00:00:00Z'))).toBe(-18000);
    expect(isKnownZoneName('Asia/Calcutta')).toBe(true);
  });

  it('is case-sensitive, as Go loading zone files is', () => {
    expect(() => loadLocation('europe/berlin')).toThrow(new UnknownLocationError('unknown time zone europe/berlin'));
  });

  it('rejects names that could escape the zone directory', () => {
    expect(() => loadLocation('Europe/../etc')).toThrow('time: invalid location name');
  });
});

describe('localLocation', () => {
  it('is UTC when the process zone is UTC', () => {
    expect(localLocation()).toBe(UTC);
    expect(loadLocation('Local')).toBe(UTC);
  });

  it('follows the TZ environment variable when refreshed', () => {
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'Europe/Berlin';
      // Like Go's time.Local, the zone is read once; a change needs an explicit refresh.
      expect(localLocation()).toBe(UTC);
      const local = refreshLocalLocation();
      expect(localLocation()).toBe(local);
      expect(local.name).toBe('Local');
      expect(local.offsetAt(sec('2024-07-01T00:00:00Z'))).toBe(7200);
      expect(local.abbreviationAt(sec('2024-01-01T00:00:00Z'))).toBe('CET');
      process.env.TZ = '';
      expect(refreshLocalLocation()).toBe(UTC);
    } finally {
      process.env.TZ = saved;
      refreshLocalLocation();
    }
    expect(localLocation()).toBe(UTC);
  });
});

describe('IANA zone offsets and abbreviations', () => {
  it.each([
    ['America/New_York', '2024-07-01T00:00:00Z', -14400, 'EDT'],
    ['America/New_York', '2024-01-01T00:00:00Z', -18000, 'EST'],
    ['America/New_York', '1943-07-01T00:00:00Z', -14400, 'EWT'],
    ['America/New_York', '1945-08-20T00:00:00Z', -14400, 'EPT'],
    ['America/New_York', '1800-01-01T00:00:00Z', -17762, 'LMT'],
    ['Europe/Berlin', '2024-01-01T00:00:00Z', 3600, 'CET'],
    ['Europe/Berlin', '2024-07-01T00:00:00Z', 7200, 'CEST'],
    ['Europe/Istanbul', '2010-07-01T00:00:00Z', 10800, 'EEST'],
    ['Europe/Istanbul', '2024-07-01T00:00:00Z', 10800, '+03'],
    ['Europe/London', '2024-01-01T00:00:00Z', 0, 'GMT'],
    ['Europe/London', '2024-07-01T00:00:00Z', 3600, 'BST'],
    ['Europe/Dublin', '2024-07-01T00:00:00Z', 3600, 'IST'],
    ['Australia/Sydney', '2024-01-01T00:00:00Z', 39600, 'AEDT'],
    ['Australia/Sydney', '2024-07-01T00:00:00Z', 36000, 'AEST'],
    ['Asia/Kolkata', '2024-07-01T00:00:00Z', 19800, 'IST'],
    ['Asia/Tokyo', '2024-07-01T00:00:00Z', 32400, 'JST'],
    ['Pacific/Chatham', '2024-07-01T00:00:00Z', 45900, '+1245'],
    ['Etc/GMT+3', '2024-07-01T00:00:00Z', -10800, '-03'],
    ['Etc/UTC', '2024-07-01T00:00:00Z', 0, 'UTC'],
  ])('%s at %s is %d seconds east, %s', (zone, at, offset, abbreviation) => {
    const loc = loadLocation(zone);
    expect(loc.offsetAt(sec(at))).toBe(offset);
    expect(loc.abbreviationAt(sec(at))).toBe(abbreviation);
  });

  it('switches offset exactly at the transition second', () => {
    const ny = loadLocation('America/New_York');
    const transition = sec('2024-03-10T07:00:00Z');
    expect([ny.offsetAt(transition - 1), ny.offsetAt(transition), ny.offsetAt(transition - 1)]).toEqual([-18000, -14400, -18000]);
  });

  it('agrees with Temporal for any instant, in any order of lookups', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.array(fc.integer({ min: -2_500_000_000, max: 4_200_000_000 }), { minLength: 1, maxLength: 8 }),
        (zone, instants) => {
          const loc = loadLocation(zone);
          for (const s of instants) {
            const expected = Temporal.Instant.fromEpochMilliseconds(s * 1000).toZonedDateTimeISO(zone).offsetNanoseconds / 1e9;
            expect(loc.offsetAt(s)).toBe(expected);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('offsetOfAbbreviation (Go lookupName)', () => {
  const ny = loadLocation('America/New_York');

  it('prefers the zone of that name in effect around the instant', () => {
    const moscow = loadLocation('Europe/Moscow');
    // Moscow time was +4 from 2011 to 2014 and +3 before and after.
    expect(moscow.offsetOfAbbreviation('MSK', sec('2012-07-01T00:00:00Z'))).toBe(14400);
    expect(moscow.offsetOfAbbreviation('MSK', sec('2020-07-01T00:00:00Z'))).toBe(10800);
  });

  it('falls back to any zone of that name', () => {
    expect(ny.offsetOfAbbreviation('EST', sec('2024-07-01T00:00:00Z'))).toBe(-18000);
    expect(ny.offsetOfAbbreviation('EDT', sec('2024-01-01T00:00:00Z'))).toBe(-14400);
    expect(ny.offsetOfAbbreviation('LMT', sec('2024-01-01T00:00:00Z'))).toBe(-17762);
  });

  it('knows nothing for names the zone never used, nor for UTC itself', () => {
    expect(ny.offsetOfAbbreviation('CET', sec('2024-01-01T00:00:00Z'))).toBeUndefined();
    expect(UTC.offsetOfAbbreviation('UTC', 0)).toBeUndefined();
  });

  it('knows the name of a fixed zone', () => {
    expect(fixedZone('XYZ', 3600).offsetOfAbbreviation('XYZ', 0)).toBe(3600);
    expect(fixedZone('', 3600).abbreviationAt(0)).toBe('');
  });
});

describe('wall clock to instant (Go time.Date)', () => {
  it.each([
    ['America/New_York', '2024-03-10T02:30:00Z', '2024-03-10T06:30:00Z'],
    ['America/New_York', '2024-11-03T01:30:00Z', '2024-11-03T05:30:00Z'],
    ['Europe/Berlin', '2024-03-31T02:30:00Z', '2024-03-31T01:30:00Z'],
    ['Europe/Berlin', '2024-10-27T02:30:00Z', '2024-10-27T01:30:00Z'],
    ['Asia/Kolkata', '2024-01-01T05:30:00Z', '2024-01-01T00:00:00Z'],
  ])('in %s maps the wall clock %s to %s', (zone, wall, expected) => {
    expect(epochSecondsFromWall(loadLocation(zone), sec(wall))).toBe(sec(expected));
  });

  it('maps the wall clock of any real instant back to the same wall clock', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: -2_500_000_000, max: 4_200_000_000 }), (zone, t) => {
        const loc = loadLocation(zone);
        const wall = t + loc.offsetAt(t);
        const back = epochSecondsFromWall(loc, wall);
        expect(back + loc.offsetAt(back)).toBe(wall);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('normalises out-of-range fields as Go Date does', () => {
    expect(dateInLocation(UTC, 2023, 2, 29, 0, 0, 0, 0).seconds).toBe(sec('2023-03-01T00:00:00Z'));
    expect(dateInLocation(UTC, 2023, 13, 1, 24, 0, 0, 1_500_000_000)).toEqual({
      seconds: sec('2024-01-02T00:00:01Z'),
      nanos: 500_000_000,
    });
    expect(dateInLocation(UTC, 2024, 0, 0, -1, 0, 0, 0).seconds).toBe(sec('2023-11-29T23:00:00Z'));
  });
});
